package mountmgr

import (
	"fmt"
	"time"
)

// ProtocolVersion is the version of the control-socket protocol. A daemon answers requests of
// any other version with the error code "version". Optional fields added later (the stale
// mount report of status) are ignored by peers that predate them, so they need no new version.
const ProtocolVersion = 1

// MountRequest asks the daemon to unlock and mount a vault.
type MountRequest struct {
	CipherDir  string
	MountPoint string
	Password   []byte
	ReadOnly   bool
	AllowOther bool
	// Idle unmounts the vault after no file activity for that long; 0 disables.
	Idle time.Duration
	// Reverse serves CipherDir, a plaintext folder with a .gocryptfs.reverse.conf, as a
	// read-only encrypted view (gocryptfs -reverse); ReadOnly is implied.
	Reverse bool `json:",omitempty"`
	// Exclude are the reverse view's exclusion rules, gitignore lines in order.
	Exclude []string `json:",omitempty"`
}

// Stats are the live statistics of one mount. Counters are totals since the mount; rates are
// averaged over the last few seconds.
type Stats struct {
	BytesRead, BytesWritten, Ops, Errors uint64
	ReadBps, WriteBps, OpsPerSec         float64
}

// MountInfo describes one mount. Stale mounts are left over from a daemon that died; the
// daemon lazily unmounts them and reports them until they are gone.
type MountInfo struct {
	CipherDir  string
	MountPoint string
	Cipher     string
	ReadOnly   bool
	// Reverse: an encrypted view of a plaintext folder (CipherDir), read-only.
	Reverse bool `json:",omitempty"`
	Since   time.Time
	Idle    time.Duration `json:",omitempty"`
	Stats   Stats
	Stale   bool `json:",omitempty"`
	// Detached: no longer mounted (lazy unmount, or the daemon is stopping), but files opened
	// before are still served until closed; until Until, when the daemon is stopping.
	Detached bool      `json:",omitempty"`
	Until    time.Time `json:",omitzero"`
	// Notice is a note for the user about how the vault runs here (an AEGIS vault on a CPU
	// without the instructions its fast code needs), or "".
	Notice string `json:",omitempty"`
}

// StaleMount reports a mount left behind by a daemon that died without unmounting (its FUSE
// server gone, so the mount answers "transport endpoint is not connected"), which the current
// daemon found at start and cleaned up, or failed to. See [Client.Stale].
type StaleMount struct {
	MountPoint string
	// CipherDir is the mount's source as the kernel lists it: the vault's cipherdir.
	CipherDir string
	// Found is when this daemon found the mount.
	Found time.Time
	// Cleaned: the mount was detached. Otherwise Error says why not; the daemon retries every
	// second, and status lists the mount as a MountInfo with Stale set until it is gone.
	Cleaned bool
	Error   string `json:",omitempty"`
	// id is the mount's identity, for the ledger (the daemon's own).
	id mountID
}

// Wire operations.
const (
	opPing       = "ping"
	opMount      = "mount"
	opUnmount    = "unmount"
	opUnmountAll = "unmount_all"
	opStatus     = "status"
	opWatch      = "watch"
	// opEvents returns the event log after request.After; with Follow it streams it like
	// watch. A daemon that predates it answers bad_request.
	opEvents = "events"
)

// request is one line from a client.
type request struct {
	V      int           `json:"v"`
	ID     uint64        `json:"id"`
	Op     string        `json:"op"`
	Mount  *MountRequest `json:"mount,omitempty"`
	Target string        `json:"target,omitempty"`
	Lazy   bool          `json:"lazy,omitempty"`
	// StaleReport (status only): the client shows the stale mount report to the user, so the
	// daemon includes it and counts it as delivered.
	StaleReport bool `json:"stale_report,omitempty"`
	// After and Follow (events only): the events numbered after After; Follow keeps the
	// connection streaming new ones.
	After  uint64 `json:"after,omitempty"`
	Follow bool   `json:"follow,omitempty"`
}

// response is one line from the daemon.
type response struct {
	V      int         `json:"v"`
	ID     uint64      `json:"id"`
	OK     bool        `json:"ok"`
	Error  *wireError  `json:"error,omitempty"`
	Info   *MountInfo  `json:"info,omitempty"`
	Mounts []MountInfo `json:"mounts,omitempty"`
	PID    int         `json:"pid,omitempty"`
	// Stale is the stale mount report, in answer to a status request with StaleReport.
	Stale []StaleMount `json:"stale,omitempty"`
	// Events answers an events request.
	Events []Event `json:"events,omitempty"`
}

// wireError carries an error across the socket; Code keeps errors.Is working on the client.
type wireError struct {
	Code Kind   `json:"code"`
	Msg  string `json:"msg"`
}

// codeBadRequest is the wire code of a request the daemon could not make sense of; it is no
// Kind, since clients only send what they can make sense of.
const codeBadRequest Kind = "bad_request"

// toWire encodes err with its kind.
func toWire(err error) *wireError {
	if err == nil {
		return nil
	}
	return &wireError{Code: KindOf(err), Msg: err.Error()}
}

// remoteError is an error reported by the daemon. It unwraps to the sentinel named by its code,
// so errors.Is(err, vault.ErrWrongPassword) works across the socket.
type remoteError struct {
	msg      string
	sentinel error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.sentinel }

func fromWire(w *wireError) error {
	if w == nil {
		return nil
	}
	if w.Code == KindKDFMemory {
		return &remoteError{msg: w.Msg, sentinel: kdfMemoryRemote}
	}
	for _, k := range kinds {
		if k.kind == w.Code {
			return &remoteError{msg: w.Msg, sentinel: k.err}
		}
	}
	if w.Code == codeBadRequest {
		return &remoteError{msg: fmt.Sprintf("daemon refused request: %s", w.Msg)}
	}
	return &remoteError{msg: w.Msg}
}
