package gocryptfs

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/layout"
)

// ConflictScanLimit is how many directory entries CountConflicts reads at most: the terminal
// app counts every vault each time it re-reads the registry, so a huge vault must stay cheap.
const ConflictScanLimit = 10000

// ConflictTally is what a keyless scan of a cipherdir found.
type ConflictTally struct {
	// Count is the number of conflict copies found; a lower bound if !Complete.
	Count int
	// Complete is false when the scan stopped after ConflictScanLimit entries.
	Complete bool
	// Inodes holds the inode numbers of the copies on the cipherdir's own device. A mount
	// shows a cipher entry under the same inode number, so this tells a conflict copy seen
	// in the mount from a file that merely has " (conflict " in its name (a copy settled
	// with "keep both" keeps the name it showed under).
	Inodes map[uint64]bool
	// SplitDirs counts directories made on two machines: a tool kept a copy of their
	// gocryptfs.diriv, and what was made in them under the copy's IV shows as conflict
	// copies once decrypted. Those entries have ordinary encrypted names, so they are not in
	// Count: without the key nothing tells them apart. SplitDirInodes holds the directories'
	// inode numbers (the cipherdir's device only), as the mount shows them.
	SplitDirs      int
	SplitDirInodes map[uint64]bool
}

// CountConflicts counts the sync tools' conflict copies in the vault at cipherDir without
// its password, by the shape of the encrypted names: a tool's marker (layout.ParseConflict)
// whose removal leaves a name that looks encrypted (base64url of a multiple of 16 bytes, or
// a gocryptfs.longname.* entry). It counts what package vault's Volume.Conflicts lists;
// copies of the format's own files (gocryptfs.diriv, gocryptfs.conf, .name files) are fsck's
// business and are not counted.
//
// OneDrive's "-HOST" suffix is not counted: '-' is a base64url character, so without the key
// "NAME-HOST" cannot be told from an ordinary encrypted name (Volume.Conflicts, which
// decrypts, does list them). A vault with plaintext names has no copies to count: the tools'
// renamed names are ordinary names there.
func CountConflicts(cipherDir string) (ConflictTally, error) {
	t := ConflictTally{Complete: true, Inodes: map[uint64]bool{}, SplitDirInodes: map[uint64]bool{}}
	cfg, err := LoadConfig(cipherDir)
	if err != nil {
		return t, err
	}
	if cfg.PlaintextNames() {
		return t, nil
	}
	var root syscall.Stat_t
	if err := syscall.Stat(cipherDir, &root); err != nil {
		return t, fmt.Errorf("vault: %w", err)
	}
	seen := 0
	queue := []string{cipherDir}
	for len(queue) > 0 && t.Complete {
		dir := queue[0]
		queue = queue[1:]
		err := scanConflictDir(dir, func(e os.DirEntry) bool {
			if seen >= ConflictScanLimit {
				t.Complete = false
				return false
			}
			seen++
			name := e.Name()
			if e.IsDir() {
				queue = append(queue, filepath.Join(dir, name))
			}
			var st syscall.Stat_t
			switch keylessConflict(name) {
			case copyOfEntry:
				t.Count++
				if syscall.Lstat(filepath.Join(dir, name), &st) == nil && uint64(st.Dev) == uint64(root.Dev) {
					t.Inodes[st.Ino] = true
				}
			case copyOfDirIV:
				t.SplitDirs++
				if syscall.Stat(dir, &st) == nil && uint64(st.Dev) == uint64(root.Dev) {
					t.SplitDirInodes[st.Ino] = true
				}
			}
			return true
		})
		if err != nil {
			return t, err
		}
	}
	return t, nil
}

// scanConflictDir calls each for the entries of dir, a chunk at a time so a huge directory
// is not read whole, until each returns false. A directory that vanished meanwhile is empty.
func scanConflictDir(dir string, each func(os.DirEntry) bool) error {
	// O_DIRECTORY: a FIFO swapped in for the directory fails (ENOTDIR) instead of blocking.
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	defer f.Close()
	for {
		ents, err := f.ReadDir(256)
		for _, e := range ents {
			if !each(e) {
				return nil
			}
		}
		if err == io.EOF || len(ents) == 0 {
			return nil
		}
		if err != nil {
			return fmt.Errorf("vault: %w", err)
		}
	}
}

// keylessKind is what a cipherdir entry is, judging by its name alone.
type keylessKind int

const (
	notACopy    keylessKind = iota
	copyOfEntry             // a tool's conflict copy of an encrypted entry
	copyOfDirIV             // a tool's copy of the directory's gocryptfs.diriv
)

func keylessConflict(name string) keylessKind {
	if looksLikeCipherName(name) {
		return notACopy
	}
	if strings.HasPrefix(name, "gocryptfs.") && !strings.HasPrefix(name, crypto.LongNamePrefix) {
		// The format's own files, or a tool's copy of one; only a diriv copy matters here.
		c, ok := layout.ParseConflict(name, func(base string) bool { return base == crypto.DirIVName })
		if ok && c.Tool != "OneDrive" {
			return copyOfDirIV
		}
		return notACopy
	}
	if strings.HasPrefix(name, crypto.LongNamePrefix) && strings.HasSuffix(name, crypto.LongNameSuffix) {
		return notACopy // a .name file, or a tool's copy of one: it goes with its entry
	}
	c, ok := layout.ParseConflict(name, func(base string) bool {
		return looksLikeCipherName(base) || crypto.IsLongName(base)
	})
	if ok && c.Tool != "OneDrive" {
		return copyOfEntry
	}
	return notACopy
}

// looksLikeCipherName reports whether name is base64url (unpadded) of a whole number of
// 16-byte blocks, as every short encrypted name is.
func looksLikeCipherName(name string) bool {
	if name == "" || strings.ContainsAny(name, "+/=") {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(name)
	return err == nil && len(b) > 0 && len(b)%16 == 0
}
