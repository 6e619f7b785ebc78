package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault"
)

// creator is written into gocryptfs.conf's Creator field of new vaults.
const creator = "vaultui"

// Long-name limits accepted by --longnamemax, as gocryptfs -longnamemax.
const (
	minLongNameMax = 62
	maxLongNameMax = 255
)

var initCommand = &command{
	name:    "init",
	group:   groupVaults,
	summary: "Create a new vault in an empty or new directory",
	args:    "[options] CIPHERDIR",
	help: `The vault uses the gocryptfs v2 format. It is added to the registry under
--name (default: the directory's base name) with the mount point
--mountpoint (default: ~/Vaults/NAME, created empty if missing).
The password is asked twice on the terminal, or read from --passfile.
The master key is printed once: store it offline, it is the only way back
in if the password is lost or gocryptfs.conf is damaged.

--cipher auto runs the speed test (under 3 seconds) and uses what it
recommends: AEGIS-256X2 where the CPU has AES instructions and AEGIS is
faster, else AES-256-GCM, or XChaCha20-Poly1305 without AES instructions.

examples:
  vaultui init ~/Private.enc
  vaultui init --cipher gcm --name work --passfile pw.txt /data/work.enc`,
	setup: func(fs *flag.FlagSet) runFunc {
		cipherName := fs.String("cipher", "auto", "content `CIPHER`: auto, aegis, gcm, xchacha or siv")
		logN := fs.Int("scryptn", crypto.DefaultScryptLogN, fmt.Sprintf("scrypt cost N = 2^`LOGN`, LOGN %d to %d: each step doubles the time to unlock and to guess", crypto.MinScryptLogN, crypto.MaxScryptLogN))
		plainNames := fs.Bool("plaintextnames", false, "do not encrypt file names")
		detNames := fs.Bool("deterministic-names", false, "encrypt names without per-directory IVs (same name, same ciphertext everywhere)")
		longNameMax := fs.Int("longnamemax", maxLongNameMax, fmt.Sprintf("store encrypted names longer than `N` bytes (%d to %d) as long names", minLongNameMax, maxLongNameMax))
		name := fs.String("name", "", "`NAME` in the registry (default: the directory's base name)")
		mountPoint := fs.String("mountpoint", "", "mount point `DIR` (default: ~/Vaults/NAME)")
		src := passSourceFlags(fs, "read the password from the first line of `FILE` (- for standard input)")
		return func(e *env, args []string) error {
			if len(args) != 1 {
				return e.usage("expected one CIPHERDIR argument, got %d", len(args))
			}
			if err := src.check(e); err != nil {
				return err
			}
			opts := vault.CreateOptions{ScryptLogN: *logN, PlaintextNames: *plainNames,
				DeterministicNames: *detNames, Creator: creator}
			auto := strings.EqualFold(*cipherName, "auto")
			if !auto {
				c, err := crypto.ParseCipher(*cipherName)
				if err != nil {
					return e.usage("--cipher %q: want auto, aegis, gcm, xchacha or siv", *cipherName)
				}
				opts.Cipher = c
			}
			if *logN < crypto.MinScryptLogN || *logN > crypto.MaxScryptLogN {
				return e.usage("--scryptn %d: want %d to %d", *logN, crypto.MinScryptLogN, crypto.MaxScryptLogN)
			}
			if *longNameMax < minLongNameMax || *longNameMax > maxLongNameMax {
				return e.usage("--longnamemax %d: want %d to %d", *longNameMax, minLongNameMax, maxLongNameMax)
			}
			if *longNameMax != maxLongNameMax {
				// 255 is the plain file system limit: no LongNameMax flag.
				opts.LongNameMax = *longNameMax
			}
			if *plainNames && (*detNames || *longNameMax != maxLongNameMax) {
				return e.usage("--plaintextnames cannot be combined with --deterministic-names or --longnamemax")
			}
			return runInit(e, args[0], *name, *mountPoint, src, auto, opts)
		}
	},
}

