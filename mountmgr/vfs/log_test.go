package vfs

import (
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
