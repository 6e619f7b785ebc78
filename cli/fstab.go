package cli

import (
	"path/filepath"
	"strings"
)

// Mount helper calls. For an fstab line of type fuse.vaultui, mount(8) runs mount.fuse3,
// which runs "vaultui SRC MOUNTPOINT -o OPTS"; for type vaultui it runs "mount.vaultui SRC
// MOUNTPOINT [-sfnv] [-o OPTS]" (the binary installed, or linked, under that name). Both
// become "vaultui mount --quiet SRC MOUNTPOINT -o OPTS": one command, whose -o maps the
// options onto its own flags, silent when it worked, as mount helpers are (mount(8) says
// nothing either).

// MountHelperName is the name under which the binary acts as mount(8)'s helper for the
// fstab type vaultui.
const MountHelperName = "mount.vaultui"

// isMountHelperCall recognises mount.fuse3's shape: no command, a source, then an absolute
// mount point.
func isMountHelperCall(args []string) bool {
	return len(args) >= 2 && lookup(commands, args[0]) == nil && !strings.HasPrefix(args[0], "-") &&
		filepath.IsAbs(args[1])
}

// MountHelperArgs turns a mount helper's arguments into the mount command's: mount(8)'s own
// switches (-s sloppy, -n no mtab, -v verbose, -t TYPE) mean nothing to vaultui and are
// dropped; -f (fake) too, which mount(8) handles without calling the helper. The mount is
// --quiet.
func MountHelperArgs(args []string) []string {
	out := []string{"mount", "--quiet"}
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "-s", "-n", "-v", "-f", "-sn", "-nv":
		case "-t":
			i++
		default:
			if strings.HasPrefix(a, "-t") && a != "-t" && !strings.HasPrefix(a, "-t=") {
				continue // -tTYPE
			}
			out = append(out, a)
		}
	}
	return out
}
