package mountmgr

// The daemon's side of the control socket: accepting clients, reading their requests and
// answering them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"golang.org/x/sys/unix"
)

// accept serves connections until ln is closed.
func (d *daemon) accept(ln *net.UnixListener) {
	for {
		conn, err := ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			d.log.Printf("accept: %v", err)
			time.Sleep(50 * time.Millisecond)
			continue
		}
		d.clients.Lock()
		if d.clients.exiting {
			// Idle exit decided: the client finds no daemon and starts a new one.
			d.clients.Unlock()
			conn.Close()
			continue
		}
		d.clients.active++
		d.clients.Unlock()
		d.conns.Add(1)
		go func() {
			defer d.conns.Done()
			d.serveConn(conn)
			d.clients.Lock()
			d.clients.active--
			d.clients.lastUsed = time.Now()
			d.clients.Unlock()
		}()
	}
}

func (d *daemon) serveConn(conn *net.UnixConn) {
	defer conn.Close()
	uid, err := peerUID(conn)
	if err == nil {
		err = checkPeer(uid, d.uid)
	}
	if err != nil {
		d.log.Printf("connection refused: %v", err)
		d.send(conn, &response{Error: &wireError{Code: KindOther, Msg: err.Error()}})
		return
	}
	r := newLineReader(conn)
	defer r.wipe()
	for {
		line, err := r.next()
		if err != nil {
			if err == errLineTooLong {
				d.send(conn, &response{Error: &wireError{Code: codeBadRequest, Msg: "request " + err.Error()}})
			}
			if err != io.EOF {
				d.log.Printf("connection: %v", err)
			}
			return
		}
		req, refusal := decodeRequest(line)
		crypto.Wipe(line) // a mount request's password lives on only in req, which mount wipes
		if refusal != nil {
			d.send(conn, refusal)
			return
		}
		if req.Op == opEvents && req.Follow {
			d.followEvents(conn, req.ID, req.After)
			return
		}
		if req.Op == opWatch {
			d.watch(conn, req.ID)
			return
		}
		if req.Op == opFsck || req.Op == opExport {
			d.serveWalk(conn, req)
			return
		}
		// A mount (its key derivation) and a walk stop when their client leaves: a client
		// that gave up must not leave the daemon deriving a key or walking a tree nobody
		// waits for.
		ctx, cancel := context.WithCancelCause(d.ctx)
		stop := func() {}
		switch req.Op {
		case opMount, opConflicts, opSettleConflict:
			if r.buffered() == 0 {
				stop = watchHangup(conn, func() { cancel(errClientGone) })
			}
		}
		resp := d.handleGuarded(ctx, req)
		req.wipeSecrets() // mount did; again for a path that returned before it
		stop()
		cancel(nil)
		resp.ID = req.ID
		err = d.send(conn, resp)
		if resp.Replace != nil && resp.Replace.Exiting {
			// Replaced by a client of another build (replaceFor): stop once it has the
			// answer, which it waits for before it waits for this daemon to be gone.
			d.stop()
		}
		if err != nil {
			d.giveBackReport(resp.Stale) // not delivered: the next asker gets it
			return
		}
	}
}

// send writes resp as one reply, paged into lines of bounded length (replyLines).
func (d *daemon) send(conn net.Conn, resp *response) error {
	resp.V = ProtocolVersion
	resp.OK = resp.Error == nil
	lines, err := replyLines(resp)
	if err != nil {
		return err
	}
	_, err = (*net.Buffers)(&lines).WriteTo(conn)
	return err
}

func (d *daemon) watch(conn net.Conn, id uint64) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		if err := d.send(conn, &response{ID: id, Mounts: d.status()}); err != nil {
			return
		}
		select {
		case <-d.quit:
			return
		case <-t.C:
		}
	}
}

