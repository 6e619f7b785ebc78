package mountmgr

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/vaultui/vaultui/vault"
)

// Fsck and export of a mounted vault. The daemon holds the vault's key, so it runs the
// offline walker (vault.FsckVolume, vault.ExportVolume) on the cipherdir with it, as for
// a locked vault, and no password is asked for. Like conflicts, the walk uses the key until
// it ends (keyUse); an unmount meanwhile ends the walk instead of waiting for it. A running
// walk counts as use of the vault: no idle unmount cuts it.
//
// A walk has a connection of its own (like watch). The daemon streams replies with the
// request's ID: progress (the latest only: a slow reader gets fewer, never stale ones), the
// findings in batches, and last a reply marked Done that carries the error, if any. The walk
// never waits on the socket: a sender goroutine writes while it goes on. The client sends
// nothing after its request, so a read that returns means it went away (closed, or died),
// which ends the walk; so does a write that fails or waits longer than walkWriteTimeout.

// walkWriteTimeout bounds one write of a walk's replies: a client that reads nothing for so
// long is taken for gone. (The client reads in a goroutine of its own, so only a stopped or
// hung process gets there.)
var walkWriteTimeout = time.Minute

// walkProgressEvery is the least time between two progress replies.
const walkProgressEvery = 100 * time.Millisecond

// ExportRequest is where an export of a mounted vault writes (an absolute path) and whether
// it goes on past damage (vault.ExportOptions.Force).
type ExportRequest struct {
	Dest  string
	Force bool `json:",omitempty"`
}

