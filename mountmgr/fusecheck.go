package mountmgr

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// fuseDevice is the kernel's FUSE device, which fusermount opens for us.
const fuseDevice = "/dev/fuse"

// ErrFuseDevice: the FUSE device is missing or this user may not open it, so no vault can be
// mounted here. It crosses the socket (code "fuse_device"), so the command line can add its
// hint.
var ErrFuseDevice = errors.New("FUSE device unusable")

// explainFuseFailure turns go-fuse's bare "fusermount exited with code 256" into what
// fusermount told the daemon's log: that dev could not be opened, and why. It opens dev as
// this process's user, the same one fusermount runs for, and leaves other errors as they are.
func explainFuseFailure(err error, dev string) error {
	if err == nil || !strings.Contains(err.Error(), "fusermount") {
		return err
	}
	f, oerr := os.OpenFile(dev, os.O_RDWR, 0)
	if oerr == nil {
		f.Close()
		return err
	}
	reason := oerr
	var pe *os.PathError
	if errors.As(oerr, &pe) {
		reason = pe.Err
	}
	return fmt.Errorf("%w: failed to open %s: %v (%s)", ErrFuseDevice, dev, reason, strings.TrimSpace(err.Error()))
}
