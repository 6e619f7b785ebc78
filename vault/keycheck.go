package vault

import (
	"errors"
	"io"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/layout"
)

// ErrKeyUnverifiable: the vault holds too little encrypted data (no file content, too few
// names) to tell a right master key from a wrong one. Resealing the config with a wrong key
// would lock the vault for good, so callers ask the user before going on (OpenWithMasterKey).
var ErrKeyUnverifiable = errors.New("the master key cannot be verified")

// How much evidence checkMasterKey gathers. A content block is authenticated (a wrong key
// passes with probability 2^-128). A name only has padding to check: a wrong key "decrypts"
// about one name in 255, so names count only in numbers, and only when most of those tried
// decrypt: with a wrong key, 8 of at most 10 has a probability below 10^-17.
const (
	keyCheckBlocks  = 4    // content blocks tried at most
	keyCheckNames   = 64   // names tried at most
	keyCheckNamesOK = 8    // decrypting names that prove the key, if at least 3/4 of those tried
	keyCheckEntries = 4096 // directory entries looked at, at most
)

type keyVerdict int

const (
	keyUnverifiable keyVerdict = iota
	keyRight
	keyWrong
)

// checkMasterKey tries v's keys on the vault's content and names, breadth first from the
// root, and says whether the key is right, wrong, or cannot be told.
func (v *Vault) checkMasterKey() keyVerdict {
	var blocksOK, blocksBad, namesOK, namesTried, seen int
	queue := []string{v.Dir}
	for len(queue) > 0 && seen < keyCheckEntries && blocksOK == 0 {
		dir := queue[0]
		queue = queue[1:]
		ents, err := layout.ReadDirPath(dir)
		if err != nil {
			continue
		}
		dirfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		rel, _ := filepath.Rel(v.Dir, dir)
		if rel == "." {
			rel = ""
		}
		var iv []byte
		namesHere := v.Names != nil
		if namesHere {
			if iv, err = v.DirIV(dir); err != nil {
				namesHere = false
			}
		}
		for _, e := range ents {
			if seen++; seen > keyCheckEntries || blocksOK > 0 {
				break
			}
			name := e.Name()
			if v.hidden(rel, name) {
				continue
			}
			// A file not named as any key would name it (something a person or another
			// program put there) says nothing about the key, its content included.
			if namesHere && !crypto.IsLongName(name) && !v.Names.WellFormed(name) {
				continue
			}
			if namesHere && namesTried < keyCheckNames {
				namesTried++
				if _, err := v.decryptEntryName(dirfd, name, iv); err == nil {
					namesOK++
				}
			}
			p := filepath.Join(dir, name)
			switch {
			case e.IsDir():
				queue = append(queue, p)
			case e.Type().IsRegular() && blocksOK+blocksBad < keyCheckBlocks:
				if ok, checked := v.firstBlockOpens(p); checked {
					if ok {
						blocksOK++
					} else {
						blocksBad++
					}
				}
			}
		}
		unix.Close(dirfd)
	}
	// namesFor: at least n names, and three in four of those tried, decrypt.
	namesFor := func(n int) bool { return namesOK >= n && 4*namesOK >= 3*namesTried }
	// With the right key nearly every name decrypts; with a wrong one nearly none does.
	namesFail := namesTried > 0 && 4*namesOK < namesTried
	switch {
	case blocksOK > 0 || namesFor(keyCheckNamesOK):
		return keyRight
	case namesFail:
		return keyWrong
	// A block that fails authentication under the right key means a damaged file; one name
	// passes under a wrong key once in 255 tries. So failed blocks decide against the key
	// unless two names speak for it (a wrong key manages that about once in 65,000 tries,
	// and then the user is asked rather than told).
	case blocksBad > 0 && !namesFor(2):
		return keyWrong
	}
	return keyUnverifiable
}

// firstBlockOpens reports whether the first block of the cipher file p decrypts (checked is
// false when the file has no block to check).
func (v *Vault) firstBlockOpens(p string) (ok, checked bool) {
	f, err := openRegular(p)
	if err != nil {
		return false, false
	}
	defer f.Close()
	buf := make([]byte, crypto.HeaderLen+v.Content.CipherBlockSize())
	n, _ := io.ReadFull(f, buf)
	if n <= crypto.HeaderLen+v.Content.BlockOverhead() {
		return false, false
	}
	h, err := crypto.ParseFileHeader(buf)
	if err != nil {
		return false, false
	}
	plain, err := v.Content.DecryptBlocks(nil, buf[crypto.HeaderLen:n], 0, h.ID[:])
	crypto.Wipe(plain)
	return err == nil, true
}
