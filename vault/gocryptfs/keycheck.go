package gocryptfs

import (
	"io"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/layout"
)

// How much evidence checkMasterKey gathers. A content block is authenticated (a wrong key
// passes with probability 2^-128), unless it is a hole: an all-zero block skips the tag
// check and proves nothing. A name only has padding to check: a wrong key "decrypts" about
// one name in 255, so names prove the key only in numbers (8 of at most 10 decrypting under
// a wrong key has a probability below 10^-17). The other way round they are strong evidence:
// under the right key every name decrypts, so when more than one in four of those tried
// fails, the key is refused whatever the blocks say.
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

// keyEvidence is what checkMasterKey found.
type keyEvidence struct {
	blocksOK, blocksBad, namesOK, namesTried int
}

// namesFor: at least n names, and three in four of those tried, decrypt.
func (e keyEvidence) namesFor(n int) bool {
	return e.namesOK >= n && 4*e.namesOK >= 3*e.namesTried
}

// namesAgainst: more than one name in four of those tried fails.
func (e keyEvidence) namesAgainst() bool {
	return 4*(e.namesTried-e.namesOK) > e.namesTried
}

func (e keyEvidence) verdict() keyVerdict {
	switch {
	case e.namesAgainst():
		return keyWrong
	case e.blocksOK > 0 || e.namesFor(keyCheckNamesOK):
		return keyRight
	// A block that fails authentication under the right key means a damaged file; one name
	// passes under a wrong key once in 255 tries. So failed blocks decide against the key
	// unless two names speak for it (a wrong key manages that about once in 65,000 tries,
	// and then the user is asked rather than told).
	case e.blocksBad > 0 && !e.namesFor(2):
		return keyWrong
	}
	return keyUnverifiable
}

// checkMasterKey tries v's keys on the vault's content and names, breadth first from the
// root, and says whether the key is right, wrong, or cannot be told.
func (v *Vault) checkMasterKey() keyVerdict {
	var ev keyEvidence
	seen := 0
	// enough: a block proved the key and enough names were tried to outvote it, or the
	// name budget is spent.
	enough := func() bool {
		return ev.blocksOK > 0 && (v.Names == nil || ev.namesTried >= keyCheckNamesOK) || ev.namesTried >= keyCheckNames
	}
	queue := []string{v.Dir}
	for len(queue) > 0 && seen < keyCheckEntries && !enough() {
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
			if seen++; seen > keyCheckEntries || enough() {
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
			if namesHere && ev.namesTried < keyCheckNames {
				ev.namesTried++
				if _, err := v.DecryptEntryName(dirfd, name, iv); err == nil {
					ev.namesOK++
				}
			}
			p := filepath.Join(dir, name)
			switch {
			case e.IsDir():
				queue = append(queue, p)
			case e.Type().IsRegular() && ev.blocksOK+ev.blocksBad < keyCheckBlocks:
				if ok, checked := v.blockOpens(p); checked {
					if ok {
						ev.blocksOK++
					} else {
						ev.blocksBad++
					}
				}
			}
		}
		unix.Close(dirfd)
	}
	return ev.verdict()
}

// blockOpens reports whether a block of the cipher file p that is not a hole decrypts: the
// first, or when that is a hole the last (checked is false when the file has no such block
// to check). The last block of a file is a hole only when the file's size is a whole number
// of blocks, so a file that is all holes, as `truncate -s` leaves, is no evidence.
func (v *Vault) blockOpens(p string) (ok, checked bool) {
	f, err := openRegular(p)
	if err != nil {
		return false, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, false
	}
	cbs := int64(v.Content.CipherBlockSize())
	buf := make([]byte, crypto.HeaderLen+cbs)
	n, _ := io.ReadFull(f, buf)
	if n <= crypto.HeaderLen+v.Content.BlockOverhead() {
		return false, false
	}
	h, err := crypto.ParseFileHeader(buf)
	if err != nil {
		return false, false
	}
	block, num := buf[crypto.HeaderLen:n], uint64(0)
	if v.Content.IsHole(block) {
		num = uint64((fi.Size() - crypto.HeaderLen - 1) / cbs)
		if num == 0 {
			return false, false
		}
		off := crypto.HeaderLen + int64(num)*cbs
		m, _ := f.ReadAt(buf[crypto.HeaderLen:], off)
		block = buf[crypto.HeaderLen : crypto.HeaderLen+m]
		if len(block) <= v.Content.BlockOverhead() || v.Content.IsHole(block) {
			return false, false
		}
	}
	plain, err := v.Content.DecryptBlocks(nil, block, num, h.ID[:])
	crypto.Wipe(plain)
	return err == nil, true
}
