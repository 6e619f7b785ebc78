package cli

import (
	"strings"
	"testing"
)

// TestMountHelperArgs: mount.fuse3's and mount(8)'s helper command lines become the mount
// command; an ordinary command line is left alone.
func TestMountHelperArgs(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string // "" : not a helper call
	}{
		{[]string{"/data/w", "/mnt/w", "-o", "rw,passfile=/root/pw"}, "mount /data/w /mnt/w -o rw,passfile=/root/pw"},
		{[]string{"work", "/mnt/w", "-o", "ro"}, "mount work /mnt/w -o ro"},
		{[]string{"mount", "/data/w", "/mnt/w"}, ""},
		{[]string{"info", "/data/w"}, ""},
		{[]string{"--help", "/x"}, ""},
		{[]string{"work", "relative"}, ""},
	} {
		got := ""
		if isMountHelperCall(c.in) {
			got = strings.Join(MountHelperArgs(c.in), " ")
		}
		if got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
	// mount.vaultui SRC MNT [-sfnv] [-o OPTS] [-t TYPE]
	got := strings.Join(MountHelperArgs([]string{"/data/w", "/mnt/w", "-n", "-v", "-o", "ro", "-t", "vaultui"}), " ")
	if got != "mount /data/w /mnt/w -o ro" {
		t.Errorf("mount.vaultui: %q", got)
	}
}