func runInit(e *env, dirArg, name, mountPoint string, src *passSource, auto bool, opts vault.CreateOptions) error {
	dir, err := filepath.Abs(dirArg)
	if err != nil {
		return err
	}
	// Check everything that can be checked before asking for a password,
	// so a mistake costs nothing.
	if err := checkNewCipherDir(dir); err != nil {
		return err
	}
	if name == "" {
		name = filepath.Base(dir)
		if err := vault.ValidateName(name); err != nil {
			return withHint(err, "choose a name with --name")
		}
	} else if err := vault.ValidateName(name); err != nil {
		return err
	}
	if mountPoint == "" {
		if mountPoint, err = vault.DefaultMountPoint(name); err != nil {
			return err
		}
	}
	regPath, err := vault.DefaultRegistryPath()
	if err != nil {
		return withHint(err, "nothing was created")
	}
	entry, err := vault.CheckNewEntry(regPath, vault.Entry{Name: name, CipherDir: dir, MountPoint: mountPoint})
	if errors.Is(err, vault.ErrDuplicate) {
		return withHint(err, "choose another name with --name, or forget the old entry with \"vaultui forget\"")
	}
	if err != nil {
		return withHint(err, "nothing was created")
	}

	password, err := e.readNewPassword(src, "Password for the new vault: ")
	if err != nil {
		return err
	}
	defer crypto.Wipe(password)

	if auto {
		fmt.Fprintln(e.stderr, "Measuring the ciphers to choose one (--cipher auto)...")
		_, rec := crypto.SpeedTest(e.ctx, nil)
		if rec.Cipher == "" {
			return errors.New("the speed test did not recommend a cipher; choose one with --cipher")
		}
		opts.Cipher = rec.Cipher
		fmt.Fprintf(e.stderr, "Using %s: %s\n", rec.Cipher, rec.Reason)
	}

	if opts.ScryptLogN >= 20 {
		fmt.Fprintln(e.stderr, "Deriving the key with scrypt; this takes a moment...")
	}
	entry.Lock = e.newVaultLock()
	masterKey, err := vault.CreateRegistered(regPath, entry, password, opts)
	if masterKey == nil {
		return err
	}
	fmt.Fprintf(e.stdout, "Created vault %q in %s (%s).\n\n", name, dir, opts.Cipher)
	printMasterKey(e.stdout, masterKey)
	crypto.Wipe(masterKey)

	var inc *vault.IncompleteError
	if errors.As(err, &inc) && inc.MountPoint != nil {
		fmt.Fprintf(e.stderr, "warning: could not create the mount point: %v\n", inc.MountPoint)
	}
	if inc != nil && inc.Register != nil {
		return withHint(fmt.Errorf("the vault was created but not registered: %w", inc.Register),
			"register it later with: vaultui add --name %s %s", name, dir)
	}
	fmt.Fprintf(e.stdout, "\nRegistered as %q; mount point %s.\n", name, entry.MountPoint)
	return nil
}

// checkNewCipherDir is vault.CheckNewCipherDir with the hint a user needs.
func checkNewCipherDir(dir string) error {
	err := vault.CheckNewCipherDir(dir)
	switch {
	case errors.Is(err, vault.ErrNotEmpty):
		return withHint(err, "a new vault needs an empty or new directory; to register an existing vault use \"vaultui add\"")
	case errors.Is(err, os.ErrNotExist):
		return withHint(err, "create it first (mkdir -p %s)", filepath.Dir(dir))
	}
	return err
}

