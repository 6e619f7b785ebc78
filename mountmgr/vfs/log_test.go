package vfs

import (
	"crypto/sha256"
	"log"
	"strings"
	"testing"
)

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func testLogger(t testing.TB) *log.Logger { return log.New(tWriter{t}, "", 0) }

func crypto256(b []byte) [32]byte { return sha256.Sum256(b) }
