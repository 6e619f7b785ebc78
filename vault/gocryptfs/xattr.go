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

// XattrBufMax holds the largest attribute value Linux allows plus encryption overhead: what
// a stored attribute is read into.
const XattrBufMax = 64<<10 + 256

// readXattrs returns the decrypted extended attributes of n's cipher entry (POSIX ACLs as they
// are), reporting those that do not decrypt. Entries whose file system has no attributes, and
// symlinks (Linux keeps user attributes off them), have none.
func (v *Vault) readXattrs(n format.Node, problem func(format.Problem)) map[string][]byte {
	p := "/proc/self/fd/" + strconv.Itoa(RefOf(n).Dirfd) + "/" + RefOf(n).Name
	buf := make([]byte, XattrBufMax)
	sz, err := unix.Llistxattr(p, buf)
	if err != nil || sz == 0 {
		return nil
	}
	attrs := map[string][]byte{}
	for _, stored := range strings.Split(strings.TrimRight(string(buf[:sz]), "\x00"), "\x00") {
		isACL := stored == "system.posix_acl_access" || stored == "system.posix_acl_default"
		c, ours := strings.CutPrefix(stored, crypto.XattrPrefix)
		if !ours && !isACL {
			continue // another program's attribute, not part of the vault
		}
		vb := make([]byte, XattrBufMax)
		vn, err := unix.Lgetxattr(p, stored, vb)
		if err != nil {
			problem(format.NewProblem(n.Path, n.CipherPath, format.KindIO, fmt.Sprintf("attribute %q: %v", stored, err)))
			continue
		}
		if isACL {
			attrs[stored] = vb[:vn]
			continue
		}
		name, err := v.XattrNames.DecryptXattrName(c)
		if err != nil {
			problem(format.NewProblem(n.Path, n.CipherPath, KindXattr, fmt.Sprintf("attribute name %q does not decrypt", stored)))
			continue
		}
		value, err := v.Content.DecryptXattrValue(vb[:vn])
		if err != nil {
			problem(format.NewProblem(n.Path, n.CipherPath, KindXattr, fmt.Sprintf("the value of attribute %q does not authenticate", name)))
			continue
		}
		attrs[name] = value
	}
	return attrs
}
