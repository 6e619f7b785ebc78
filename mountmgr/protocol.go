package mountmgr

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault"
)

// ProtocolVersion is the version of the control-socket protocol. A daemon answers a request of
// any other version with an error, and a client refuses every reply line of another version, so
// either side of a mismatch gets a clear error rather than a reply it misreads. Optional fields
// added later are ignored by peers that predate them, so they need no new version; a change in
// framing does. Version 2: replies are paged (replyLines), which a version 1 client would take
// for a short reply. Vault names and paths go as wireText, which differs from a plain string
// only for text that is not UTF-8: a peer that predates it fails to decode that line (the
// daemon answers "malformed request") rather than misreading it, so that needs no version.
const ProtocolVersion = 2

// MountRequest asks the daemon to unlock and mount a vault.
type MountRequest struct {
	CipherDir  string
	MountPoint string
	Password   []byte
	// MasterKey, when set, unlocks the vault instead of Password (recovery, gocryptfs's
	// -masterkey). The daemon wipes both after use and never logs them. A daemon that
	// predates the field tries the empty password and says the password is wrong.
	MasterKey  []byte `json:",omitempty"`
	ReadOnly   bool
	AllowOther bool
	// NoExec mounts with noexec: programs in the vault cannot be run. (nosuid and nodev
	// always hold.)
	NoExec bool `json:",omitempty"`
	// Idle unmounts the vault after no file activity for that long; 0 disables.
	Idle time.Duration
	// Reverse serves CipherDir, a plaintext folder with a .gocryptfs.reverse.conf, as a
	// read-only encrypted view (gocryptfs -reverse); ReadOnly is implied.
	Reverse bool `json:",omitempty"`
	// Exclude are the reverse view's exclusion rules, gitignore lines in order.
	Exclude []string `json:",omitempty"`
	// ForceDecode mounts for recovery (vfs.Options.ForceDecode): blocks that fail
	// authentication read as zeros, logged; always read-only. A daemon that predates it
	// ignores it, and its reply says so (MountInfo.ForceDecode false).
	ForceDecode bool `json:",omitempty"`
	// BadNames shows entries whose names do not decrypt and match one of these glob patterns
	// (vfs.Options.BadNames); ForceDecode alone shows them all.
	BadNames []string `json:",omitempty"`
	// SharedStorage is for a cipherdir that other machines use at the same time
	// (vfs.Options.SharedStorage). A daemon that predates it ignores it, and its reply says
	// so (MountInfo.SharedStorage false).
	SharedStorage bool `json:",omitempty"`
	// KDFCost is the most the vault's key derivation may cost (crypto.CostBound: bytes of
	// scrypt's table); 0 is crypto.DefaultCostBound. The client sets it from the user's say-so
	// (--allow-costly-kdf, or the cost the registry recorded for the vault). A daemon that
	// predates it bounds no cost.
	KDFCost uint64 `json:",omitempty"`
}

// Stats are the live statistics of one mount. Counters are totals since the mount; rates are
// over about the last second (see rateSpan).
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
	// ForceDecode: mounted for recovery (MountRequest.ForceDecode).
	ForceDecode bool `json:",omitempty"`
	// SharedStorage: mounted for a cipherdir shared with other machines.
	SharedStorage bool `json:",omitempty"`
}

// InPlace reports whether the mount is at its mount point: neither a stale leftover nor
// detached.
func (m MountInfo) InPlace() bool { return !m.Stale && !m.Detached }

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

// DaemonInfo says how the daemon runs; see [Client.Daemon].
type DaemonInfo struct {
	PID int
	// Log is the daemon's log file, or "" when it logs to its stderr: the terminal or the
	// journal when run by hand or by systemd, /dev/null when a client started it (StderrNull).
	Log        string
	StderrNull bool `json:",omitempty"`
	// LogError is why the log file could not be used (an unusable XDG_STATE_HOME), or "".
	LogError string `json:",omitempty"`
	// EventsError is why the event log cannot be saved, so that it is kept in memory only
	// and lost when the daemon stops, or "".
	EventsError string `json:",omitempty"`
	// Build is the daemon's build (buildinfo.ID): a client of another build replaces the
	// daemon when it is idle (see Connect). "" from a daemon that predates the field.
	Build string `json:",omitempty"`
}

// Wire operations. A daemon that predates one of those from events on answers bad_request.
const (
	opPing       = "ping"
	opMount      = "mount"
	opUnmount    = "unmount"
	opUnmountAll = "unmount_all"
	opStatus     = "status"
	opWatch      = "watch"
	// opEvents returns the event log after request.After; with Follow it streams it like
	// watch.
	opEvents = "events"
	// opConflicts lists the sync tools' conflicts of the vault mounted from or at Target,
	// with the key the daemon holds; opSettleConflict settles one (Settle) through the mount.
	opConflicts      = "conflicts"
	opSettleConflict = "settle_conflict"
	// opPaths maps request.Paths of the vault mounted from or at Target between cipher and
	// plaintext paths (Encrypt: plaintext to cipher).
	opPaths = "paths"
	// opFsck checks the vault mounted from or at Target, opExport writes its decrypted tree
	// to Export.Dest, both with the key the daemon holds, on a connection of their own: a
	// stream of replies with Progress and Problems, the last one marked Done (see walks.go).
	opFsck   = "fsck"
	opExport = "export"
	// opReplace is a client of another build (request.Build) asking the daemon to exit so
	// that it can start its own: the daemon exits if it is idle (as for the idle exit:
	// nothing mounted) and says so in response.Replace.
	opReplace = "replace"
)