func printMasterKey(w io.Writer, key []byte) {
	fmt.Fprintln(w, "Your master key is:")
	fmt.Fprintln(w)
	for _, l := range vault.FormatMasterKey(key) {
		fmt.Fprintf(w, "    %s\n", l)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Write it down and keep it offline, away from the vault. It is shown only this once.")
	fmt.Fprintln(w, "If the password is lost or gocryptfs.conf is damaged, it is the only way to your data:")
	fmt.Fprintln(w, "  vaultui passwd --masterkey - VAULT")
}

var infoCommand = &command{
	name:    "info",
	group:   groupVaults,
	summary: "Show a vault's cipher, feature flags, scrypt cost and creator",
	args:    "[--json] VAULT",
	help: `Reads only gocryptfs.conf; no password is needed. The last line says
whether the desktop keyring holds the vault's password (vaultui mount
--remember).

examples:
  vaultui info work
  vaultui info --json /data/work.enc`,
	setup: func(fs *flag.FlagSet) runFunc {
		asJSON := fs.Bool("json", false, "print JSON")
		return func(e *env, args []string) error {
			if len(args) != 1 {
				return e.usage("expected one VAULT argument, got %d", len(args))
			}
			entry, err := e.resolve(args[0])
			if err != nil {
				return err
			}
			info, err := vault.ReadInfo(entry.CipherDir)
			if err != nil {
				return err
			}
			if *asJSON {
				return printInfoJSON(e.stdout, entry, info)
			}
			printInfo(e.stdout, entry, info, keyringStatus(e, entry))
			return nil
		}
	},
}

var passwdCommand = &command{
	name:    "passwd",
	group:   groupVaults,
	summary: "Change a vault's password (with the old password or the master key)",
	args:    "[options] VAULT",
	help: `Only gocryptfs.conf changes, atomically: a crash leaves either the old or
the new password working. The data is not re-encrypted.
Without --passfile/--new-passfile the passwords are asked on the terminal.
--masterkey - asks for the master key on the terminal instead of the old
password; a key given on the command line is visible to other users of this
machine in the process list, so prefer "-". The key is checked on the vault's
files first; when the vault holds too little to check it (no file content,
fewer than 8 names), passwd asks before resealing (--unverified-key: do not
ask, for scripts).

examples:
  vaultui passwd work
  vaultui passwd --passfile old.txt --new-passfile new.txt work
  vaultui passwd --masterkey - work`,
	setup: func(fs *flag.FlagSet) runFunc {
		src := passSourceFlags(fs, "read the current password from `FILE` (- for standard input)")
		newPassfile := fs.String("new-passfile", "", "read the new password from `FILE` (- for standard input)")
		masterKey := fs.String("masterkey", "", "use the master key instead of the current password: - asks for it (or reads standard input), FILE reads its first line; `KEY` written out works but warns")
		unverified := fs.Bool("unverified-key", false, "with --masterkey: reseal even if the vault holds too little to verify the key (a wrong key locks the vault for good)")
		return func(e *env, args []string) error {
			if len(args) != 1 {
				return e.usage("expected one VAULT argument, got %d", len(args))
			}
			if err := src.check(e); err != nil {
				return err
			}
			if (src.file == "-" || *masterKey == "-") && *newPassfile == "-" {
				return e.usage("the current password (or master key) and --new-passfile cannot both read standard input")
			}
			if *masterKey != "" && src.given() {
				return e.usage("give either --masterkey or --passfile/--extpass, not both")
			}
			entry, err := e.resolve(args[0])
			if err != nil {
				return err
			}
			var oldPassword, key []byte
			if *masterKey != "" {
				if key, err = e.readMasterKey(*masterKey, true); err != nil {
					return err
				}
			} else if oldPassword, err = e.readPassword(src, "Current password: "); err != nil {
				return err
			}
			defer crypto.Wipe(oldPassword)
			defer crypto.Wipe(key)
			newPassword, err := e.readNewPassword(&passSource{file: *newPassfile}, "New password: ")
			if err != nil {
				return err
			}
			defer crypto.Wipe(newPassword)
			req := app.ChangePasswordRequest{Vault: app.VaultOf(entry), OldPassword: oldPassword, MasterKey: key, NewPassword: newPassword}
			change, err := e.app.ChangePassword(e.ctx, req)
			if errors.Is(err, vault.ErrKeyUnverifiable) {
				err = e.confirmUnverifiedKey(err, *unverified)
				if err == nil {
					req.Unverified = true
					change, err = e.app.ChangePassword(e.ctx, req)
				}
			}
			if err != nil {
				if key != nil && errors.Is(err, vault.ErrWrongPassword) {
					return withHint(err, "nothing was changed; check the master key against what init printed")
				}
				return err
			}
			e.keyringNote(displayName(entry), change)
			fmt.Fprintf(e.stdout, "Password changed for %s.\n", displayName(entry))
			return nil
		}
	},
}

// problemsFound ends fsck with exit code 4 after the problems were listed.
type problemsFound int

func (p problemsFound) Error() string {
	if p == 1 {
		return "fsck found 1 problem"
	}
	return fmt.Sprintf("fsck found %d problems", int(p))
}
func (p problemsFound) ExitCode() int { return exitCorrupt }

var fsckCommand = &command{
	name:    "fsck",
	group:   groupVaults,
	summary: "Check that every name, symlink and block of a vault decrypts",
	args:    "[--passfile F | --extpass PROGRAM] VAULT",
	help: `Each problem is printed on its own line with the file's path (and the block
range for damaged contents). Sync tools' conflict copies and foreign files
(names not of the vault's format, e.g. desktop.ini) are listed as notes, not
damage. Exit code 0 means no damage, 4 means damage was found (or the
vault's config is damaged). Progress is shown on a terminal.
The vault is only read.

examples:
  vaultui fsck work
  vaultui fsck --passfile pw.txt /data/work.enc`,
	setup: func(fs *flag.FlagSet) runFunc {
		src := passSourceFlags(fs, "read the password from the first line of `FILE` (- for standard input)")
		return func(e *env, args []string) error {
			if len(args) != 1 {
				return e.usage("expected one VAULT argument, got %d", len(args))
			}
			v, entry, err := e.unlock(args[0], src)
			if err != nil {
				return err
			}
			defer v.Close()
			prog := newProgress(e.stderr, "checking")
			problems, err := v.Fsck(e.ctx, prog.update)
			prog.done()
			for _, p := range problems {
				fmt.Fprintln(e.stdout, formatProblem(p))
			}
			if err != nil {
				return err
			}
			damage := 0
			for _, p := range problems {
				if p.Damage() {
					damage++
				}
			}
			if damage > 0 {
				return problemsFound(damage)
			}
			if len(problems) > 0 {
				fmt.Fprintf(e.stdout, "%s: no damage found (%d entries checked); the notes above are conflict copies or foreign files.\n", displayName(entry), prog.total)
				return nil
			}
			fmt.Fprintf(e.stdout, "%s: no problems found (%d entries checked).\n", displayName(entry), prog.total)
			return nil
		}
	},
}

// formatProblem prints one fsck finding: "PATH: KIND: DETAIL (blocks A-B)".
func formatProblem(p vault.Problem) string {
	path := p.Path
	if path == "" {
		path = p.CipherPath
	}
	if path == "" {
		path = "."
	}
	var b strings.Builder
	b.WriteString(path)
	if p.Kind != "" {
		b.WriteString(": " + p.Kind)
	}
	if p.Detail != "" {
		b.WriteString(": " + oneLine(p.Detail))
	}
	if p.FirstBlock >= 0 && p.LastBlock >= p.FirstBlock {
		if p.FirstBlock == p.LastBlock {
			fmt.Fprintf(&b, " (block %d)", p.FirstBlock)
		} else {
			fmt.Fprintf(&b, " (blocks %d-%d)", p.FirstBlock, p.LastBlock)
		}
	}
	if p.CipherPath != "" && p.CipherPath != path {
		fmt.Fprintf(&b, " [encrypted: %s]", p.CipherPath)
	}
	return vault.EscapeControl(b.String()) // names are the vault's: no raw control characters
}

var exportCommand = &command{
	name:    "export",
	group:   groupVaults,
	summary: "Write a vault's decrypted files to a directory, without FUSE",
	args:    "[--passfile F | --extpass PROGRAM] VAULT DESTDIR",
	help: `Recreates the decrypted tree in DESTDIR (new or empty): files, directories,
symlinks and permission bits; holes in sparse files stay holes. For recovery
and for machines without FUSE. Nothing unauthenticated is ever written: a
damaged block stops the export with an error naming the file.

examples:
  vaultui export work /mnt/usb/work-copy
  vaultui export --passfile pw.txt /data/work.enc ./plain`,
	setup: func(fs *flag.FlagSet) runFunc {
		src := passSourceFlags(fs, "read the password from the first line of `FILE` (- for standard input)")
		return func(e *env, args []string) error {
			if len(args) != 2 {
				return e.usage("expected VAULT and DESTDIR arguments, got %d argument(s)", len(args))
			}
			dest, err := filepath.Abs(args[1])
			if err != nil {
				return err
			}
			v, entry, err := e.unlock(args[0], src)
			if err != nil {
				return err
			}
			defer v.Close()
			prog := newProgress(e.stderr, "exporting")
			err = v.Export(e.ctx, dest, prog.update)
			prog.done()
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "Exported %s to %s.\n", displayName(entry), dest)
			return nil
		}
	},
}

