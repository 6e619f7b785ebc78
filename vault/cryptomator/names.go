package cryptomator

import (
	"crypto/sha1"
	"encoding/base32"
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/layout"
)

// Names of the cipher tree (Cryptomator's "Vault" page; cryptofs's Constants).
const (
	DataDir       = "d"            // all directories, flattened: d/XX/YYYY...
	suffixC9R     = ".c9r"         // an encrypted name
	suffixC9S     = ".c9s"         // a shortened name: a folder
	NameFile      = "name.c9s"     // in a .c9s folder: the full encrypted name
	ContentsFile  = "contents.c9r" // in a .c9s folder: a file's content
	DirFile       = "dir.c9r"      // a directory: its directory ID, in plain text
	SymlinkFile   = "symlink.c9r"  // a symlink: its target, encrypted like a file
	dirIDBackup   = "dirid.c9r"    // in a content directory: its own ID, encrypted like a file
	MaxDirIDLen   = 36             // a UUID
	maxNameFile   = 10 << 10       // cryptofs reads at most 10 KiB of name.c9s
	MaxSymlinkLen = 32767          // cryptofs's limit on a link target
	// rootDirID is the root directory's ID.
	rootDirID = ""
)

// nameB64 is base64url with padding, as Cryptomator writes names; Strict refuses non-zero
// trailing bits and crypto.DecodeBase64 line breaks, so one name has one spelling (two
// spellings would list one name twice).
var nameB64 = base64.URLEncoding.Strict()

// Names encrypts and decrypts entry names and hashes directory IDs with AES-SIV under the
// master key.
type Names struct {
	key []byte // the SIV key: MAC key, then encryption key
}

// NewNames returns the name encryption of master key k.
func NewNames(k *Masterkey) *Names { return &Names{key: k.sivKey()} }

// Wipe overwrites the key.
func (n *Names) Wipe() { crypto.Wipe(n.key) }

// Encrypt returns the stored name (before shortening) of the entry name in the directory
// with ID dirID: base64url(AES-SIV(NFC(name), dirID)) + ".c9r". The parent's ID as
// associated data binds the name to its directory.
func (n *Names) Encrypt(dirID, name string) string {
	return n.encryptAsIs(dirID, norm.NFC.String(name))
}

// encryptAsIs is Encrypt without the normalization: the stored name a writer that does not
// normalize (rclone's backend) gives name.
func (n *Names) encryptAsIs(dirID, name string) string {
	sealed, err := crypto.SIVSeal(n.key, []byte(name), []byte(dirID))
	if err != nil {
		panic("cryptomator: " + err.Error()) // only a bad key length gets here
	}
	return nameB64.EncodeToString(sealed) + suffixC9R
}

// Decrypt returns the plaintext name of stored (an encrypted name with ".c9r") in the
// directory with ID dirID. A name that does not authenticate, or that decrypts to something
// that cannot be a file name ("", ".", "..", a "/" or NUL), is an error wrapping
// layout.ErrCorrupt.
func (n *Names) Decrypt(dirID, stored string) (string, error) {
	enc, ok := strings.CutSuffix(stored, suffixC9R)
	if !ok {
		return "", fmt.Errorf("%w: %s is not an encrypted name (no %s)", layout.ErrCorrupt, stored, suffixC9R)
	}
	sealed, err := crypto.DecodeBase64(nameB64, enc)
	if err != nil {
		return "", fmt.Errorf("%w: %s is not base64url", layout.ErrCorrupt, stored)
	}
	pt, err := crypto.SIVOpen(n.key, sealed, []byte(dirID))
	if err != nil {
		return "", fmt.Errorf("%w: name %s does not decrypt in its directory: %w", layout.ErrCorrupt, stored, err)
	}
	name := string(pt)
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") || !utf8.ValidString(name) {
		return "", fmt.Errorf("%w: name %s decrypts to %q, which cannot be a file name", layout.ErrCorrupt, stored, name)
	}
	return name, nil
}

// DirPath returns where the directory with ID dirID keeps its entries, relative to the
// vault's folder: "d/" + the first 2 and the other 30 characters of
// base32(SHA-1(AES-SIV(dirID))), the SIV with no associated data at all.
func (n *Names) DirPath(dirID string) string {
	sealed, err := crypto.SIVSeal(n.key, []byte(dirID))
	if err != nil {
		panic("cryptomator: " + err.Error())
	}
	h := sha1.Sum(sealed)
	s := base32.StdEncoding.EncodeToString(h[:])
	return DataDir + "/" + s[:2] + "/" + s[2:]
}

// Shorten returns the .c9s folder name of a stored name that is too long:
// base64url(SHA-1(stored)) + ".c9s", stored with its ".c9r".
func Shorten(stored string) string {
	h := sha1.Sum([]byte(stored))
	return nameB64.EncodeToString(h[:]) + suffixC9S
}

// StoredName returns the name the encrypted name enc is stored under: enc itself, or when
// it is longer than threshold its .c9s folder's name (then long is enc, else "").
func StoredName(enc string, threshold int) (stored, long string) {
	if len(enc) > threshold {
		return Shorten(enc), enc
	}
	return enc, ""
}

// ParseNameFile checks the content b of the name.c9s in the .c9s folder stored and returns the
// encrypted name it holds: at most maxNameFile bytes that Shorten to stored, and longer than
// the vault's shortening threshold. A name within the threshold is stored as it is: behind a
// .c9s it would be a second entry of one name, listed twice. The name is not decrypted here.
func ParseNameFile(b []byte, stored string, threshold int) (string, error) {
	if len(b) > maxNameFile {
		return "", fmt.Errorf("%w: %s of %d bytes, at most %d", layout.ErrCorrupt, NameFile, len(b), maxNameFile)
	}
	enc := string(b)
	switch {
	case Shorten(enc) != stored:
		return "", fmt.Errorf("%w: %s does not hash to its folder's name", layout.ErrCorrupt, NameFile)
	case len(enc) <= threshold:
		return "", fmt.Errorf("%w: %s holds a name of %d characters, which is not shortened (threshold %d)", layout.ErrCorrupt, NameFile, len(enc), threshold)
	}
	return enc, nil
}

// ParseDirID checks the content b of a dir.c9r and returns the directory ID it holds: 1 to
// MaxDirIDLen bytes (a UUID), any of them; only the root's ID is empty, and no dir.c9r names
// the root.
func ParseDirID(b []byte) (string, error) {
	if len(b) == 0 || len(b) > MaxDirIDLen {
		return "", fmt.Errorf("%w: %s of %d bytes, want 1 to %d", layout.ErrCorrupt, DirFile, len(b), MaxDirIDLen)
	}
	return string(b), nil
}
