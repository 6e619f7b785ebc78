package layout

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vaultui/vaultui/crypto"
)

// Sync tools keep both versions of a file changed on two machines by renaming one, which in a
// cipherdir means renaming an *encrypted* name: the copy no longer decrypts, and gocryptfs would
// hide it. Conflict recognises the markers of the common tools anywhere in a name (a tool puts
// its marker before what it takes for an extension, so in "gocryptfs.longname.HASH" it lands
// before ".HASH"), and the caller checks that what is left is an entry of the format.

// Conflict describes a sync tool's conflict copy.
type Conflict struct {
	Tool string // "Dropbox", "Syncthing", "Nextcloud", "ownCloud", "OneDrive" or "Google Drive"
	Date string // YYYY-MM-DD, when the marker holds one
	Time string // HHMMSS, when the marker holds one
	Host string // the computer, device or user the marker names, if any
	Base string // the name without the marker: the entry this is a copy of
}

// conflictMarker is one tool's marker; fill takes the submatches into c.
type conflictMarker struct {
	re   *regexp.Regexp
	fill func(c *Conflict, m []string)
}

var conflictMarkers = []conflictMarker{
	// report.sync-conflict-20261130-101010-ABCDEF7.odt
	{regexp.MustCompile(`\.sync-conflict-(\d{4})(\d{2})(\d{2})-(\d{6})-([A-Z0-9]{7})`), func(c *Conflict, m []string) {
		c.Tool, c.Date, c.Time, c.Host = "Syncthing", m[1]+"-"+m[2]+"-"+m[3], m[4], m[5]
	}},
	// report (conflicted copy 2026-11-30 101010).odt, or with the user before the date
	{regexp.MustCompile(` \(conflicted copy (?:([^()]+) )?(\d{4}-\d{2}-\d{2}) (\d{6})\)`), func(c *Conflict, m []string) {
		c.Tool, c.Host, c.Date, c.Time = "Nextcloud", m[1], m[2], m[3]
	}},
	// report (Ann's conflicted copy 2026-11-30).odt, report (conflicted copy 2026-11-30 (1)).odt
	{regexp.MustCompile(` \((?:([^()]+)'s )?conflicted copy (\d{4}-\d{2}-\d{2})(?: \(\d+\))?\)`), func(c *Conflict, m []string) {
		c.Tool, c.Host, c.Date = "Dropbox", m[1], m[2]
	}},
	// report_conflict-20261130-101010.odt
	{regexp.MustCompile(`_conflict-(\d{4})(\d{2})(\d{2})-(\d{6})`), func(c *Conflict, m []string) {
		c.Tool, c.Date, c.Time = "ownCloud", m[1]+"-"+m[2]+"-"+m[3], m[4]
	}},
	// report (1).odt
	{regexp.MustCompile(` \((\d{1,3})\)`), func(c *Conflict, m []string) {
		c.Tool = "Google Drive"
	}},
}

// ParseConflict reports whether name is a conflict copy: a tool's marker whose removal leaves a
// name valid says is an entry of the format (it decrypts, or is the format's own file).
// OneDrive appends "-HOSTNAME", which base64url names can contain themselves, so it is
// recognised only when valid accepts what is left, like every other marker.
func ParseConflict(name string, valid func(base string) bool) (Conflict, bool) {
	for _, mk := range conflictMarkers {
		for _, loc := range mk.re.FindAllStringSubmatchIndex(name, -1) {
			base := name[:loc[0]] + name[loc[1]:]
			if !valid(base) {
				continue
			}
			m := make([]string, len(loc)/2)
			for i := range m {
				if loc[2*i] >= 0 {
					m[i] = name[loc[2*i]:loc[2*i+1]]
				}
			}
			c := Conflict{Base: base}
			mk.fill(&c, m)
			return c, true
		}
	}
	// NAME-HOSTNAME, the marker at the end or before the last dot.
	for i := 1; i < len(name); i++ {
		if name[i] != '-' {
			continue
		}
		end := len(name)
		if j := strings.LastIndexByte(name, '.'); j > i {
			end = j
		}
		host := name[i+1 : end]
		if host == "" || strings.ContainsAny(host, " ()") {
			continue
		}
		if base := name[:i] + name[end:]; valid(base) {
			return Conflict{Tool: "OneDrive", Host: host, Base: base}, true
		}
	}
	return Conflict{}, false
}

// maxLabelHost bounds the host a label shows: a host name is at most 63 bytes (a DNS label),
// but the marker is whatever follows a '-' in a stored name, up to the whole name, and a
// label that long would leave no room for the name in crypto.NameMax bytes.
const maxLabelHost = 63

