package layout

import (
	"strings"
	"testing"

	"github.com/vaultui/vaultui/crypto"
)

func TestBadName(t *testing.T) {
	key := make([]byte, crypto.MasterKeyLen)
	key[0] = 7
	names, err := crypto.NewNameTransform(key, true, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	iv := make([]byte, crypto.DirIVLen)
	iv[3] = 1
	enc, err := names.EncryptName("report.odt", iv)
	if err != nil {
		t.Fatal(err)
	}
	long := crypto.LongNamePrefix + strings.Repeat("A", 43)
	for _, tc := range []struct{ stored, want string }{
		// Something appended by a tool: the name decrypts up to it.
		{enc + ".tmp~1", "report.odt.tmp~1" + BadNameSuffix},
		// Damaged: no prefix decrypts, so the stored name shows.
		{"x" + enc[1:], "x" + enc[1:] + BadNameSuffix},
		{long, long + BadNameSuffix},
		// Under another directory's IV the name is damage too.
		{strings.Repeat("B", 250), strings.Repeat("B", crypto.NameMax-len(BadNameSuffix)) + BadNameSuffix},
	} {
		got := BadName(tc.stored, iv, names)
		if got != tc.want {
			t.Errorf("BadName(%q) = %q, want %q", tc.stored, got, tc.want)
		}
		if len(got) > crypto.NameMax {
			t.Errorf("BadName(%q) is %d bytes, over NameMax", tc.stored, len(got))
		}
	}
}