// serveWalk runs a fsck or export request on conn, which it then leaves to be closed.
func (d *daemon) serveWalk(conn net.Conn, req *request) {
	fail := func(err error) { d.sendWalk(conn, &response{ID: req.ID, Done: true, Error: toWire(err)}) }
	defer func() {
		if r := recover(); r != nil {
			d.log.Printf("internal error serving %q (recovered, the daemon goes on): %v\n%s", req.Op, r, debug.Stack())
			fail(fmt.Errorf("internal error serving %q: %v (see the daemon log)", req.Op, r))
		}
	}()
	m, where, err := d.mountedVault(req.Target)
	if err != nil {
		fail(err)
		return
	}
	if m.v.walk == nil {
		fail(fmt.Errorf("%s is a reverse view of a plaintext folder: there is nothing encrypted to check or export", where))
		return
	}
	if req.Op == opExport {
		if err := d.checkExportDest(m, where, req.Export); err != nil {
			fail(err)
			return
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := newWalkReplies(d, conn, req.ID, cancel)
	// The client going away ends the walk: it sends nothing more, so a read returns only then.
	go func() {
		var b [1]byte
		conn.Read(b[:])
		out.left()
	}()
	problems, err := d.walk(ctx, m, req, out)
	out.finish()
	if out.gone() {
		d.log.Printf("%s of %s: the client went away; stopped", req.Op, m.info.CipherDir)
		return
	}
	for _, p := range pages(problems) {
		if d.sendWalk(conn, &response{ID: req.ID, Problems: p}) != nil {
			return
		}
	}
	if err != nil {
		// The error names plaintext paths: the log gets its kind only.
		d.log.Printf("%s of %s failed (%s)", req.Op, m.info.CipherDir, KindOf(err))
	}
	d.sendWalk(conn, &response{ID: req.ID, Done: true, Error: toWire(err)})
}

// walk runs the fsck or export of m with the key the daemon holds, which it keeps until the
// walk ends, and returns fsck's findings.
func (d *daemon) walk(ctx context.Context, m *mount, req *request, out *walkReplies) ([]wired[vault.Problem], error) {
	// The vault is in use while the walk runs: no idle unmount, and the idle time starts
	// again when it ends.
	m.walks.Add(1)
	defer func() {
		d.mu.Lock()
		if m.sampler != nil {
			m.sampler.lastChange = time.Now()
		}
		d.mu.Unlock()
		m.walks.Add(-1)
	}()
	// An unmount (it waits for the key) or a daemon that stops ends the walk.
	use, err := d.useKeys(ctx, m)
	if err != nil {
		return nil, err
	}
	defer use.release()
	ctx = use.ctx
	var problems []vault.Problem
	if req.Op == opFsck {
		problems, err = vault.FsckVolume(ctx, m.v.walk, out.progress)
	} else {
		err = vault.ExportVolume(ctx, m.v.walk, req.Export.Dest, vault.ExportOptions{
			Progress: out.progress,
			Force:    req.Export.Force,
			Damaged:  out.damaged,
		})
	}
	return wiredList(problems), use.ended(err, m.info.CipherDir, req.Op)
}

// checkExportDest refuses an export request without a destination or with a relative one
// (the daemon's working directory is not the client's), and a destination inside the vault's
// own mount, where the plaintext would be encrypted back into the vault as it is walked.
// vault.ExportVolume makes its own checks (not inside the cipherdir, new or empty).
func (d *daemon) checkExportDest(m *mount, where string, r *ExportRequest) error {
	if r == nil || r.Dest == "" {
		return &badRequestError{"export request without a destination"}
	}
	if !filepath.IsAbs(r.Dest) {
		return &badRequestError{fmt.Sprintf("export destination %q is not an absolute path", r.Dest)}
	}
	inside, err := vault.Inside(r.Dest, m.root)
	if err != nil {
		return fmt.Errorf("export to %s: %w", r.Dest, err)
	}
	if inside {
		return fmt.Errorf("export to %s: it is inside the vault's own mount at %s, so the copy would be written into the vault it copies; choose a folder outside it", r.Dest, where)
	}
	return nil
}

// sendWalk sends one reply of a walk, bounded by walkWriteTimeout.
func (d *daemon) sendWalk(conn net.Conn, resp *response) error {
	conn.SetWriteDeadline(time.Now().Add(walkWriteTimeout))
	return d.send(conn, resp)
}

// walkReplies sends a walk's progress and damage reports from a goroutine of its own, so that
// the walk never waits for the client.
type walkReplies struct {
	d      *daemon
	conn   net.Conn
	id     uint64
	cancel func()

	mu      sync.Mutex
	prog    *wired[vault.FsckProgress] // the latest progress not yet sent
	found   []wired[vault.Problem]     // damage reports not yet sent
	failed  bool                       // a write failed, or the client closed its end: it is gone
	wake    chan struct{}
	stop    chan struct{}
	stopped chan struct{}
}

func newWalkReplies(d *daemon, conn net.Conn, id uint64, cancel func()) *walkReplies {
	r := &walkReplies{d: d, conn: conn, id: id, cancel: cancel,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	go r.run()
	return r
}

func (r *walkReplies) progress(p vault.FsckProgress) {
	r.mu.Lock()
	r.prog = &wired[vault.FsckProgress]{p}
	r.mu.Unlock()
	r.signal()
}

// damaged reports a damaged item of an export with Force as it is found.
func (r *walkReplies) damaged(p vault.Problem) {
	r.mu.Lock()
	if !r.failed {
		r.found = append(r.found, wired[vault.Problem]{p})
	}
	r.mu.Unlock()
	r.signal()
}

func (r *walkReplies) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// run sends what is pending each time there is something, progress at most every
// walkProgressEvery, until finish; then once more.
func (r *walkReplies) run() {
	defer close(r.stopped)
	for {
		last := false
		select {
		case <-r.wake:
		case <-r.stop:
			last = true
		}
		if !r.flush() || last {
			return
		}
		select {
		case <-time.After(walkProgressEvery):
		case <-r.stop:
			r.flush()
			return
		}
	}
}

// flush sends what is pending; false when the client is gone.
func (r *walkReplies) flush() bool {
	r.mu.Lock()
	prog, found := r.prog, r.found
	r.prog, r.found = nil, nil
	r.mu.Unlock()
	for _, p := range pages(found) {
		if !r.sent(&response{ID: r.id, Problems: p}) {
			return false
		}
	}
	if prog != nil && !r.sent(&response{ID: r.id, Progress: prog}) {
		return false
	}
	return true
}

func (r *walkReplies) sent(resp *response) bool {
	if err := r.d.sendWalk(r.conn, resp); err != nil {
		r.left()
		return false
	}
	return true
}

// left records that the client is gone and ends the walk.
func (r *walkReplies) left() {
	r.mu.Lock()
	r.failed, r.found = true, nil
	r.mu.Unlock()
	r.cancel()
}

// finish sends what is still pending and stops the goroutine.
func (r *walkReplies) finish() {
	close(r.stop)
	<-r.stopped
}

// gone reports whether the client went away during the walk.
func (r *walkReplies) gone() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

// Fsck checks the vault mounted from or at target with the key the daemon holds, as
// vault.FsckVolume checks a locked one: the findings (nil when the vault is clean), and an
// error only for what ended the check early. progress (if not nil) gets the check's progress.
// Cancelling ctx ends the check in the daemon too.
func (c *Client) Fsck(ctx context.Context, target string, progress func(vault.FsckProgress)) ([]vault.Problem, error) {
	var problems []vault.Problem
	err := c.walk(ctx, request{Op: opFsck, Target: target}, progress, func(p vault.Problem) { problems = append(problems, p) })
	return problems, err
}

// Export writes the decrypted tree of the vault mounted from or at target into dest, with
// the key the daemon holds, as vault.ExportVolume does for a locked vault (the same
// refusals, and one more: dest inside the vault's own mount). opts.Progress and, with
// opts.Force, opts.Damaged are called as the daemon reports. Cancelling ctx ends the export in
// the daemon too, leaving what was written so far.
func (c *Client) Export(ctx context.Context, target, dest string, opts vault.ExportOptions) error {
	dest, err := filepath.Abs(dest)
	if err != nil {
		return err
	}
	damaged := opts.Damaged
	if !opts.Force || damaged == nil {
		damaged = func(vault.Problem) {}
	}
	return c.walk(ctx, request{Op: opExport, Target: target, Export: &ExportRequest{Dest: dest, Force: opts.Force}}, opts.Progress, damaged)
}

// walkQueue holds what a walk's replies brought until the caller takes it: the reading goes
// on while the caller's callbacks run (a terminal that blocks), so the daemon never waits for
// them. Of the progress only the latest is kept.
type walkQueue struct {
	mu       sync.Mutex
	prog     *vault.FsckProgress
	problems []vault.Problem
	end      *response // the reply marked Done, or one with an error
	err      error     // reading failed
	wake     chan struct{}
}

// walk sends req on a connection of its own and hands the replies to progress and problem
// until the last one, whose error it returns.
func (c *Client) walk(ctx context.Context, req request, progress func(vault.FsckProgress), problem func(vault.Problem)) error {
	conn, err := dialSocket(ctx, c.path)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrDaemon, err)
	}
	defer conn.Close() // the daemon reads the close and ends the walk
	req.V, req.ID, req.Target = ProtocolVersion, 1, absolute(req.Target)
	line, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, err := conn.Write(append(line, '\n')); err != nil {
		return daemonIOError(c.path, err)
	}
	q := &walkQueue{wake: make(chan struct{}, 1)}
	go func() {
		r := bufio.NewReaderSize(conn, 64<<10)
		for {
			resp, err := readReply(r)
			q.mu.Lock()
			switch {
			case err != nil:
				q.err = err
			case resp.Error != nil || resp.Done:
				q.end = resp
			default:
				if resp.Progress != nil {
					p := resp.Progress.v
					q.prog = &p
				}
				for _, p := range resp.Problems {
					q.problems = append(q.problems, p.v)
				}
			}
			ended := q.err != nil || q.end != nil
			q.mu.Unlock()
			select {
			case q.wake <- struct{}{}:
			default:
			}
			if ended {
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-q.wake:
		}
		q.mu.Lock()
		prog, found, end, rerr := q.prog, q.problems, q.end, q.err
		q.prog, q.problems = nil, nil
		q.mu.Unlock()
		for _, p := range found {
			problem(p)
		}
		if prog != nil && progress != nil {
			progress(*prog)
		}
		if end != nil {
			return fromWire(end.Error)
		}
		if rerr != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(rerr, io.EOF) {
				rerr = fmt.Errorf("the daemon ended the connection before the %s was done: %w", req.Op, rerr)
			}
			return daemonIOError(c.path, rerr)
		}
	}
}
