// Package mountbench measures mounted vaults: sequential write and read with 1 MiB requests,
// random 4 KiB reads, creating empty files and listing them with their attributes. It runs
// the same workload on a vaultui mount per cipher, on a plain go-fuse passthrough mount (the
// ceiling: FUSE without crypto) and, when installed, on gocryptfs, all backed by the same
// directory (tmpfs by default) so the ratios come out of one run.
//
// It backs "vaultui bench"; it prints nothing itself.
package mountbench

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/mountmgr/vfs"
	"github.com/vaultui/vaultui/vault"
)

// Config says what to measure.
type Config struct {
	// Dir is where the backing directories go (default /dev/shm, a tmpfs, so the disk does
	// not dominate).
	Dir string
	// Size of the sequential file (default 1 GiB); requests are 1 MiB.
	Size int64
	// RandomReads is how many random 4 KiB reads to time (default 20000).
	RandomReads int
	// Files is how many empty files to create and list (default 10000).
	Files int
	// Ciphers to mount vaultui vaults with (default: every cipher this build has).
	Ciphers []crypto.CipherID
	// Gocryptfs is the gocryptfs binary; "" skips it.
	Gocryptfs string
	// NoLoopback skips the passthrough ceiling.
	NoLoopback bool
	// Runs repeats each target and reports the median of each figure (default 1).
	Runs int
	// UntarFrom, if set, is a directory (e.g. Go's source tree) tarred once and untarred into
	// each mount with tar(1), timed.
	UntarFrom string
}

// Result holds one target's figures.
type Result struct {
	Target        string  // e.g. "vaultui AEGIS-256X2", "gocryptfs AES-256-GCM", "loopback"
	WriteMBps     float64 // sequential write, 1 MiB requests
	ReadMBps      float64 // sequential read, 1 MiB requests, page cache dropped first
	RandReadIOPS  float64 // random 4 KiB reads
	CreatePerSec  float64 // empty files created per second
	ListPerSec    float64 // readdir + lstat of each ("ls -l"), entries per second
	CreateSeconds float64
	ListSeconds   float64
	UntarSeconds  float64 // 0 when not measured
	Err           error
}

const (
	reqSize  = 1 << 20
	pageSize = 4096
)

// Run measures every target, calling report as each one finishes.
func Run(ctx context.Context, cfg Config, report func(Result)) []Result {
	if cfg.Dir == "" {
		cfg.Dir = "/dev/shm"
	}
	if cfg.Size <= 0 {
		cfg.Size = 1 << 30
	}
	cfg.Size = (cfg.Size + reqSize - 1) / reqSize * reqSize
	if cfg.RandomReads <= 0 {
		cfg.RandomReads = 20000
	}
	if cfg.Files <= 0 {
		cfg.Files = 10000
	}
	if cfg.Runs <= 0 {
		cfg.Runs = 1
	}
	if len(cfg.Ciphers) == 0 {
		cfg.Ciphers = []crypto.CipherID{crypto.AEGIS, crypto.AESGCM, crypto.XChaCha, crypto.AESSIV}
	}
	type target struct {
		name  string
		mount func(backing, mnt string) (unmount func() error, err error)
	}
	var targets []target
	if !cfg.NoLoopback {
		targets = append(targets, target{"loopback (no crypto)", mountLoopback})
	}
	for _, c := range cfg.Ciphers {
		targets = append(targets, target{"vaultui " + c.String(), func(b, m string) (func() error, error) { return mountVaultui(b, m, c) }})
	}
	if cfg.Gocryptfs != "" {
		targets = append(targets, target{"gocryptfs " + crypto.AESGCM.String(), func(b, m string) (func() error, error) { return mountGocryptfs(cfg.Gocryptfs, b, m) }})
	}
	if cfg.UntarFrom != "" {
		tarball, err := makeTarball(cfg.Dir, cfg.UntarFrom)
		if err != nil {
			return []Result{{Target: "untar source", Err: err}}
		}
		defer os.Remove(tarball)
		cfg.UntarFrom = tarball
	}
	// Rounds go over every target in turn, rather than repeating one target before the next, so
	// a slow drift of the machine (other load, heap growth, caches) lands on every target alike
	// and the medians stay comparable.
	runs := make([][]Result, len(targets))
	var results []Result
	for round := 0; round < cfg.Runs && ctx.Err() == nil; round++ {
		for i, tg := range targets {
			if ctx.Err() != nil {
				break
			}
			runs[i] = append(runs[i], runOne(ctx, cfg, tg.name, tg.mount))
			if round == cfg.Runs-1 {
				r := median(runs[i])
				results = append(results, r)
				if report != nil {
					report(r)
				}
			}
		}
	}
	return results
}

