package vault

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestMasterKeyFormatRoundTrip(t *testing.T) {
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i * 7)
	}
	lines := FormatMasterKey(key)
	want := []string{"00070e15-1c232a31-383f464d-545b6269-", "70777e85-8c939aa1-a8afb6bd-c4cbd2d9"}
	if fmt.Sprint(lines) != fmt.Sprint(want) {
		t.Fatalf("got %q, want %q", lines, want)
	}
	for _, typed := range []string{strings.Join(lines, "\n"), strings.Join(lines, ""), strings.ReplaceAll(strings.Join(lines, ""), "-", ""), " " + strings.Join(lines, " ") + "\n"} {
		got, err := ParseMasterKey(typed)
		if err != nil || !bytes.Equal(got, key) {
			t.Errorf("parse %q: %x, %v", typed, got, err)
		}
	}
	for _, bad := range []string{"", "00", "zz" + strings.Repeat("0", 62), strings.Repeat("0", 66)} {
		if _, err := ParseMasterKey(bad); err == nil {
			t.Errorf("parse %q: accepted", bad)
		}
	}
}
