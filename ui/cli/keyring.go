package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/mountmgr/keyring"
	"github.com/vaultui/vaultui/vault"
)

func init() { registerCommand(forgetPasswordCommand) }

// keyringLabel is what keyring managers list for a vault's password.
func keyringLabel(entry vault.Entry) string {
	return fmt.Sprintf("vaultui: %s (%s)", displayName(entry), entry.CipherDir)
}

// keyringStatus says in a few words whether a password is stored for the vault, for info.
func keyringStatus(ctx context.Context, cipherDir string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	k, err := keyring.Open(ctx, keyring.Options{CallTimeout: 2 * time.Second})
	if err != nil {
		return "unavailable (" + err.Error() + ")"
	}
	defer k.Close()
	has, err := k.Has(ctx, cipherDir)
	switch {
	case err != nil:
		return "unavailable (" + err.Error() + ")"
	case has:
		return "password stored (vaultui mount uses it; vaultui forget-password removes it)"
	}
	return "no password stored"
}

// mountWithKeyring gets the password and mounts: from the keyring when one is stored there
// (unless a passfile is given), else from the passfile or the terminal. A stored password
// that no longer works is reported and asked for once; the one typed then replaces it. With
// remember, a password that mounted is stored. The keyring being unavailable costs a note
// (with remember) and nothing else.
func mountWithKeyring(e *env, client *mountmgr.Client, req mountmgr.MountRequest, entry vault.Entry, passfile string, remember bool) (mountmgr.MountInfo, error) {
	name := displayName(entry)
	var kr *keyring.Keyring
	var krErr error
	if passfile == "" || remember {
		kr, krErr = keyring.Open(e.ctx, keyring.Options{})
		if kr != nil {
			defer kr.Close()
		}
	}
	if krErr != nil && remember {
		fmt.Fprintf(e.stderr, "note: %v: the password will not be remembered\n", krErr)
	}
	replace := false
	if passfile == "" && kr != nil {
		pw, err := kr.Get(e.ctx, entry.CipherDir)
		switch {
		case err == nil:
			req.Password = pw
			info, err := client.Mount(e.ctx, req)
			crypto.Wipe(pw)
			if err == nil || !errors.Is(err, vault.ErrWrongPassword) {
				return info, err
			}
			fmt.Fprintf(e.stderr, "The password stored in the keyring for %s does not unlock it (changed since?).\n", name)
			replace = true
		case errors.Is(err, keyring.ErrNotFound):
		default:
			fmt.Fprintf(e.stderr, "note: %v; asking for the password instead\n", err)
		}
	}
	pw, err := e.readPassword(passfile, fmt.Sprintf("Password for %s: ", name))
	if err != nil {
		return mountmgr.MountInfo{}, err
	}
	defer crypto.Wipe(pw)
	req.Password = pw
	info, err := client.Mount(e.ctx, req)
	if err != nil {
		return info, err
	}
	if kr != nil && (remember || replace) {
		if err := kr.Set(e.ctx, entry.CipherDir, keyringLabel(entry), pw); err != nil {
			fmt.Fprintf(e.stderr, "note: the password was not stored: %v\n", err)
		} else if replace {
			fmt.Fprintf(e.stderr, "Updated the password in the keyring for %s.\n", name)
		} else {
			fmt.Fprintf(e.stderr, "Stored the password in the keyring for %s.\n", name)
		}
	}
	return info, nil
}

var forgetPasswordCommand = &command{
	name:    "forget-password",
	group:   groupMounts,
	summary: "Remove a vault's password from the desktop keyring",
	args:    "VAULT",
	help: `Removes the password "vaultui mount --remember" stored in the desktop
keyring (Secret Service: gnome-keyring, KWallet, KeePassXC) for VAULT, a
registered name or a cipherdir. The vault itself is not touched; the next
mount asks for the password again.

examples:
  vaultui forget-password work`,
	setup: func(fs *flag.FlagSet) runFunc {
		return func(e *env, args []string) error {
			if len(args) != 1 {
				return e.usage("expected one VAULT argument, got %d", len(args))
			}
			entry, err := e.resolve(args[0])
			if err != nil {
				return err
			}
			k, err := keyring.Open(e.ctx, keyring.Options{})
			if err != nil {
				return withHint(err, "the keyring is reached over the D-Bus session bus of a desktop login; from ssh or a container there is none")
			}
			defer k.Close()
			if err := k.Delete(e.ctx, entry.CipherDir); err != nil {
				if errors.Is(err, keyring.ErrNotFound) {
					return fmt.Errorf("no password stored in the keyring for %s", displayName(entry))
				}
				return err
			}
			fmt.Fprintf(e.stdout, "Removed the password of %s from the keyring.\n", displayName(entry))
			return nil
		}
	},
}
