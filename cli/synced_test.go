package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/vaulttest"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// Script commands that leave a vault the way a sync tool does; they use the vault package, so
// the scripts need no fixture.

// scriptVault unlocks the vault in CIPHERDIR with the first line of PASSFILE.
func scriptVault(ts *testscript.TestScript, dir, passfile string) (*gocryptfs.Vault, map[string]string) {
	pw, err := os.ReadFile(ts.MkAbs(passfile))
	ts.Check(err)
	v, err := gocryptfs.Unlock(context.Background(), ts.MkAbs(dir), []byte(strings.SplitN(string(pw), "\n", 2)[0]))
	ts.Check(err)
	cipher := map[string]string{}
	ts.Check(vault.WalkVolume(context.Background(), v.Volume(), func(n vault.Node) error {
		cipher[n.Path] = filepath.Join(v.Dir, filepath.FromSlash(n.CipherPath))
		return nil
	}, nil))
	return v, cipher
}

// importtree CIPHERDIR PASSFILE SRC: copy the plaintext tree SRC into the vault.
func cmdImportTree(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: importtree CIPHERDIR PASSFILE SRC")
	}
	v, _ := scriptVault(ts, args[0], args[1])
	defer v.Close()
	ts.Check(vaulttest.Import(context.Background(), v, ts.MkAbs(args[2])))
}

// splitfolder CIPHERDIR PASSFILE FOLDER SECOND: make FOLDER a folder made on two computers,
// with SECOND (a folder at the same level) as the second computer's: SECOND's entries move
// into FOLDER and its gocryptfs.diriv becomes Syncthing's conflict copy there.
func cmdSplitFolder(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: splitfolder CIPHERDIR PASSFILE FOLDER SECOND")
	}
	v, cipher := scriptVault(ts, args[0], args[1])
	defer v.Close()
	ts.Check(splitFolder(cipher[args[2]], cipher[args[3]]))
}

// splitFolder moves the entries of the cipher directory second into the cipher directory
// folder, its gocryptfs.diriv as Syncthing's conflict copy, and removes second.
func splitFolder(folder, second string) error {
	ents, err := os.ReadDir(second)
	if err != nil {
		return err
	}
	for _, e := range ents {
		to := e.Name()
		if to == crypto.DirIVName {
			to += ".sync-conflict-20260101-120000-ABCDEF7"
		}
		if err := os.Rename(filepath.Join(second, e.Name()), filepath.Join(folder, to)); err != nil {
			return err
		}
	}
	return os.Remove(second)
}

// badcopy CIPHERDIR PASSFILE PATH: put Syncthing's conflict copy of PATH beside it, holding
// bytes that do not decrypt.
func cmdBadCopy(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: badcopy CIPHERDIR PASSFILE PATH")
	}
	v, cipher := scriptVault(ts, args[0], args[1])
	defer v.Close()
	junk := []byte(strings.Repeat("not a vault file ", 300))
	ts.Check(os.WriteFile(cipher[args[2]]+".sync-conflict-20261130-101010-ABCDEF7", junk, 0o600))
}
