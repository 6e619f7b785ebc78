package app

import (
	"cmp"
	"runtime"
	"runtime/debug"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/buildinfo"
)

// VersionInfo is what a bug report needs to name: which vaultui, built with which Go and
// go-fuse, and which AEGIS code runs on this CPU.
type VersionInfo struct {
	// Vaultui is the version stamped at build time; else the module version Go recorded (a
	// "go install ...@v1.2.3"), or the commit where a build recorded it; else it says the
	// build was not stamped.
	Vaultui string
	// Go is the toolchain that built it, with the platform: "go1.26.8 linux/amd64".
	Go string
	// GoFuse is the version of github.com/hanwen/go-fuse/v2 built in.
	GoFuse string
	// AEGIS is the code that runs AEGIS here: "assembly: VAES-256" or "portable, constant
	// time" (no AES instructions, or a purego build).
	AEGIS string
}

// Version reports this build's versions.
func Version() VersionInfo {
	bi, _ := debug.ReadBuildInfo()
	// Stamped at build time (builds here run with -buildvcs=false, so the commit is not
	// recorded by itself): see internal/buildinfo.
	v := versionOf(buildinfo.Version, bi)
	name, hw := crypto.Implementation(crypto.AEGIS)
	v.AEGIS = name
	if hw {
		v.AEGIS = "assembly: " + name
	}
	return v
}

// versionOf is Version's vaultui, Go and go-fuse versions from the stamped version and the
// build's information (nil when there is none).
func versionOf(stamped string, bi *debug.BuildInfo) VersionInfo {
	v := VersionInfo{Vaultui: stamped, Go: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH,
		GoFuse: "unknown (not recorded in this build)"}
	if bi != nil {
		for _, d := range bi.Deps {
			if d.Path == "github.com/hanwen/go-fuse/v2" {
				v.GoFuse = d.Version
				if d.Replace != nil {
					v.GoFuse = d.Replace.Version + " (replaced by " + d.Replace.Path + ")"
				}
			}
		}
		v.Vaultui = cmp.Or(v.Vaultui, unstamped(bi))
	}
	v.Vaultui = cmp.Or(v.Vaultui, "devel (no version stamped)")
	return v
}

// unstamped is the version of a build without one stamped: the module's version when it was
// built as a dependency ("go install"), else the commit Go recorded, else "".
func unstamped(bi *debug.BuildInfo) string {
	if m := bi.Main.Version; m != "" && m != "(devel)" {
		return m
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return ""
	}
	if modified == "true" {
		rev += "-dirty"
	}
	return "devel, commit " + rev
}