// Label is the readable marker of a conflict copy in a plaintext name, without parentheses:
// "conflict 2026-11-30 Syncthing".
func (c Conflict) Label() string {
	s := "conflict"
	if c.Date != "" {
		s += " " + c.Date
	}
	s += " " + c.Tool
	if c.Date == "" && c.Host != "" {
		s += " " + truncateUTF8(c.Host, maxLabelHost)
	}
	return s
}

// ConflictName is the name a conflict copy of the file plain shows under: the label inserted
// before the extension, so the copy still opens in the right program, e.g.
// "report (conflict 2026-11-30 Syncthing).odt". taken reports names already in use; a
// number then tells copies apart. The name stays within crypto.NameMax bytes by shortening
// plain.
func ConflictName(plain string, c Conflict, taken func(string) bool) string {
	stem, ext := plain, ""
	if i := strings.LastIndexByte(plain, '.'); i > 0 && len(plain)-i <= 16 {
		stem, ext = plain[:i], plain[i:]
	}
	for n := 1; ; n++ {
		label := c.Label()
		if n > 1 {
			label += fmt.Sprintf(" %d", n)
		}
		mark := " (" + label + ")"
		s := stem
		if over := len(s) + len(mark) + len(ext) - crypto.NameMax; over > 0 {
			s = truncateUTF8(s, len(s)-over)
		}
		name := s + mark + ext
		if !taken(name) {
			return name
		}
	}
}

// truncateUTF8 cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncateUTF8(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if n >= len(s) {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// ConflictCopy checks whether the entry name in the directory open at dirfd (names encrypted
// under iv with names; root says the directory is the cipherdir's root) is a sync tool's
// conflict copy. plain is the plaintext name of the entry it copies, or "" when it copies the
// format's own files (gocryptfs.diriv, gocryptfs.conf, a .name file). decoratedNameFile
// reports that the copy has a .name file of its own (name + ".name"), which goes with it.
func ConflictCopy(dirfd int, name string, iv []byte, names *crypto.NameTransform, root bool) (c Conflict, plain string, decoratedNameFile bool, ok bool) {
	c, ok = ParseConflict(name, func(base string) bool {
		switch {
		case base == crypto.DirIVName || crypto.IsLongNameFile(base) || root && base == crypto.ConfName:
			plain = ""
			return true
		case crypto.IsLongName(base):
			// The .name file never changes, so a tool rarely renames it; if it did, the copy
			// of it sits beside the renamed entry.
			encoded, err := ReadLongName(dirfd, base, names)
			if err != nil {
				if encoded, err = ReadLongNameFile(dirfd, name+crypto.LongNameSuffix, base, names); err != nil {
					return false
				}
				decoratedNameFile = true
			}
			p, err := names.DecryptEntry(base, encoded, iv)
			plain = p
			return err == nil
		}
		p, err := names.DecryptEntry(base, base, iv)
		plain = p
		return err == nil
	})
	if ok && !decoratedNameFile && crypto.IsLongName(c.Base) {
		// Both renamed, but the original .name file is still there too.
		if _, err := ReadLongNameFile(dirfd, name+crypto.LongNameSuffix, c.Base, names); err == nil {
			decoratedNameFile = true
		}
	}
	return c, plain, decoratedNameFile, ok
}

// OtherIV is the IV of a sync tool's conflict copy of a directory's gocryptfs.diriv: when
// two machines made the same directory, entries made on one are encrypted under the IV that
// lost, and would vanish. They decrypt under it and show as that copy's conflict entries.
type OtherIV struct {
	IV []byte
	Conflict
}

// PlausibleName reports whether a decrypted name looks like one a person or a program gave an
// entry: valid UTF-8 without control characters. Names carry no authentication, so under a
// wrong IV (a folder made on two computers) a name still decrypts about once in 256, to
// random bytes, which almost never are that. Where a name decrypts under both IVs, the one
// that gives a plausible name is the one it was made under; vault's walk and the mount both
// go by this, so that they show an entry under the same name.
func PlausibleName(plain string) bool {
	if !utf8.ValidString(plain) {
		return false
	}
	for _, r := range plain {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// EntryUnderIV decrypts the entry name in dirfd (a plain or long name) under iv.
func EntryUnderIV(dirfd int, name string, iv []byte, names *crypto.NameTransform) (string, error) {
	encoded := name
	if crypto.IsLongName(name) {
		var err error
		if encoded, err = ReadLongName(dirfd, name, names); err != nil {
			return "", err
		}
	}
	return names.DecryptEntry(name, encoded, iv)
}
