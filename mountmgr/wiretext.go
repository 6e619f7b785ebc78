package mountmgr

import (
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/vaultui/vaultui/vault"
)

// wireText carries text that comes from a vault (names, details) across the socket byte for
// byte: JSON strings are UTF-8 (encoding/json puts U+FFFD for bytes that are not), and names
// need not be, so text that is not goes as {"b": base64 bytes}. Valid UTF-8 encodes as a
// plain string, as before: only names that a peer predating wireText would mangle change, and
// such a peer refuses the object with a decode error instead of misreading it.
type wireText string

func (t wireText) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(t)) {
		return json.Marshal(string(t))
	}
	return json.Marshal(struct {
		B []byte `json:"b"`
	}{[]byte(t)})
}

func (t *wireText) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '{' {
		var raw struct {
			B []byte `json:"b"`
		}
		if err := json.Unmarshal(b, &raw); err != nil {
			return err
		}
		*t = wireText(raw.B)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*t = wireText(s)
	return nil
}

// wireConflict is a vault.ConflictEntry on the wire.
type wireConflict struct {
	Kind                 wireText
	Path, Of, CipherPath wireText
	Tool, Date, Host     wireText
	Size                 int64
	Dir                  bool `json:",omitempty"`
	ModTime              time.Time
	Newer                wireText
	Entries              int `json:",omitempty"`
}

func toWireConflicts(list []vault.ConflictEntry) []wireConflict {
	out := make([]wireConflict, len(list))
	for i, e := range list {
		out[i] = wireConflict{Kind: wireText(e.Kind), Path: wireText(e.Path), Of: wireText(e.Of),
			CipherPath: wireText(e.CipherPath), Tool: wireText(e.Tool), Date: wireText(e.Date),
			Host: wireText(e.Host), Size: e.Size, Dir: e.Dir, ModTime: e.ModTime,
			Newer: wireText(e.Newer), Entries: e.Entries}
	}
	return out
}

func (e wireConflict) entry() vault.ConflictEntry {
	return vault.ConflictEntry{Kind: vault.ConflictKind(e.Kind), Path: string(e.Path), Of: string(e.Of),
		CipherPath: string(e.CipherPath), Tool: string(e.Tool), Date: string(e.Date),
		Host: string(e.Host), Size: e.Size, Dir: e.Dir, ModTime: e.ModTime,
		Newer: string(e.Newer), Entries: e.Entries}
}

// wireSettled is a vault.Settled on the wire.
type wireSettled struct {
	Moved       []wireMoved
	DirIVCopies []wireText
}

// wireMoved is a vault.MovedEntry on the wire.
type wireMoved struct {
	Path, Of, To wireText
	Renamed      bool
}

func toWireSettled(s vault.Settled) wireSettled {
	var w wireSettled
	if s.Moved != nil {
		w.Moved = make([]wireMoved, len(s.Moved))
		for i, m := range s.Moved {
			w.Moved[i] = wireMoved{wireText(m.Path), wireText(m.Of), wireText(m.To), m.Renamed}
		}
	}
	if s.DirIVCopies != nil {
		w.DirIVCopies = make([]wireText, len(s.DirIVCopies))
		for i, p := range s.DirIVCopies {
			w.DirIVCopies[i] = wireText(p)
		}
	}
	return w
}

func (w wireSettled) settled() vault.Settled {
	var s vault.Settled
	if w.Moved != nil {
		s.Moved = make([]vault.MovedEntry, len(w.Moved))
		for i, m := range w.Moved {
			s.Moved[i] = vault.MovedEntry{Path: string(m.Path), Of: string(m.Of), To: string(m.To), Renamed: m.Renamed}
		}
	}
	if w.DirIVCopies != nil {
		s.DirIVCopies = make([]string, len(w.DirIVCopies))
		for i, p := range w.DirIVCopies {
			s.DirIVCopies[i] = string(p)
		}
	}
	return s
}
