// Command release builds vaultui's release files from a clone of the repository:
//
//	go -C tools/release run . [-version V] [-arch amd64,arm64] [-out DIR]
//
// For each architecture it writes, into DIR (default dist/ at the top of the clone):
//
//	vaultui_V_linux_ARCH           the static binary (CGO_ENABLED=0, -trimpath, version stamped)
//	vaultui_V_linux_ARCH.tar.gz    that binary with the man page, completions and README
//	vaultui_V_ARCH.deb             Debian/Ubuntu package (depends on fuse3)
//	vaultui-V-1.ARCH.rpm           Fedora/openSUSE package (depends on fuse3)
//
// and SHA256SUMS over them all. The packages install /usr/bin/vaultui, the man page
// (/usr/share/man/man1/vaultui.1.gz), bash, zsh and fish completions where those shells look
// for a distribution's, and /usr/sbin/mount.vaultui, a symlink to the binary: mount(8)'s
// helper for the fstab type vaultui (found through /sbin, a link to /usr/sbin on merged-/usr
// systems).
//
// # Reproducible
//
// Two runs from the same commit with the same Go toolchain give the same bytes, wherever the
// clone is and whatever the build cache holds: -trimpath drops the clone's path, -buildvcs=false
// the VCS stamp (the version is stamped explicitly), and every time inside the archives and
// packages is SOURCE_DATE_EPOCH: the environment's if set, else the commit's time. Nothing
// is fetched once "go mod download" has run in both modules (the top one and this one).
//
// V is -version, else $VERSION, else "git describe --tags --always --dirty". The binary is
// stamped with V as it is (internal/buildinfo.Version); the packages get a version their
// managers order: a leading v dropped, and "0.0.0~git" before a V that is no version number
// (a bare commit hash).
//
// nfpm (github.com/goreleaser/nfpm/v2) builds the .deb and .rpm: it writes both formats
// without dpkg or rpmbuild installed, and takes a fixed mtime, so the packages are
// reproducible too. It brings about 100 modules, which is why this tool is a module of its
// own: vaultui itself does not depend on it.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

const module = "github.com/vaultui/vaultui"

func main() {
	version := flag.String("version", os.Getenv("VERSION"), "the version to stamp (default: $VERSION, else git describe --tags --always --dirty)")
	arches := flag.String("arch", "amd64,arm64", "comma-separated GOARCH values to build")
	out := flag.String("out", "", "output directory (default: dist at the top of the clone)")
	flag.Parse()
	if err := run(*version, strings.Split(*arches, ","), *out); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(version string, arches []string, out string) error {
	root, err := findRoot()
	if err != nil {
		return err
	}
	if version == "" {
		if version, err = git(root, "describe", "--tags", "--always", "--dirty"); err != nil {
			return fmt.Errorf("no -version given and git describe failed: %w", err)
		}
	}
	commit, _ := git(root, "rev-parse", "HEAD") // "" outside a git clone
	epoch, err := sourceDate(root)
	if err != nil {
		return err
	}
	if out == "" {
		out = filepath.Join(root, "dist")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	fmt.Printf("vaultui %s (commit %s), SOURCE_DATE_EPOCH %d (%s)\n", version, orNone(commit), epoch.Unix(), epoch.UTC().Format(time.RFC3339))

	var written []string
	var docs *extras
	for _, arch := range arches {
		bin := filepath.Join(out, fmt.Sprintf("vaultui_%s_linux_%s", version, arch))
		if err := build(root, arch, version, commit, bin); err != nil {
			return err
		}
		written = append(written, bin)
		fmt.Println("built", bin)
		if docs == nil && arch == runtime.GOARCH {
			if docs, err = generate(bin); err != nil {
				return err
			}
		}
	}
	if docs == nil {
		// No binary of this machine's architecture among those built: one just for the docs.
		tmp, err := os.MkdirTemp("", "vaultui-release")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		host := filepath.Join(tmp, "vaultui")
		if err := build(root, runtime.GOARCH, version, commit, host); err != nil {
			return err
		}
		if docs, err = generate(host); err != nil {
			return err
		}
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		return err
	}
	docs.readme = readme
	for i, arch := range arches {
		bin, err := os.ReadFile(written[i])
		if err != nil {
			return err
		}
		name := fmt.Sprintf("vaultui_%s_linux_%s.tar.gz", version, arch)
		if err := writeFile(filepath.Join(out, name), func(w io.Writer) error {
			return writeTarball(w, strings.TrimSuffix(name, ".tar.gz"), bin, docs, epoch)
		}); err != nil {
			return err
		}
		written = append(written, filepath.Join(out, name))
		pkgs, err := writePackages(out, version, arch, written[i], docs, epoch)
		if err != nil {
			return err
		}
		written = append(written, pkgs...)
		for _, p := range append([]string{name}, pkgs...) {
			fmt.Println("wrote", filepath.Join(out, filepath.Base(p)))
		}
	}
	return writeSums(filepath.Join(out, "SHA256SUMS"), written)
}

// findRoot is the top of the vaultui clone: the nearest directory up from here whose go.mod
// is vaultui's (this tool runs in tools/release, a module of its own).
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(data), "module "+module+"\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside a clone of vaultui (no go.mod of " + module + " above here)")
		}
		dir = parent
	}
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	return strings.TrimSpace(string(b)), err
}