func runOne(ctx context.Context, cfg Config, name string, mount func(backing, mnt string) (func() error, error)) Result {
	r := Result{Target: name}
	work, err := os.MkdirTemp(cfg.Dir, "vaultui-bench-")
	if err != nil {
		r.Err = err
		return r
	}
	defer os.RemoveAll(work)
	backing, mnt := filepath.Join(work, "backing"), filepath.Join(work, "mnt")
	os.Mkdir(backing, 0o700)
	os.Mkdir(mnt, 0o700)
	unmount, err := mount(backing, mnt)
	if err != nil {
		r.Err = err
		return r
	}
	defer func() {
		if err := unmount(); err != nil {
			syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	}()
	r.Err = measure(ctx, cfg, mnt, &r)
	return r
}

func measure(ctx context.Context, cfg Config, mnt string, r *Result) error {
	buf := make([]byte, reqSize)
	crand.Read(buf)
	p := filepath.Join(mnt, "seq.bin")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	start := time.Now()
	for off := int64(0); off < cfg.Size; off += reqSize {
		if _, err := f.Write(buf); err != nil {
			return fmt.Errorf("sequential write: %w", err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	r.WriteMBps = mbps(cfg.Size, time.Since(start))

	// Drop the mount's page cache for the file so reads go through the file system.
	unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	if _, err := f.Seek(0, 0); err != nil {
		return err
	}
	start = time.Now()
	var total int64
	for {
		n, err := f.Read(buf)
		total += int64(n)
		if n == 0 || err != nil {
			break
		}
	}
	r.ReadMBps = mbps(total, time.Since(start))
	if total != cfg.Size {
		return fmt.Errorf("sequential read: got %d bytes of %d", total, cfg.Size)
	}

	unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_RANDOM)
	rng := rand.New(rand.NewPCG(1, 2))
	page := buf[:pageSize]
	pages := cfg.Size / pageSize
	start = time.Now()
	for i := 0; i < cfg.RandomReads; i++ {
		if _, err := f.ReadAt(page, rng.Int64N(pages)*pageSize); err != nil {
			return fmt.Errorf("random read: %w", err)
		}
	}
	r.RandReadIOPS = float64(cfg.RandomReads) / time.Since(start).Seconds()
	f.Close()
	os.Remove(p)

	dir := filepath.Join(mnt, "files")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	start = time.Now()
	for i := 0; i < cfg.Files; i++ {
		fd, err := syscall.Open(filepath.Join(dir, "file-"+strconv.Itoa(i)), syscall.O_CREAT|syscall.O_WRONLY|syscall.O_EXCL|syscall.O_CLOEXEC, 0o600)
		if err != nil {
			return fmt.Errorf("create: %w", err)
		}
		syscall.Close(fd)
		if i%1000 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
	}
	d := time.Since(start)
	r.CreateSeconds, r.CreatePerSec = d.Seconds(), float64(cfg.Files)/d.Seconds()

	// "ls -l": let the kernel's entry and attribute caches (1 s here and in gocryptfs) expire.
	time.Sleep(1100 * time.Millisecond)
	start = time.Now()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		var st syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(dir, e.Name()), &st); err != nil {
			return fmt.Errorf("lstat: %w", err)
		}
	}
	d = time.Since(start)
	if len(ents) != cfg.Files {
		return fmt.Errorf("listing: %d entries, want %d", len(ents), cfg.Files)
	}
	r.ListSeconds, r.ListPerSec = d.Seconds(), float64(len(ents))/d.Seconds()

	if cfg.UntarFrom != "" {
		dest := filepath.Join(mnt, "untar")
		if err := os.Mkdir(dest, 0o700); err != nil {
			return err
		}
		start = time.Now()
		if out, err := exec.CommandContext(ctx, "tar", "-xf", cfg.UntarFrom, "-C", dest).CombinedOutput(); err != nil {
			return fmt.Errorf("untar: %w: %s", err, out)
		}
		r.UntarSeconds = time.Since(start).Seconds()
	}
	return nil
}

// makeTarball tars src into dir once, so every target untars the same bytes.
func makeTarball(dir, src string) (string, error) {
	f, err := os.CreateTemp(dir, "vaultui-bench-*.tar")
	if err != nil {
		return "", err
	}
	f.Close()
	if out, err := exec.Command("tar", "-cf", f.Name(), "-C", filepath.Dir(src), filepath.Base(src)).CombinedOutput(); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("tar of %s: %w: %s", src, err, out)
	}
	return f.Name(), nil
}

