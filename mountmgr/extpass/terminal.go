package extpass

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// foreground gives a terminal's foreground back to this process's group after a program that
// was put there (Options.Terminal) has run: the program's own process group, killed as a
// whole on a timeout, must be the foreground one to read the terminal or turn its echo off
// (a background group that tries is stopped by SIGTTIN or SIGTTOU).
type foreground struct {
	fd   int
	pgrp int
}

// takeForeground says whether the program may have the terminal: only when this process's
// group holds it now (a vaultui started in the background must not take it). nil: no.
func takeForeground(tty *os.File) *foreground {
	fd := int(tty.Fd())
	pgrp, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	if err != nil || pgrp != unix.Getpgrp() {
		return nil
	}
	return &foreground{fd: fd, pgrp: pgrp}
}

// restore makes this process's group the terminal's foreground again. The call is made from
// what is then a background group, which the kernel answers with SIGTTOU unless it is
// ignored; it is ignored for that one call, as shells do.
func (f *foreground) restore() {
	if f == nil {
		return
	}
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	unix.IoctlSetPointerInt(f.fd, unix.TIOCSPGRP, f.pgrp)
}
