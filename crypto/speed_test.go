package crypto

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestRecommend(t *testing.T) {
	res := func(aegis, gcm, xchacha float64, aegisErr error) []SpeedResult {
		return []SpeedResult{{Cipher: AEGIS, MBps: aegis, Err: aegisErr}, {Cipher: AESGCM, MBps: gcm}, {Cipher: XChaCha, MBps: xchacha}, {Cipher: AESSIV, MBps: 100}}
	}
	cases := []struct {
		name    string
		results []SpeedResult
		hasAES  bool
		want    CipherID
		ratio   float64
		reason  string
	}{
		{"aegis faster", res(6200, 2000, 900, nil), true, AEGIS, 3.1, "AEGIS-256X2 is 3.1x faster than AES-256-GCM on this CPU"},
		{"aegis slower", res(1500, 2000, 900, nil), true, AESGCM, 1, "not faster"},
		{"aegis equal", res(2000, 2000, 900, nil), true, AESGCM, 1, "not faster"},
		{"aegis failed", res(0, 2000, 900, errors.New("boom")), true, AESGCM, 1, "could not be measured"},
		{"no aes", res(300, 200, 900, nil), false, XChaCha, 4.5, "no AES instructions"},
		{"no aes no gcm", res(0, 0, 900, nil), false, XChaCha, 0, "no AES instructions"},
	}
	for _, c := range cases {
		r := Recommend(c.results, c.hasAES)
		if r.Cipher != c.want || fmt.Sprintf("%.2f", r.Ratio) != fmt.Sprintf("%.2f", c.ratio) || !strings.Contains(r.Reason, c.reason) {
			t.Errorf("%s: got %+v, want %s ratio %.2f reason containing %q", c.name, r, c.want, c.ratio, c.reason)
		}
	}
}

func TestSpeedTestReportsEachCipher(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 2 s")
	}
	var seen []CipherID
	results, rec := SpeedTest(context.Background(), func(r SpeedResult) { seen = append(seen, r.Cipher) })
	if len(seen) != len(Ciphers) || len(results) != len(Ciphers) {
		t.Fatalf("reported %v, returned %d results", seen, len(results))
	}
	for i, r := range results {
		if r.Cipher != Ciphers[i] || seen[i] != Ciphers[i] {
			t.Fatalf("order: %v", seen)
		}
		if r.Err != nil || r.MBps <= 0 {
			t.Errorf("%s: %v MB/s, %v", r.Cipher, r.MBps, r.Err)
		}
		t.Logf("%-20s %8.0f MB/s", r.Cipher, r.MBps)
	}
	t.Logf("recommendation: %s (%s)", rec.Cipher, rec.Reason)
	if !rec.Cipher.Valid() || rec.Reason == "" {
		t.Fatalf("recommendation %+v", rec)
	}
}

func TestSpeedTestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	results, _ := SpeedTest(ctx, nil)
	for _, r := range results {
		if !errors.Is(r.Err, context.Canceled) {
			t.Errorf("%s: %v", r.Cipher, r.Err)
		}
	}
}