// replaceReply answers a replace request.
type replaceReply struct {
	// Exiting: the daemon was idle and is exiting; connections are refused from now on.
	Exiting bool `json:"exiting,omitempty"`
	// Mounts is the number of mounts that keep it (when not Exiting).
	Mounts int `json:"mounts,omitempty"`
	// Told: a client of this build was answered so before, and has warned its user.
	Told bool `json:"told,omitempty"`
}

// PathResult is one path mapped by the daemon: Path, or Error saying why not.
type PathResult = vault.MappedPath

// settleRequest names a conflict of a mounted vault by its path as listed
// (vault.ConflictEntry.Path) and says how to settle it.
type settleRequest struct {
	Path wireText
	Keep vault.Keep
}

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
	// Settle (settle_conflict only) names the conflict and how to settle it.
	Settle *settleRequest `json:"settle,omitempty"`
	// Paths and Encrypt (paths only): the paths to map, and which way.
	Paths   []string `json:"paths,omitempty"`
	Encrypt bool     `json:"encrypt,omitempty"`
	// Export (export only): where to, and how.
	Export *ExportRequest `json:"export,omitempty"`
	// Build (replace only): the client's build.
	Build string `json:"build,omitempty"`
}

// wipeSecrets zeroes the password and master key a request carries, as the daemon decoded
// them. Best effort: json.Unmarshal decodes the base64 straight from the line (which the
// daemon wipes) into these slices, but a value sent with JSON escapes is unquoted through a
// copy first, which is not wiped.
func (r *request) wipeSecrets() {
	if r.Mount != nil {
		crypto.Wipe(r.Mount.Password)
		crypto.Wipe(r.Mount.MasterKey)
	}
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
	// Daemon answers a ping.
	Daemon *DaemonInfo `json:"daemon,omitempty"`
	// Stale is the stale mount report, in answer to a status request with StaleReport.
	Stale []StaleMount `json:"stale,omitempty"`
	// Events answers an events request.
	Events []Event `json:"events,omitempty"`
	// Paths answers a paths request, one result per path asked for.
	Paths []PathResult `json:"paths,omitempty"`
	// More: this line is not the last of the reply; the next one (same ID) continues its
	// lists (see replyLines).
	More bool `json:"more,omitempty"`
	// Conflicts answers a conflicts request (never nil then), Settled a settle_conflict one.
	// Their names and paths go as wireText.
	Conflicts []wired[vault.ConflictEntry] `json:"conflicts,omitempty"`
	Settled   *wired[vault.Settled]        `json:"settled,omitempty"`
	// Progress, Problems and Done are a fsck's or export's replies: how far it is, findings
	// (fsck's at the end, an export's damage as it is found), and the end of the stream.
	Progress *wired[vault.FsckProgress] `json:"progress,omitempty"`
	Problems []wired[vault.Problem]     `json:"problems,omitempty"`
	Done     bool                       `json:"done,omitempty"`
	// Replace answers a replace request.
	Replace *replaceReply `json:"replace,omitempty"`
}

// wireError carries an error across the socket; Code keeps errors.Is working on the client.
type wireError struct {
	Code Kind   `json:"code"`
	Msg  string `json:"msg"`
}

// codeBadRequest is the wire code of a request the daemon could not make sense of; it is no
// Kind, since clients only send what they can make sense of.
const codeBadRequest Kind = "bad_request"

// toWire encodes err with its kind; a badRequestError goes out as bad_request.
func toWire(err error) *wireError {
	var bad *badRequestError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &bad):
		return &wireError{Code: codeBadRequest, Msg: bad.msg}
	}
	return &wireError{Code: KindOf(err), Msg: err.Error()}
}

// badRequestError is a request the daemon cannot make sense of; it goes out as bad_request.
type badRequestError struct{ msg string }

func (e *badRequestError) Error() string { return e.msg }

// versionError is a reply line of another protocol version than the client's.
type versionError struct{ daemon int }

func (e *versionError) Error() string {
	return fmt.Sprintf("the daemon speaks protocol version %d, this vaultui %d: it is from another version of vaultui", e.daemon, ProtocolVersion)
}

// fromWire is an error the daemon reported. It unwraps to the sentinel named by its code, so
// errors.Is(err, vault.ErrWrongPassword) works across the socket.
func fromWire(w *wireError) error {
	if w == nil {
		return nil
	}
	if w.Code == codeBadRequest {
		return &kindError{msg: "daemon refused request: " + w.Msg}
	}
	for _, k := range kinds {
		if k.kind == w.Code {
			return &kindError{msg: w.Msg, sentinel: cmp.Or(k.remote, k.err)}
		}
	}
	return &kindError{msg: w.Msg}
}
