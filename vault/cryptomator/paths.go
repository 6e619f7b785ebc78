package cryptomator

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/layout"
)

// Paths maps paths between the plaintext view and the vault's folder (format.PathMapper):
// a plaintext path to the stored entry that holds it (d/XX/YYYY.../<name>.c9r, or .c9s for
// a shortened name), and such a path, or one inside an entry's folder, back.
func (w *Volume) Paths() format.PathMapper { return pathMapper{w.v} }

type pathMapper struct{ v *Vault }

// maxPathDirs bounds the directories DecryptPath searches for the one whose folder a cipher
// path names: a directory's folder is named for a hash of its ID, so it is found by listing
// the tree from the root.
const maxPathDirs = 1 << 20

func (m pathMapper) EncryptPath(plain string) (string, error) {
	clean, err := layout.CleanPath(plain)
	if err != nil {
		return "", err
	}
	parts := strings.Split(clean, "/")
	d := m.v.Root()
	for i, name := range parts {
		e, err := m.v.Lookup(d, name)
		last := i == len(parts)-1
		switch {
		case last && errors.Is(err, fs.ErrNotExist):
			stored, _ := m.v.storedName(d, name)
			return d.Path + "/" + stored, nil
		case err != nil:
			return "", fmt.Errorf("%s: %w", path.Join(parts[:i+1]...), err)
		case last:
			return e.node(), nil
		}
		if d, err = m.v.OpenDir(e); err != nil {
			return "", fmt.Errorf("%s: %w", path.Join(parts[:i+1]...), err)
		}
	}
	panic("unreachable")
}

func (m pathMapper) DecryptPath(cipher string) (string, error) {
	clean, err := layout.CleanPath(cipher)
	if err != nil {
		return "", err
	}
	parts := strings.Split(clean, "/")
	if parts[0] != DataDir {
		if len(parts) == 1 && (strings.HasPrefix(parts[0], ConfigFileName) || strings.HasPrefix(parts[0], MasterkeyFileName)) {
			return "", layout.ErrFormatFile
		}
		return "", fmt.Errorf("%s: %w: a Cryptomator vault keeps its files in %s/", clean, layout.ErrBadPath, DataDir)
	}
	if len(parts) < 3 {
		return "", fmt.Errorf("%s: %w (a folder of directories' folders)", clean, layout.ErrFormatFile)
	}
	dirPath := strings.Join(parts[:3], "/")
	d, plainDir, err := m.findDir(dirPath)
	if err != nil {
		return "", err
	}
	if len(parts) == 3 {
		if plainDir == "" {
			return "", fmt.Errorf("%s: %w (the folder of the root directory's entries)", clean, layout.ErrFormatFile)
		}
		return plainDir, nil
	}
	stored := parts[3]
	if stored == dirIDBackup {
		return "", fmt.Errorf("%s: %w (the ID backup of /%s)", clean, layout.ErrFormatFile, plainDir)
	}
	f, err := m.v.openFolder(d.Path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", clean, err)
	}
	defer f.Close()
	e, _, err := m.v.entry(int(f.Fd()), d, stored)
	if err != nil {
		return "", fmt.Errorf("%s: %w", clean, err)
	}
	if e.Conflict != nil {
		e.Name = layout.ConflictName(e.Name, *e.Conflict, func(name string) bool {
			_, err := m.v.Lookup(d, name)
			return err == nil
		})
	}
	p := path.Join(plainDir, e.Name)
	if len(parts) > 4 && parts[4] == NameFile {
		return "", fmt.Errorf("%s: %w (the long name of /%s)", clean, layout.ErrFormatFile, p)
	}
	return p, nil
}

// findDir finds the directory whose entries are in the folder dirPath (d/XX/YYYY...) by
// listing the tree breadth first from the root, and returns it with its plaintext path. Each
// directory ID is visited once, so a dir.c9r naming an ancestor (it is not authenticated)
// cannot make it loop.
func (m pathMapper) findDir(dirPath string) (Dir, string, error) {
	type queued struct {
		d     Dir
		plain string
	}
	queue := []queued{{m.v.Root(), ""}}
	seen := map[string]bool{rootDirID: true}
	for len(queue) > 0 && len(seen) <= maxPathDirs {
		q := queue[0]
		queue = queue[1:]
		if q.d.Path == dirPath {
			return q.d, q.plain, nil
		}
		ents, err := m.v.readDir(q.d, func(string, string, error) {})
		if err != nil {
			continue
		}
		for _, e := range ents {
			if e.Kind != KindDir || e.Conflict != nil {
				continue
			}
			sub, err := m.v.OpenDir(e)
			if err != nil || seen[sub.ID] {
				continue
			}
			seen[sub.ID] = true
			queue = append(queue, queued{sub, path.Join(q.plain, e.Name)})
		}
	}
	return Dir{}, "", fmt.Errorf("%s: %w: no directory of the vault keeps its entries there", dirPath, fs.ErrNotExist)
}
