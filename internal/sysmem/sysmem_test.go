package sysmem

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAvailable: this process can allocate something, and the figure says where it comes from.
func TestAvailable(t *testing.T) {
	avail, source, err := Available()
	if err != nil || avail == 0 || source == "" {
		t.Fatalf("Available = %d, %q, %v", avail, source, err)
	}
}

// TestCgroupRoom: the room under the tightest memory limit among the process's cgroup and
// its ancestors counts, for cgroup v2 (memory.max, "max" = none) and v1.
func TestCgroupRoom(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "user.slice", "memory.max"), "1073741824")
	write(filepath.Join(root, "user.slice", "memory.current"), "536870912")
	write(filepath.Join(root, "user.slice", "app", "memory.max"), "max")
	write(filepath.Join(root, "user.slice", "app", "memory.current"), "1000")
	room, where, ok := cgroupRoomAt([]byte("0::/user.slice/app\n"), root)
	if !ok || room != 512<<20 || where != filepath.Join(root, "user.slice", "memory.max") {
		t.Errorf("v2: room %d at %q (%v), want 512 MiB at user.slice", room, where, ok)
	}
	write(filepath.Join(root, "memory", "docker", "memory.limit_in_bytes"), "268435456")
	write(filepath.Join(root, "memory", "docker", "memory.usage_in_bytes"), "300000000")
	room, _, ok = cgroupRoomAt([]byte("4:memory:/docker\n0::/user.slice/app\n"), root)
	if !ok || room != 0 {
		t.Errorf("v1 over its limit: room %d (%v), want 0", room, ok)
	}
	if _, _, ok := cgroupRoomAt([]byte("0::/none\n"), t.TempDir()); ok {
		t.Error("a limit found where there is none")
	}
}
