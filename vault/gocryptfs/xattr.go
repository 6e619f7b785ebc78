package gocryptfs

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/format"
)

// KindXattr: an extended attribute whose name or value does not decrypt.
const KindXattr = "xattr"

// xattrBufMax holds the largest attribute value Linux allows plus encryption overhead.
const xattrBufMax = 64<<10 + 256

// readXattrs returns the decrypted extended attributes of n's cipher entry (POSIX ACLs as they
// are), reporting those that do not decrypt. Entries whose file system has no attributes, and
// symlinks (Linux keeps user attributes off them), have none.
func (v *Vault) readXattrs(n format.Node, problem func(format.Problem)) map[string][]byte {
	p := procPath(RefOf(n).Dirfd, RefOf(n).Name)
	list, err := xattrList(p)
	if err != nil || len(list) == 0 {
		return nil
	}
	attrs := map[string][]byte{}
	for _, stored := range list {
		isACL := stored == "system.posix_acl_access" || stored == "system.posix_acl_default"
		c, ours := strings.CutPrefix(stored, crypto.XattrPrefix)
		if !ours && !isACL {
			continue // another program's attribute, not part of the vault
		}
		val, err := xattrGet(p, stored)
		if err != nil {
			problem(format.NewProblem(n.Path, n.CipherPath, format.KindIO, fmt.Sprintf("attribute %q: %v", stored, err)))
			continue
		}
		if isACL {
			attrs[stored] = val
			continue
		}
		name, err := v.XattrNames.DecryptXattrName(c)
		if err != nil {
			problem(format.NewProblem(n.Path, n.CipherPath, KindXattr, fmt.Sprintf("attribute name %q does not decrypt", stored)))
			continue
		}
		value, err := v.Content.DecryptXattrValue(val)
		if err != nil {
			problem(format.NewProblem(n.Path, n.CipherPath, KindXattr, fmt.Sprintf("the value of attribute %q does not authenticate", name)))
			continue
		}
		attrs[name] = value
	}
	return attrs
}

// procPath names entry name of dirfd for the *xattr calls, which have no *at form before
// Linux 6.13 (a symlink in name's place is not followed: the l*xattr calls are used).
func procPath(dirfd int, name string) string {
	return "/proc/self/fd/" + strconv.Itoa(dirfd) + "/" + name
}

// xattrList lists the extended attributes of p (a procPath).
func xattrList(p string) ([]string, error) {
	buf := make([]byte, 4096)
	for {
		n, err := unix.Llistxattr(p, buf)
		if err == unix.ERANGE {
			buf = make([]byte, 2*len(buf))
			continue
		}
		if err != nil {
			return nil, err
		}
		return strings.FieldsFunc(string(buf[:n]), func(r rune) bool { return r == 0 }), nil
	}
}

// xattrGet reads the extended attribute attr of p (a procPath).
func xattrGet(p, attr string) ([]byte, error) {
	buf := make([]byte, xattrBufMax)
	n, err := unix.Lgetxattr(p, attr, buf)
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}
