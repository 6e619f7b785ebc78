package app

import (
	"strconv"
	"strings"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault"
)

// Compat says which programs open a vault with a given content cipher. It is what a user
// trades for speed: a vault that only vaultui opens cannot be mounted on Windows or Android,
// nor with gocryptfs on another Linux machine.
type Compat struct {
	Cipher crypto.CipherID
	// Programs open the vault, vaultui first, e.g. "cppcryptfs (Windows)".
	Programs []string
	// Short is Programs for a table column: "vaultui only", "vaultui, gocryptfs >= 2.2".
	Short string
	// Others says who cannot open it and what they say; "" when the usual tools can.
	Others string
}

// compat is the one table of who opens what, by content cipher.
var compat = map[crypto.CipherID]Compat{
	crypto.AEGIS: {
		Programs: []string{"vaultui"},
		Short:    "vaultui only",
		Others: `released gocryptfs says Unknown feature flag "AEGIS256X2", ` +
			`and cppcryptfs (Windows) and DroidFS (Android) cannot open it either`,
	},
	crypto.AESGCM: {
		Programs: []string{"vaultui", "gocryptfs", "cppcryptfs (Windows)", "DroidFS (Android)", "SiriKali (via gocryptfs)"},
		Short:    "vaultui, gocryptfs, cppcryptfs, DroidFS, SiriKali",
	},
	crypto.XChaCha: {
		Programs: []string{"vaultui", "gocryptfs 2.2 or later"},
		Short:    "vaultui, gocryptfs >= 2.2",
	},
	CryptomatorVault: {
		Programs: []string{"vaultui", "Cryptomator (desktop, iOS, Android)"},
		Short:    "vaultui, Cryptomator",
	},
	crypto.AESSIV: {
		Programs: []string{"vaultui", "gocryptfs (its reverse mode's cipher)"},
		Short:    "vaultui, gocryptfs",
	},
}

// CryptomatorVault stands for a Cryptomator vault where a gocryptfs vault shows its content
// cipher (add, list, the TUI): a Cryptomator vault's cipher is its format's ("cipherCombo"),
// which info shows.
const CryptomatorVault crypto.CipherID = "cryptomator"

// CipherName is how a vault's cipher is shown in a list: the cipher's name, or "Cryptomator".
func CipherName(c crypto.CipherID) string {
	if c == CryptomatorVault {
		return "Cryptomator"
	}
	return c.String()
}

// OpensIn returns who opens a vault with content cipher c. An unknown cipher opens nowhere.
func OpensIn(c crypto.CipherID) Compat {
	cp, ok := compat[c]
	if !ok {
		return Compat{Cipher: c, Short: "unknown cipher", Others: "no program knows this cipher"}
	}
	cp.Cipher = c
	return cp
}

// VaultuiOnly reports whether only vaultui opens the vault.
func (c Compat) VaultuiOnly() bool { return len(c.Programs) == 1 }

// List is Programs as a sentence's list: "vaultui, gocryptfs and DroidFS (Android)".
func (c Compat) List() string {
	p := c.Programs
	switch len(p) {
	case 0:
		return "no program"
	case 1:
		return p[0]
	}
	return strings.Join(p[:len(p)-1], ", ") + " and " + p[len(p)-1]
}

// Detail is what "info" shows: the programs, and who cannot open it and why.
func (c Compat) Detail() string {
	s := c.List()
	if c.VaultuiOnly() {
		s += " only"
	}
	if c.Others != "" {
		s += " (" + c.Others + ")"
	}
	return s
}

// Sentence says it in full: "A vault with AES-256-GCM opens in vaultui, gocryptfs, ...".
func (c Compat) Sentence() string {
	if c.VaultuiOnly() {
		return "A vault with " + CipherName(c.Cipher) + " opens only in vaultui: " + c.Others + "."
	}
	s := "A vault with " + CipherName(c.Cipher) + " opens in " + c.List()
	if c.Others != "" {
		s += "; " + c.Others
	}
	return s + "."
}

// Format names a vault's on-disk format as "info" shows it: gocryptfs v2, and for a vault
// only vaultui opens, why.
func Format(version int, c crypto.CipherID) string {
	s := "gocryptfs v" + strconv.Itoa(version)
	if c == crypto.AEGIS {
		s += " with the " + vault.FlagAEGIS256X2 + " flag of gocryptfs's unreleased AEGIS branch: opens only in vaultui"
	}
	return s
}
