package ui

import (
	"strings"
	"testing"
)

// TestConvertFromInfo: info offers convert; the plan is shown before anything starts, y
// converts with the keyring's password when it works and asks when it does not; a mounted
// vault is refused with the core's reason.
func TestConvertFromInfo(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	tm.keys("i")
	wantView(t, tm, "C convert cipher")
	tm.keys("C")
	wantView(t, tm, "convert · work", "AES-256-GCM", "XChaCha20-Poly1305", "into a Cryptomator vault")
	if strings.Contains(tm.View(), "› AEGIS-256X2") {
		t.Fatal("the vault's own cipher is offered")
	}
	tm.keys("enter")
	wantView(t, tm, "Convert from AEGIS-256X2 to AES-256-GCM", "3.0 GB in 120 files", "/data/work.crypt.old-aegis", "sync tool uploads")
	if len(fb.converted) != 0 {
		t.Fatal("converted before y")
	}
	tm.keys("y")
	wantView(t, tm, "Password")
	tm.keys("bad", "enter")
	wantView(t, tm, "Wrong password.")
	tm.keys("hunter22", "enter")
	wantView(t, tm, "Converted work to AES-256-GCM.", "kept at /data/work.crypt.old-aegis")
	if strings.Join(fb.converted, ",") != "/data/work.crypt aes-gcm" {
		t.Fatalf("converted %q", fb.converted)
	}

	// With the password in the keyring, y converts without asking.
	fb.stored = map[string]string{"/data/photos.crypt": "hunter22"}
	tm.keys("esc", "down", "i", "C", "enter", "y")
	wantView(t, tm, "Converted photos to")

	// A mounted vault is refused before anything starts.
	fb.mounts = mountWork(fb, 0, 0)
	tm.keys("esc", "up", "i", "C", "enter")
	wantView(t, tm, "is mounted")
}

// TestConvertIntoFormat: the convert screen also offers the other formats; picking one plans
// and converts into it, and the plan says what the new format cannot hold.
func TestConvertIntoFormat(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	tm.keys("i", "C", "down", "down", "down", "down", "enter")
	wantView(t, tm, "Convert from gocryptfs AEGIS-256X2 to Cryptomator SIV_GCM")
	tm.keys("y", "hunter22", "enter")
	wantView(t, tm, "Converted work to")
	if strings.Join(fb.converted, ",") != "/data/work.crypt  into cryptomator" {
		t.Fatalf("converted %q", fb.converted)
	}
}
