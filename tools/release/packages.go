package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/goreleaser/nfpm/v2"
	_ "github.com/goreleaser/nfpm/v2/deb" // registers the deb packager
	"github.com/goreleaser/nfpm/v2/files"
	_ "github.com/goreleaser/nfpm/v2/rpm" // registers the rpm packager
)

const description = `encrypted folders (gocryptfs and Cryptomator vaults) in a terminal app
vaultui creates, mounts, checks, exports and converts encrypted folders in the
gocryptfs v2 and Cryptomator 8 formats, through a per-user mount manager, from
a terminal app or the command line. The fstab type vaultui mounts vaults at
boot (mount.vaultui).`

// writePackages writes the .deb and .rpm of the binary bin for arch into out and returns
// their paths.
func writePackages(out, version, arch, bin string, e *extras, mtime time.Time) ([]string, error) {
	stage, err := os.MkdirTemp("", "vaultui-pkg")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage)
	staged := map[string][]byte{"vaultui.1.gz": e.man, "vaultui.bash": e.bash, "_vaultui": e.zsh, "vaultui.fish": e.fish}
	for name, data := range staged {
		if err := os.WriteFile(filepath.Join(stage, name), data, 0o644); err != nil {
			return nil, err
		}
	}
	file := func(src, dst string, mode os.FileMode, packager string) *files.Content {
		return &files.Content{Source: src, Destination: dst, Packager: packager,
			FileInfo: &files.ContentFileInfo{Owner: "root", Group: "root", Mode: mode, MTime: mtime}}
	}
	contents := files.Contents{
		file(bin, "/usr/bin/vaultui", 0o755, ""),
		// mount(8)'s helper for the fstab type vaultui. mount looks in /sbin, which is
		// /usr/sbin on merged-/usr systems (Debian 12, Ubuntu 22.04, Fedora and later).
		{Source: "/usr/bin/vaultui", Destination: "/usr/sbin/mount.vaultui", Type: files.TypeSymlink,
			FileInfo: &files.ContentFileInfo{Owner: "root", Group: "root", MTime: mtime}},
		file(filepath.Join(stage, "vaultui.1.gz"), "/usr/share/man/man1/vaultui.1.gz", 0o644, ""),
		file(filepath.Join(stage, "vaultui.bash"), "/usr/share/bash-completion/completions/vaultui", 0o644, ""),
		// zsh: Debian's vendor folder, Fedora's site-functions.
		file(filepath.Join(stage, "_vaultui"), "/usr/share/zsh/vendor-completions/_vaultui", 0o644, "deb"),
		file(filepath.Join(stage, "_vaultui"), "/usr/share/zsh/site-functions/_vaultui", 0o644, "rpm"),
		file(filepath.Join(stage, "vaultui.fish"), "/usr/share/fish/vendor_completions.d/vaultui.fish", 0o644, ""),
	}
	summary, body, _ := strings.Cut(description, "\n")
	var written []string
	for _, format := range []string{"deb", "rpm"} {
		desc := description // deb: the first line is the synopsis
		if format == "rpm" {
			desc = body // rpm has a Summary of its own
		}
		info := nfpm.WithDefaults(&nfpm.Info{
			Name:          "vaultui",
			Arch:          arch,
			Platform:      "linux",
			Version:       packageVersion(version),
			VersionSchema: "none",
			Section:       "utils",
			Priority:      "optional",
			Maintainer:    "The vaultui authors <https://github.com/vaultui/vaultui>",
			Description:   desc,
			Homepage:      "https://github.com/vaultui/vaultui",
			MTime:         mtime,
			Overridables: nfpm.Overridables{
				Depends:    []string{"fuse3"},
				Recommends: []string{"bash-completion"},
				Contents:   contents,
				RPM: nfpm.RPM{
					// The default is this machine's name, which would make the package differ.
					BuildHost: "reproducible",
					Summary:   summary,
					Group:     "Applications/System",
				},
			},
		})
		if err := info.Validate(); err != nil {
			return nil, fmt.Errorf("%s package: %w", format, err)
		}
		pkg, err := nfpm.Get(format)
		if err != nil {
			return nil, err
		}
		path := filepath.Join(out, pkg.ConventionalFileName(info))
		if err := writeFile(path, func(f io.Writer) error { return pkg.Package(info, f) }); err != nil {
			return nil, err
		}
		written = append(written, path)
	}
	return written, nil
}

// packageVersion turns a stamp into a version dpkg and rpm order rightly and accept: no
// leading v, no hyphen (dpkg would take what follows for a Debian revision, rpm refuses it).
// "v1.2.3" is 1.2.3; git describe's "v1.2.3-4-gabcdef0-dirty" sorts after it, as
// "1.2.3+4.gabcdef0.dirty"; a pre-release "v1.3.0-rc1" before 1.3.0, as "1.3.0~rc1"; a bare
// commit "abcdef0" (no tag yet) is "0.0.0~gitabcdef0".
func packageVersion(v string) string {
	v = strings.TrimPrefix(v, "v")
	m := regexp.MustCompile(`^([0-9][0-9.]*)(?:-(.*))?$`).FindStringSubmatch(v)
	if m == nil {
		return "0.0.0~git" + strings.ReplaceAll(v, "-", ".")
	}
	base, rest := m[1], strings.ReplaceAll(m[2], "-", ".")
	switch {
	case rest == "":
		return base
	case rest[0] >= '0' && rest[0] <= '9':
		return base + "+" + rest
	default:
		return base + "~" + rest
	}
}
