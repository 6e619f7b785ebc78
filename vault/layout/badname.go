package layout

import (
	"unicode/utf8"

	"github.com/vaultui/vaultui/crypto"
)

// BadNameSuffix ends the name under which an entry whose stored name does not decrypt is shown
// when asked for (mount --badname, mount --forcedecode, export --force). It is gocryptfs's
// -badname marker, so that what was written for gocryptfs keeps working.
const BadNameSuffix = " GOCRYPTFS_BAD_NAME"

// BadName is the name an entry shows under whose stored name does not decrypt under iv (a
// damaged name, or one a tool appended something to): the plaintext of the longest prefix of
// the stored name that decrypts to valid UTF-8, followed by the rest of the stored name as it
// is, or else the stored name itself; then BadNameSuffix, within crypto.NameMax bytes. A long
// name whose .name file does not decrypt shows under its stored name.
//
// gocryptfs tries the prefixes the same way. A prefix of garbage decrypts about once in 300
// (its padding happens to check): requiring valid UTF-8, as every typed name is, keeps most
// of those out.
func BadName(stored string, iv []byte, names *crypto.NameTransform) string {
	shown := stored
	if !crypto.IsLongName(stored) {
		for n := len(stored) - 1; n > 0; n-- {
			if !names.WellFormed(stored[:n]) {
				continue // most lengths are not base64 of a multiple of 16 bytes
			}
			if p, err := names.DecryptName(stored[:n], iv); err == nil && utf8.ValidString(p) {
				shown = p + stored[n:]
				break
			}
		}
	}
	return truncateUTF8(shown, crypto.NameMax-len(BadNameSuffix)) + BadNameSuffix
}
