package main

import "testing"

func TestPackageVersion(t *testing.T) {
	for in, want := range map[string]string{
		"v1.2.3":                  "1.2.3",
		"v1.2.3-4-gabcdef0":       "1.2.3+4.gabcdef0",
		"v1.2.3-4-gabcdef0-dirty": "1.2.3+4.gabcdef0.dirty",
		"v1.3.0-rc1":              "1.3.0~rc1",
		"1.0":                     "1.0",
		"abcdef0":                 "0.0.0~gitabcdef0",
		"abcdef0-dirty":           "0.0.0~gitabcdef0.dirty",
	} {
		if got := packageVersion(in); got != want {
			t.Errorf("packageVersion(%q) = %q, want %q", in, got, want)
		}
	}
}
