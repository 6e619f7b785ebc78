// Package buildinfo says which build of vaultui is running.
//
// A release build stamps Version (and Commit) with the linker:
//
//	go build -ldflags "-X github.com/vaultui/vaultui/internal/buildinfo.Version=v1.2.3"
//
// (tools/release does). A development build (go build, go run) leaves them empty; ID then
// tells builds apart by the executable's Go build ID, which changes with every change of
// code or toolchain.
package buildinfo

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"io"
	"os"
	"strings"
	"sync"
)

// Version is vaultui's version, e.g. "v1.2.3" or "v1.2.3-4-gabcdef0-dirty" (git describe);
// stamped by the release build with -ldflags -X
// github.com/vaultui/vaultui/internal/buildinfo.Version=...; "" in a development build.
var Version = ""

// Commit is the commit the release was built from (full hash); stamped by the release build
// with -ldflags -X github.com/vaultui/vaultui/internal/buildinfo.Commit=...; "" in a
// development build.
var Commit = ""

// ID names this build for telling builds apart (the daemon and its clients must be one
// build): "VERSION" when stamped, else "devel+" and a digest of the executable's Go build
// ID, else of its bytes. Computed once; "" when the executable cannot be read.
func ID() string {
	idOnce.Do(func() { id = idOf(Version, "/proc/self/exe") })
	return id
}

var (
	idOnce sync.Once
	id     string
)

// idOf is ID for the version stamp version and the executable at exe. /proc/self/exe stays
// readable when the file was deleted or replaced since (a daemon left running by go run).
func idOf(version, exe string) string {
	if version != "" {
		return version
	}
	f, err := os.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if bid := goBuildID(f); bid != "" {
		io.WriteString(h, bid)
	} else if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return "devel+" + hex.EncodeToString(h.Sum(nil)[:6])
}

// goBuildID reads the Go build ID note of an ELF executable ("" if it has none, e.g. linked
// with -buildid=): "actionID/contentID", where the content ID hashes the linked bytes.
func goBuildID(f *os.File) string {
	ef, err := elf.NewFile(f)
	if err != nil {
		return ""
	}
	s := ef.Section(".note.go.buildid")
	if s == nil {
		return ""
	}
	note, err := s.Data()
	// An ELF note: namesz, descsz, type (4 bytes each), "Go\x00\x00", the ID.
	if err != nil || len(note) < 16 || string(note[12:16]) != "Go\x00\x00" {
		return ""
	}
	return strings.TrimRight(string(note[16:]), "\x00")
}