// unlock resolves arg and unlocks the vault: with the password of the source named, else with the
// keyring's, else with one asked on the terminal (see withPassword).
func (e *env) unlock(arg string, src *passSource) (*vault.Vault, vault.Entry, error) {
	if err := src.check(e); err != nil {
		return nil, vault.Entry{}, err
	}
	entry, err := e.resolve(arg)
	if err != nil {
		return nil, entry, err
	}
	var v *vault.Vault
	err = e.withPassword(entry, src, func(pw []byte) (app.KeyringChange, error) {
		var change app.KeyringChange
		var err error
		v, change, err = e.app.Unlock(e.ctx, app.VaultOf(entry), pw)
		return change, err
	})
	if err != nil {
		return nil, entry, err
	}
	return v, entry, nil
}

// displayName names a vault in messages: its registry name, else its path.
func displayName(e vault.Entry) string {
	if e.Name != "" {
		return e.Name
	}
	return e.CipherDir
}

// progress draws one self-overwriting status line on a terminal, at most
// ten times a second; elsewhere it only counts.
type progress struct {
	w     io.Writer
	verb  string
	on    bool
	last  time.Time
	drawn bool
	total int
	doneN int
}

func newProgress(w io.Writer, verb string) *progress {
	return &progress{w: w, verb: verb, on: isTerminal(w)}
}