// sourceDate is SOURCE_DATE_EPOCH, else the time of the commit checked out.
func sourceDate(root string) (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		var err error
		if s, err = git(root, "log", "-1", "--format=%ct"); err != nil {
			return time.Time{}, fmt.Errorf("no SOURCE_DATE_EPOCH and no commit time from git: %w", err)
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", s, err)
	}
	return time.Unix(n, 0).UTC(), nil
}

// build builds the static binary for linux/arch. The environment is set in full for what
// changes the output (the micro-architecture levels included), so the builder's own
// settings (GOFLAGS, GOAMD64, ...) do not leak into a release.
func build(root, arch, version, commit, dst string) error {
	ldflags := fmt.Sprintf("-s -w -X %[1]s/internal/buildinfo.Version=%s -X %[1]s/internal/buildinfo.Commit=%s", module, version, commit)
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", dst, ".")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch,
		"GOFLAGS=-mod=readonly", "GOAMD64=v1", "GOARM64=v8.0", "GOEXPERIMENT=")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build for linux/%s: %w", arch, err)
	}
	return nil
}

// extras are the files that come with the binary, made by the binary itself.
type extras struct {
	man                     []byte // vaultui.1, gzipped
	bash, zsh, fish, readme []byte
}

func generate(bin string) (*extras, error) {
	var e extras
	man, err := exec.Command(bin, "man").Output()
	if err != nil {
		return nil, fmt.Errorf("%s man: %w", bin, err)
	}
	if e.man, err = gzipped(man); err != nil {
		return nil, err
	}
	for shell, dst := range map[string]*[]byte{"bash": &e.bash, "zsh": &e.zsh, "fish": &e.fish} {
		if *dst, err = exec.Command(bin, "completion", shell).Output(); err != nil {
			return nil, fmt.Errorf("%s completion %s: %w", bin, shell, err)
		}
	}
	return &e, nil
}

// gzipped compresses data as gzip -9n does: no name, no time, so the same bytes each time.
func gzipped(data []byte) ([]byte, error) {
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	zw.Write(data)
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeTarball writes the release archive: a folder named dir with the binary, the man page,
// the completions and the README, every entry owned by root with the time mtime.
func writeTarball(w io.Writer, dir string, bin []byte, e *extras, mtime time.Time) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	entries := []struct {
		name string
		mode int64
		data []byte
	}{
		{"", 0o755, nil},
		{"vaultui", 0o755, bin},
		{"vaultui.1.gz", 0o644, e.man},
		{"README.md", 0o644, e.readme},
		{"completions/", 0o755, nil},
		{"completions/vaultui.bash", 0o644, e.bash},
		{"completions/_vaultui", 0o644, e.zsh},
		{"completions/vaultui.fish", 0o644, e.fish},
	}
	for _, f := range entries {
		hdr := &tar.Header{Name: dir + "/" + f.name, Mode: f.mode, ModTime: mtime, Uname: "root", Gname: "root",
			Typeflag: tar.TypeReg, Size: int64(len(f.data)), Format: tar.FormatPAX}
		if f.name == "" || strings.HasSuffix(f.name, "/") {
			hdr.Typeflag, hdr.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// writeFile writes a file through fill, all or nothing.
func writeFile(path string, fill func(io.Writer) error) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := fill(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// writeSums writes SHA256SUMS in sha256sum's format, names relative to its folder.
func writeSums(path string, files []string) error {
	sort.Strings(files)
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), filepath.Base(f))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s:\n%s", path, b.String())
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