// handle serves req; ctx ends when the client leaves or the daemon stops.
func (d *daemon) handle(ctx context.Context, req *request) *response {
	switch req.Op {
	case opPing:
		return &response{PID: os.Getpid(), Daemon: d.info()}
	case opEvents:
		evs, _ := d.events.since(req.After)
		return &response{Events: evs}
	case opStatus:
		resp := &response{Mounts: d.status()}
		if req.StaleReport {
			resp.Stale = d.takeReport()
		}
		return resp
	case opMount:
		if req.Mount == nil {
			return &response{Error: &wireError{Code: codeBadRequest, Msg: "mount request without parameters"}}
		}
		info, err := d.mount(ctx, req.Mount)
		if err != nil {
			d.log.Printf("mount %s at %s: %v", req.Mount.CipherDir, req.Mount.MountPoint, err)
			d.events.add(Event{Kind: EventMountFailed, CipherDir: req.Mount.CipherDir, MountPoint: req.Mount.MountPoint,
				Detail: err.Error(), Reverse: req.Mount.Reverse})
			return &response{Error: toWire(err)}
		}
		return &response{Info: &info}
	case opUnmount:
		if err := d.unmountTarget(req.Target, req.Lazy); err != nil {
			d.log.Printf("unmount %s: %s", req.Target, logSafe(err))
			return &response{Error: toWire(err)}
		}
		return &response{}
	case opConflicts, opSettleConflict:
		return d.handleConflicts(ctx, req)
	case opReplace:
		return &response{Replace: d.replaceFor(req.Build)}
	case opPaths:
		res, err := d.mapPaths(req.Target, req.Encrypt, req.Paths)
		if err != nil {
			return &response{Error: toWire(err)} // not logged: it may hold plaintext names
		}
		return &response{Paths: res}
	case opUnmountAll:
		if err := d.unmountAll(); err != nil {
			d.log.Printf("unmount all: %s", logSafe(err))
			return &response{Error: toWire(err)}
		}
		return &response{}
	}
	return &response{Error: &wireError{Code: codeBadRequest, Msg: fmt.Sprintf("unknown op %q", req.Op)}}
}

func (d *daemon) status() []MountInfo {
	d.refreshMountPoints()
	stale := d.staleSnapshot()
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]MountInfo, 0, len(d.mounts)+len(d.detached)+len(stale))
	for _, m := range d.mounts {
		if m.fs == nil {
			continue
		}
		info := m.info
		if m.movedTo != "" {
			info.MountPoint = m.movedTo
		}
		info.Stats = m.sampler.stats()
		out = append(out, info)
	}
	for _, m := range d.detached {
		info := m.info
		info.Stats = m.sampler.stats()
		info.Detached, info.Until = true, d.drainUntil
		out = append(out, info)
	}
	for _, s := range stale {
		out = append(out, MountInfo{CipherDir: s.CipherDir, MountPoint: s.MountPoint, Stale: true})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].MountPoint < out[j].MountPoint })
	return out
}

// info describes how the daemon runs (DaemonInfo).
func (d *daemon) info() *DaemonInfo {
	info := &DaemonInfo{PID: os.Getpid(), EventsError: d.events.problem(), Build: d.build}
	if d.dlog != nil {
		info.Log, info.StderrNull = d.dlog.file, d.dlog.stderrNull()
		if d.dlog.fileErr != nil {
			info.LogError = d.dlog.fileErr.Error()
		}
	}
	return info
}

// errClientGone ends a request whose client left before its answer.
var errClientGone = fmt.Errorf("the client went away: %w", context.Canceled)

// watchHangup calls gone when the peer closes its end of conn, until stop is called. It
// reads nothing (it peeks): a byte the client sends meanwhile stays for the next request, and
// the watch ends there, unable to tell.
func watchHangup(conn *net.UnixConn, gone func()) (stop func()) {
	rc, err := conn.SyscallConn()
	if err != nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		hup := false
		var b [1]byte
		rc.Read(func(fd uintptr) bool {
			n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
			if err == unix.EAGAIN || err == unix.EINTR {
				return false // nothing yet: wait until the socket is readable
			}
			hup = err != nil || n == 0
			return true
		})
		if hup {
			gone()
		}
	}()
	return func() {
		conn.SetReadDeadline(time.Unix(1, 0)) // ends the wait of rc.Read
		<-done
		conn.SetReadDeadline(time.Time{})
	}
}

// decodeRequest decodes one request line. A line that is not a request of this protocol
// version gives the reply that refuses it instead (the connection then ends).
func decodeRequest(line []byte) (*request, *response) {
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		req.wipeSecrets() // decoded up to its fault, never used
		return nil, &response{Error: &wireError{Code: codeBadRequest, Msg: "malformed request: " + err.Error()}}
	}
	if req.V != ProtocolVersion {
		req.wipeSecrets()
		return nil, &response{ID: req.ID, Error: &wireError{Code: KindDaemon,
			Msg: fmt.Sprintf("client speaks protocol version %d, daemon %d", req.V, ProtocolVersion)}}
	}
	return &req, nil
}
