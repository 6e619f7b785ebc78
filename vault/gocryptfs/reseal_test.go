package gocryptfs

import (
	"slices"
	"testing"

	"github.com/vaultui/vaultui/crypto"
)

// TestResealFlags checks the resealed feature flags of every pair: they validate, select
// the new cipher and keep every flag that is not the content cipher's.
func TestResealFlags(t *testing.T) {
	for _, from := range crypto.Ciphers {
		for _, to := range crypto.Ciphers {
			for _, opts := range []CreateOptions{{Cipher: from}, {Cipher: from, PlaintextNames: true},
				{Cipher: from, DeterministicNames: true, LongNameMax: 100}} {
				c := &Config{Version: ConfigVersion, FeatureFlags: opts.Flags()}
				got := convertFlags(c.FeatureFlags, to)
				nc := &Config{Version: ConfigVersion, FeatureFlags: got}
				if nc.Cipher() != to {
					t.Errorf("%s -> %s: flags %v select %s", from, to, got, nc.Cipher())
				}
				want := (CreateOptions{Cipher: to, PlaintextNames: opts.PlaintextNames, DeterministicNames: opts.DeterministicNames, LongNameMax: opts.LongNameMax}).Flags()
				if !slices.Equal(got, want) {
					t.Errorf("%s -> %s: flags %v, want what init writes: %v", from, to, got, want)
				}
			}
		}
	}
}