// update draws f, the first report at once (it comes before any work: see
// vault.FsckProgress), later ones at most ten times a second.
func (p *progress) update(f vault.FsckProgress) {
	p.total, p.doneN = f.Total, f.Done
	if !p.on || p.drawn && time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	fmt.Fprint(p.w, "\r\x1b[K"+p.line(f))
	p.drawn = true
}

// line is the status line of f: what is counted, then the share of the
// content done in bytes, with the entries and the path beside.
func (p *progress) line(f vault.FsckProgress) string {
	if f.Counting {
		return fmt.Sprintf("%s: counting… %d entries, %s", p.verb, f.Total, formatBytes(float64(f.TotalBytes)))
	}
	pct := 0.0
	switch {
	case f.TotalBytes > 0:
		pct = 100 * float64(f.Bytes) / float64(f.TotalBytes)
	case f.Total > 0:
		pct = 100 * float64(f.Done) / float64(f.Total)
	}
	path := vault.EscapeControl(f.Path)
	if len(path) > 40 {
		path = "..." + path[len(path)-37:]
	}
	return fmt.Sprintf("%s %3.0f%% %s of %s, %d/%d entries %s", p.verb, pct,
		formatBytes(float64(f.Bytes)), formatBytes(float64(f.TotalBytes)), f.Done, f.Total, path)
}

func (p *progress) done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
