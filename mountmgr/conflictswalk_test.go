package mountmgr

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/cryptomator/cmfixture"
	"github.com/vaultui/vaultui/vault/format"
)

// slowDir is a node of slowFS. Listing it takes delay if it is a Cryptomator directory's
// folder, d/XX/YYYY (depth 3): so each directory a walk lists takes delay.
type slowDir struct {
	fs.LoopbackNode
	depth int
	delay time.Duration
}

var _ = (fs.NodeOpendirHandler)((*slowDir)(nil))

func (n *slowDir) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	h, fl, errno := n.LoopbackNode.OpendirHandle(ctx, flags)
	if ld, ok := h.(loopbackListing); ok && n.depth == 3 {
		h = &slowListing{loopbackListing: ld, delay: n.delay}
	}
	return h, fl, errno
}

// loopbackListing is what go-fuse's loopback directory handle does.
type loopbackListing interface {
	fs.FileReaddirenter
	fs.FileReleasedirer
	fs.FileSeekdirer
	fs.FileFsyncdirer
}

// slowListing is a directory handle whose first entry comes after delay.
type slowListing struct {
	loopbackListing
	delay time.Duration
	slept bool
}

func (l *slowListing) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	if !l.slept {
		l.slept = true
		time.Sleep(l.delay)
	}
	return l.loopbackListing.Readdirent(ctx)
}

// slowFS serves the Cryptomator vault in dir at a new mount point (returned) through a
// loopback file system that takes delay to list each directory's folder, as a network file
// system or a huge vault makes a walk take long. It is unmounted when the test ends, before the test's daemon stops.
func slowFS(t *testing.T, dir string, delay time.Duration) string {
	t.Helper()
	mp, err := os.MkdirTemp("", "vmslow")
	if err != nil {
		t.Fatal(err)
	}
	root := &fs.LoopbackRoot{Path: dir}
	root.NewNode = func(r *fs.LoopbackRoot, parent *fs.Inode, _ string, _ *syscall.Stat_t) fs.InodeEmbedder {
		depth := 0
		if parent != nil {
			depth = parent.Operations().(*slowDir).depth + 1
		}
		return &slowDir{LoopbackNode: fs.LoopbackNode{RootData: r}, depth: depth, delay: delay}
	}
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	root.Dev = uint64(st.Dev)
	root.RootNode = root.NewNode(root, nil, "", &st)
	srv, err := fs.Mount(mp, root.RootNode, &fs.Options{})
	if err != nil {
		t.Skipf("mounting a loopback file system: %v", err)
	}
	t.Cleanup(func() {
		if srv.Unmount() != nil {
			unix.Unmount(mp, unix.MNT_DETACH) // the daemon still holds it: it goes when the daemon does
		}
		os.Remove(mp)
	})
	return filepath.Join(mp)
}

// redirectDirs rewrites the dir.c9r of each directory from (a plaintext path) of the
// Cryptomator vault in dir to name the ID of the directory to, as anyone who can write to a
// synced folder can: nothing authenticates a dir.c9r.
func redirectDirs(t *testing.T, dir string, pw []byte, fromTo ...[2]string) {
	t.Helper()
	vol, err := vault.UnlockVolume(context.Background(), dir, pw)
	if err != nil {
		t.Fatal(err)
	}
	defer vol.Close()
	cpaths := map[string]string{}
	if err := vault.WalkVolume(context.Background(), vol, func(n vault.Node) error {
		cpaths[n.Path] = n.CipherPath
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	dirFile := func(p string) string { return filepath.Join(dir, filepath.FromSlash(cpaths[p]), "dir.c9r") }
	for _, ft := range fromTo {
		id, err := os.ReadFile(dirFile(ft[1]))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dirFile(ft[0]), id, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConflictsWalkEnds: listing the conflicts of a mounted vault through the daemon is a
// walk of its cipherdir, which on a hostile or merely slow tree takes long. A client that
// gives up ends it, an unmount meanwhile ends it at once and wipes the keys, and a dir.c9r
// naming an ancestor's ID makes it an error rather than a walk that ends only when the
// daemon, and every mount with it, runs out of memory.
func TestConflictsWalkEnds(t *testing.T) {
	base := daemonEnv(t)
	pw, err := cmfixture.Password()
	if err != nil {
		t.Fatal(err)
	}
	// The shared fixture, its deepest folder naming sub's ID (a loop), on a file system
	// where listing a directory takes a second: the walk meets the loop after seven.
	dir := cmfixture.Folder(t)
	redirectDirs(t, dir, pw, [2]string{"sub/deeper/deepest", "sub"})
	const delay = time.Second
	cipherdir := slowFS(t, dir, delay)
	mp, err := os.MkdirTemp(base, "mnt")
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t)
	mount := func() {
		t.Helper()
		if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err != nil {
			t.Fatal(err)
		}
	}
	logPath := filepath.Join(base, "state", "vaultui", "daemon.log")
	logged := func(what string, within time.Duration) bool {
		for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if b, _ := os.ReadFile(logPath); strings.Contains(string(b), what) {
				return true
			}
		}
		return false
	}
	mount()

	// The client gives up after a while: the daemon's walk stops within about one step.
	gctx, cancel := context.WithCancel(ctx(t))
	time.AfterFunc(3*delay/2, cancel)
	_, err = c.Conflicts(gctx, mp)
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("conflicts the client gave up on: %v", err)
	}
	if !logged("conflicts of "+cipherdir+": the client went away; stopped", 3*delay) {
		t.Fatal("the daemon did not stop the walk whose client went away")
	}

	// An unmount (as before sleep) during the walk ends it, and is done: keys wiped.
	done := make(chan error, 1)
	go func() {
		_, err := connect(t).Conflicts(ctx(t), mp)
		done <- err
	}()
	time.Sleep(3 * delay / 2)
	start := time.Now()
	if err := c.Unmount(ctx(t), mp, false); err != nil {
		t.Fatalf("unmount during a conflicts walk: %v", err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotMounted) {
			t.Errorf("conflicts cut by the unmount: %v", err)
		}
	case <-time.After(5 * delay):
		t.Fatal("conflicts still running well after the unmount")
	}
	t.Logf("unmounted %v after it began", time.Since(start))
	if b, _ := os.ReadFile(logPath); strings.Contains(string(b), "serving it until it is released") {
		t.Fatal("the unmount left the file system served (its keys not wiped): the walk held them")
	}

	// Left alone, the walk meets the loop and says so.
	mount()
	lctx, cancel := context.WithTimeout(ctx(t), 20*delay)
	defer cancel()
	if _, err := c.Conflicts(lctx, mp); !errors.Is(err, vault.ErrCorrupt) || !strings.Contains(err.Error(), format.KindDirTwice) {
		t.Fatalf("conflicts of a vault with a loop: %v, want ErrCorrupt for a directory reached twice", err)
	}
	if err := c.Unmount(ctx(t), mp, false); err != nil {
		t.Fatal(err)
	}
}
