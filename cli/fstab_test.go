package cli

import (
	"flag"
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
		{[]string{"/data/w", "/mnt/w", "-o", "rw,passfile=/root/pw"}, "mount --quiet /data/w /mnt/w -o rw,passfile=/root/pw"},
		{[]string{"work", "/mnt/w", "-o", "ro"}, "mount --quiet work /mnt/w -o ro"},
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
	if got != "mount --quiet /data/w /mnt/w -o ro" {
		t.Errorf("mount.vaultui: %q", got)
	}
}

// TestMountOptionSharedStorage: -o sharedstorage (an fstab line's option) sets mount's
// --sharedstorage, beside options that are for mount(8).
func TestMountOptionSharedStorage(t *testing.T) {
	fs := flag.NewFlagSet("mount", flag.ContinueOnError)
	mountCommand.setup(fs)
	if err := fs.Parse([]string{"-o", "sharedstorage,_netdev,nofail"}); err != nil {
		t.Fatal(err)
	}
	if got := fs.Lookup("sharedstorage").Value.String(); got != "true" {
		t.Fatalf("-o sharedstorage: --sharedstorage is %s", got)
	}
	if err := fs.Parse([]string{"-o", "sharedstorage=yes"}); err == nil {
		t.Fatal("sharedstorage=yes was taken")
	}
}