// median returns the median of each figure over runs (the first error, if any run failed).
func median(runs []Result) Result {
	out := Result{Target: runs[0].Target}
	for _, r := range runs {
		if r.Err != nil {
			out.Err = r.Err
			return out
		}
	}
	pick := func(get func(Result) float64) float64 {
		v := make([]float64, len(runs))
		for i, r := range runs {
			v[i] = get(r)
		}
		sort.Float64s(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	out.WriteMBps = pick(func(r Result) float64 { return r.WriteMBps })
	out.ReadMBps = pick(func(r Result) float64 { return r.ReadMBps })
	out.RandReadIOPS = pick(func(r Result) float64 { return r.RandReadIOPS })
	out.CreatePerSec = pick(func(r Result) float64 { return r.CreatePerSec })
	out.ListPerSec = pick(func(r Result) float64 { return r.ListPerSec })
	out.CreateSeconds = pick(func(r Result) float64 { return r.CreateSeconds })
	out.ListSeconds = pick(func(r Result) float64 { return r.ListSeconds })
	out.UntarSeconds = pick(func(r Result) float64 { return r.UntarSeconds })
	return out
}

func mbps(n int64, d time.Duration) float64 { return float64(n) / 1e6 / d.Seconds() }

// mountOptions are the FUSE options vaultui uses, so the ceiling is comparable.
func loopbackOptions(backing string) *fs.Options {
	timeout := time.Second
	return &fs.Options{
		MountOptions: fuse.MountOptions{
			FsName: backing, Name: "vaultui-bench", MaxWrite: reqSize, MaxReadAhead: reqSize,
			DirectMount: true, DisableXAttrs: true, MaxBackground: 64,
			// go-fuse's loopback would hand reads and writes to the kernel (FUSE passthrough),
			// which no encrypting file system can; the ceiling is FUSE round trips.
			DisabledCapabilities: fuse.CAP_PASSTHROUGH, DisableSplice: true,
			Options: []string{"default_permissions"},
		},
		EntryTimeout: &timeout, AttrTimeout: &timeout, NegativeTimeout: &timeout,
	}
}

func mountLoopback(backing, mnt string) (func() error, error) {
	root, err := fs.NewLoopbackRoot(backing)
	if err != nil {
		return nil, err
	}
	server, err := fs.Mount(mnt, root, loopbackOptions(backing))
	if err != nil {
		return nil, err
	}
	vfs.RaiseReadahead(mnt) // the same large reads as vaultui mounts get
	return server.Unmount, nil
}

var benchPassword = []byte("vaultui bench password")

func mountVaultui(backing, mnt string, c crypto.CipherID) (func() error, error) {
	key, err := vault.Create(backing, benchPassword, vault.CreateOptions{Cipher: c, ScryptLogN: crypto.MinScryptLogN})
	if err != nil {
		return nil, err
	}
	defer crypto.Wipe(key)
	v, err := vault.OpenWithMasterKey(backing, key) // just created: nothing to check it on yet
	if err != nil {
		return nil, err
	}
	m, err := vfs.Mount(mnt, vfs.Volume{Dir: v.Dir, Content: v.Content, Names: v.Names, PerDirIV: v.Config.Has(vault.FlagDirIV)}, vfs.Options{})
	if err != nil {
		v.Close()
		return nil, err
	}
	return func() error {
		err := m.Unmount()
		if err == nil {
			v.Close()
		}
		return err
	}, nil
}

func mountGocryptfs(bin, backing, mnt string) (func() error, error) {
	pf := backing + ".pw"
	if err := os.WriteFile(pf, benchPassword, 0o600); err != nil {
		return nil, err
	}
	defer os.Remove(pf)
	if out, err := exec.Command(bin, "-init", "-q", "-scryptn", "10", "-passfile", pf, backing).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("gocryptfs -init: %w: %s", err, out)
	}
	if out, err := exec.Command(bin, "-q", "-passfile", pf, backing, mnt).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("gocryptfs mount: %w: %s", err, out)
	}
	return func() error {
		var err error
		for i := 0; i < 50; i++ {
			var out []byte
			if out, err = exec.Command("fusermount3", "-u", mnt).CombinedOutput(); err == nil {
				return nil
			}
			err = errors.New(string(out))
			time.Sleep(100 * time.Millisecond)
		}
		return err
	}, nil
}
