//go:build !purego

package crypto

// puregoBuild: see purego_test.go.
const puregoBuild = false
