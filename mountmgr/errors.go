package mountmgr

import (
	"errors"
	"fmt"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault"
)

// Sentinel errors of the mounts (see Kind).
var (
	// ErrMountpoint: the mount point is missing, not a directory or not empty.
	ErrMountpoint = errors.New("bad mount point")
	// ErrAlreadyMounted: the vault or the mount point is already mounted.
	ErrAlreadyMounted = errors.New("already mounted")
	// ErrBusy: the mount is in use; the error message names what holds it.
	ErrBusy = errors.New("mount is busy")
	// ErrDaemon: the daemon cannot be reached or speaks another protocol version.
	ErrDaemon = errors.New("mount daemon unreachable")
	// ErrNotMounted: nothing is mounted at the given cipherdir or mount point.
	ErrNotMounted = errors.New("not mounted")
)

// Kind names a kind of failure that callers tell apart. It is the one list of them: an error
// crosses the control socket as its kind (and unwraps to the kind's sentinel on the client),
// cli gives each kind its exit code, and the TUI reacts to the sentinels.
type Kind string

// The kinds; the strings are the protocol's error codes.
const (
	KindOther     Kind = "error"
	KindKDFMemory Kind = "kdf_memory"
	// KindKDFCostly: the vault's key derivation costs more than the request allows
	// (crypto.ErrKDFCostly); older clients show a generic error.
	KindKDFCostly      Kind = "kdf_costly"
	KindWrongPassword  Kind = "wrong_password"
	KindUnsupported    Kind = "unsupported"
	KindCorrupt        Kind = "corrupt"
	KindNotFound       Kind = "not_found"
	KindMountpoint     Kind = "mountpoint"
	KindAlreadyMounted Kind = "already_mounted"
	KindBusy           Kind = "busy"
	KindNotMounted     Kind = "not_mounted"
	// KindDaemon is "version" on the wire: the only daemon error a daemon itself can send is
	// that it speaks another protocol version.
	KindDaemon Kind = "version"
	// KindFuseDevice: /dev/fuse cannot be opened; older clients show a generic error.
	KindFuseDevice Kind = "fuse_device"
	// KindNoConflict and KindFolderKeepsBoth: settling a mounted vault's conflict was refused
	// (vault.ErrNoConflict, vault.ErrFolderKeepsBoth).
	KindNoConflict      Kind = "no_conflict"
	KindFolderKeepsBoth Kind = "folder_keeps_both"
	// KindKeyUnverifiable: a read-write mount with a master key the vault holds too little
	// to check.
	KindKeyUnverifiable Kind = "key_unverifiable"
)

// kinds gives each kind its sentinel, in order of precedence: an error is of the first kind
// whose sentinel it wraps. Not enough memory for the KDF comes first: such a vault is also
// unsupported here (vault wraps both), and the kind keeps the reason for the hint. remote,
// where set, is what the kind unwraps to on the client instead of err: a KDF too costly here
// is both the vault being unsupported here (the exit code) and the reason (the hint).
var kinds = []struct {
	kind        Kind
	err, remote error
}{
	{KindKDFMemory, crypto.ErrKDFMemory, errors.Join(crypto.ErrKDFMemory, vault.ErrUnsupported)},
	{KindKDFCostly, crypto.ErrKDFCostly, errors.Join(crypto.ErrKDFCostly, vault.ErrUnsupported)},
	{KindWrongPassword, vault.ErrWrongPassword, nil},
	{KindUnsupported, vault.ErrUnsupported, nil},
	{KindCorrupt, vault.ErrCorrupt, nil},
	{KindNotFound, vault.ErrNotFound, nil},
	{KindMountpoint, ErrMountpoint, nil},
	{KindAlreadyMounted, ErrAlreadyMounted, nil},
	{KindBusy, ErrBusy, nil},
	{KindNotMounted, ErrNotMounted, nil},
	{KindDaemon, ErrDaemon, nil},
	{KindFuseDevice, ErrFuseDevice, nil},
	{KindNoConflict, vault.ErrNoConflict, nil},
	{KindFolderKeepsBoth, vault.ErrFolderKeepsBoth, nil},
	{KindKeyUnverifiable, vault.ErrKeyUnverifiable, nil},
}

// KindOf returns the kind of err: that of the first sentinel in kinds it wraps, else
// KindOther.
func KindOf(err error) Kind {
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			return k.kind
		}
	}
	return KindOther
}

// kindError is an error whose message already says what its sentinel would ("mount point /m
// is not empty" is a bad mount point), or one the daemon reported (fromWire): errors.Is finds
// the sentinel, the message does not repeat it.
type kindError struct {
	msg      string
	sentinel error
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.sentinel }

// ErrorOf returns an error with the formatted message that wraps sentinel without showing it
// ("work is not mounted", not "work is not mounted: not mounted"), for the callers of this
// package that say what its sentinels mean in their own words. Causes go in with %v: the
// sentinel is what callers test.
func ErrorOf(sentinel error, format string, args ...any) error {
	return &kindError{msg: fmt.Sprintf(format, args...), sentinel: sentinel}
}
