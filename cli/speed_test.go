package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault"
)

// stubMeter gives fixed figures, or fails the test when measuring is not allowed.
type stubMeter struct {
	t     *testing.T
	allow bool
}

func (m stubMeter) Cipher(ctx context.Context, c crypto.CipherID, d time.Duration) (float64, error) {
	if !m.allow {
		m.t.Errorf("%s was measured", c)
	}
	return map[crypto.CipherID]float64{crypto.AEGIS: 7400, crypto.AESGCM: 2000, crypto.XChaCha: 900, crypto.AESSIV: 300}[c], nil
}

func (m stubMeter) Write(ctx context.Context, dir string, c crypto.CipherID, size int64) (app.WriteSample, error) {
	if !m.allow {
		m.t.Errorf("a write to %s was measured", dir)
	}
	if c == crypto.AESGCM {
		return app.WriteSample{Wall: 123 * time.Millisecond, CPU: 30 * time.Millisecond}, nil
	}
	return app.WriteSample{Wall: 100 * time.Millisecond, CPU: 10 * time.Millisecond}, nil
}

// TestInitAutoUsesTheRememberedTest: "init --cipher auto" takes the speed test another front
// end remembered (here: "vaultui speed", with a fixed meter) instead of measuring again, and
// says so, with what the choice gains and costs.
func TestInitAutoUsesTheRememberedTest(t *testing.T) {
	work := t.TempDir()
	t.Setenv("HOME", filepath.Join(work, "home"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(work, "config"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(work, "cache"))
	run := func(m app.Meter, args ...string) (string, string) {
		t.Helper()
		sp := app.NewSpeed()
		sp.Meter = m
		var out, errOut bytes.Buffer
		e := &env{ctx: t.Context(), stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, speed: sp, app: app.New(app.Options{}), commands: commands}
		if err := dispatch(e, args); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errOut.String())
		}
		return out.String(), errOut.String()
	}
	// The speed test measures the write in the folder the vaults go in.
	out, _ := run(stubMeter{t: t, allow: true}, "speed", "--dir", work)
	if !strings.Contains(out, "Recommended: AEGIS-256X2\nAEGIS-256X2 is 3.7x as fast") ||
		!strings.Contains(out, "writes 1.23x") {
		t.Fatalf("speed:\n%s", out)
	}

	pw := filepath.Join(work, "pw")
	if err := os.WriteFile(pw, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut := run(stubMeter{t: t}, "init", "--scryptn", "10", "--passfile", pw, filepath.Join(work, "v"))
	for _, s := range []string{"Using AEGIS-256X2 (speed test of ", `"vaultui speed" measures again`, "3.7x as fast",
		"opens only in vaultui."} {
		if !strings.Contains(errOut, s) {
			t.Errorf("init stderr lacks %q:\n%s", s, errOut)
		}
	}
	if !strings.Contains(out, "(AEGIS-256X2).\nA vault with AEGIS-256X2 opens only in vaultui") {
		t.Errorf("init stdout:\n%s", out)
	}
	if i, err := vault.ReadInfo(filepath.Join(work, "v")); err != nil || i.Cipher != crypto.AEGIS {
		t.Fatalf("the vault: %+v, %v", i, err)
	}
}
