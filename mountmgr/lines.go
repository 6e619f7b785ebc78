package mountmgr

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Line bounds on the control socket. A request is one line of at most maxRequestLine (real
// ones are under 1 KiB): a client that sends more without a newline loses its connection, not
// the daemon its memory. A reply is as long as its lists (status of many mounts, the event
// log), so the daemon pages it (replyLines): lines of about replyPage, which the client joins
// (readReply). The client still bounds each line, at maxReplyLine, which leaves room for a
// single list entry far longer than any real one, and a whole reply at maxReply.
const (
	maxRequestLine = 64 << 10
	replyPage      = 32 << 10
	maxReplyLine   = 1 << 20
	maxReply       = 64 << 20
)

// lineTooLong is the error for a line over max bytes.
type lineTooLong int

func (e lineTooLong) Error() string { return fmt.Sprintf("line longer than %d bytes", int(e)) }

// errLineTooLong is the error for a request line over maxRequestLine.
var errLineTooLong error = lineTooLong(maxRequestLine)

// readLineBounded reads one line (with its newline) from r, refusing lines over max. The
// client reads replies with it; they carry no secrets.
func readLineBounded(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		if len(line)+len(frag) > max+1 {
			return nil, lineTooLong(max)
		}
		line = append(line, frag...)
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

// lineReader reads request lines for the daemon from a buffer of its own, so that the bytes
// of a request (a mount request carries the password) can be wiped: the caller wipes each
// line once decoded, and wipe clears the whole buffer when the connection ends.
type lineReader struct {
	r          io.Reader
	buf        []byte
	start, end int // unread bytes are buf[start:end]
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: r, buf: make([]byte, 4096)}
}

// buffered is how many bytes were read from the stream and not returned yet.
func (l *lineReader) buffered() int { return l.end - l.start }

// next returns the next line without its newline. The slice points into the reader's buffer:
// it is valid until the next call, and wiping it wipes the buffer. A line over the bound is
// errLineTooLong (over maxRequestLine); the stream is then out of step and must be closed.
func (l *lineReader) next() ([]byte, error) {
	scanned := 0
	for {
		if i := bytes.IndexByte(l.buf[l.start+scanned:l.end], '\n'); i >= 0 {
			line := l.buf[l.start : l.start+scanned+i]
			l.start += scanned + i + 1
			return line, nil
		}
		scanned = l.end - l.start
		if scanned > maxRequestLine {
			return nil, errLineTooLong
		}
		if l.end == len(l.buf) {
			if l.start > 0 {
				// Move the partial line to the front and zero what it leaves behind.
				n := copy(l.buf, l.buf[l.start:l.end])
				clear(l.buf[n:l.end])
				l.start, l.end = 0, n
			} else {
				bigger := make([]byte, min(2*len(l.buf), maxRequestLine+2))
				copy(bigger, l.buf[:l.end])
				clear(l.buf)
				l.buf = bigger
			}
		}
		n, err := l.r.Read(l.buf[l.end:])
		l.end += n
		if err != nil && n == 0 {
			if err == io.EOF && l.end > l.start {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}

// wipe zeroes the whole buffer.
func (l *lineReader) wipe() {
	clear(l.buf)
	l.start, l.end = 0, 0
}

// marshalRequest encodes req as one line into a buffer of its own, which the caller wipes
// after writing it: json.Marshal would leave a copy of the password or master key in its
// pooled encoder buffers (and in the line it returns, which a later append may copy again),
// so both secrets go in here, base64-encoded straight into the line, sized once so that
// nothing is reallocated. Best effort: the caller's own copies are the caller's to wipe.
func marshalRequest(req request) ([]byte, error) {
	if req.Mount == nil || (len(req.Mount.Password) == 0 && len(req.Mount.MasterKey) == 0) {
		line, err := json.Marshal(req)
		return append(line, '\n'), err
	}
	pw, mk := req.Mount.Password, req.Mount.MasterKey
	m := *req.Mount
	m.Password, m.MasterKey = []byte{}, nil // Password encodes as "", MasterKey is left out
	req.Mount = &m
	skel, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	// Inside a JSON string a quote is escaped, so this key and empty value can only be the
	// field itself.
	key := []byte(`"Password":""`)
	i := bytes.Index(skel, key)
	if i < 0 {
		return nil, errors.New("encoding a mount request: no password field")
	}
	at := i + len(key) - 1 // the closing quote
	// The master key goes right after the password, as a field of the same object:
	// "Password":"...","MasterKey":"...".
	const mkField = `","MasterKey":"`
	size := len(skel) + base64.StdEncoding.EncodedLen(len(pw)) + 1
	if len(mk) > 0 {
		size += len(mkField) + base64.StdEncoding.EncodedLen(len(mk))
	}
	line := make([]byte, 0, size)
	line = append(line, skel[:at]...)
	line = base64.StdEncoding.AppendEncode(line, pw)
	if len(mk) > 0 {
		line = append(line, mkField...)
		line = base64.StdEncoding.AppendEncode(line, mk)
	}
	line = append(line, skel[at:]...)
	return append(line, '\n'), nil
}

// replyLines encodes resp as the lines of one reply. A reply that fits in replyPage is one
// line. A longer one is split: its lists (Mounts, Events, Stale) go out in pieces of about
// replyPage each, on lines marked More, and the last line carries the rest of the reply.
// The client joins them (readReply), so no amount of mounts or events makes a line too long.
func replyLines(resp *response) ([][]byte, error) {
	line, err := json.Marshal(resp)
	if err != nil {
		return nil, err
	}
	if len(line) <= replyPage {
		return [][]byte{append(line, '\n')}, nil
	}
	var parts []*response
	for _, p := range pages(resp.Mounts) {
		parts = append(parts, &response{More: true, Mounts: p})
	}
	for _, p := range pages(resp.Events) {
		parts = append(parts, &response{More: true, Events: p})
	}
	for _, p := range pages(resp.Stale) {
		parts = append(parts, &response{More: true, Stale: p})
	}
	for _, p := range pages(resp.Conflicts) {
		parts = append(parts, &response{More: true, Conflicts: p})
	}
	last := *resp
	last.More, last.Mounts, last.Events, last.Stale, last.Conflicts = false, nil, nil, nil, nil
	var out [][]byte
	for _, part := range append(parts, &last) {
		part.V, part.ID, part.OK = resp.V, resp.ID, resp.OK
		line, err := json.Marshal(part)
		if err != nil {
			return nil, err
		}
		out = append(out, append(line, '\n'))
	}
	return out, nil
}

// pages splits items into runs whose JSON takes about replyPage bytes at most (an item
// longer than that alone is a run of its own).
func pages[T any](items []T) [][]T {
	var out [][]T
	start, size := 0, 0
	for i, it := range items {
		b, _ := json.Marshal(it)
		if i > start && size+len(b)+1 > replyPage-1024 { // 1 KiB for the line's other fields
			out = append(out, items[start:i])
			start, size = i, 0
		}
		size += len(b) + 1
	}
	if start < len(items) {
		out = append(out, items[start:])
	}
	return out
}

// readReply reads one reply: a line, and the lines that follow while they are marked More,
// joined into one response.
func readReply(r *bufio.Reader) (*response, error) {
	resp, total, err := readResponseLine(r)
	for err == nil && resp.More {
		var next *response
		var n int
		if next, n, err = readResponseLine(r); err != nil {
			break
		}
		if next.ID != resp.ID {
			return nil, fmt.Errorf("bad response from daemon: reply %d cut by reply %d", resp.ID, next.ID)
		}
		if total += n; total > maxReply {
			return nil, fmt.Errorf("bad response from daemon: a reply over %d bytes", maxReply)
		}
		next.Mounts = append(resp.Mounts, next.Mounts...)
		next.Events = append(resp.Events, next.Events...)
		next.Stale = append(resp.Stale, next.Stale...)
		next.Conflicts = append(resp.Conflicts, next.Conflicts...)
		resp = next
	}
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// readResponseLine reads and decodes one line of a reply, and returns the line's length.
func readResponseLine(r *bufio.Reader) (*response, int, error) {
	line, err := readLineBounded(r, maxReplyLine)
	if err != nil {
		return nil, 0, err
	}
	var resp response
	if err := json.Unmarshal(line, &resp); err != nil {
		return nil, 0, fmt.Errorf("bad response from daemon: %w", err)
	}
	if resp.V != ProtocolVersion {
		// Checked on every line: a daemon of another version frames its replies its own way.
		return nil, 0, &versionError{daemon: resp.V}
	}
	return &resp, len(line), nil
}
