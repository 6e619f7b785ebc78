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

// maxLine bounds one request or response line on the control socket, in both directions: a
// peer that sends more without a newline loses its connection, not the daemon its memory.
// Real lines are under 1 KiB; a status listing fits about 150 mounts.
const maxLine = 64 << 10

// errLineTooLong is returned for a line longer than maxLine.
var errLineTooLong = fmt.Errorf("line longer than %d bytes", maxLine)

// readLineBounded reads one line (with its newline) from r, refusing lines over maxLine. The
// client reads responses with it; they carry no secrets.
func readLineBounded(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		if len(line)+len(frag) > maxLine+1 {
			return nil, errLineTooLong
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

// next returns the next line without its newline. The slice points into the reader's buffer:
// it is valid until the next call, and wiping it wipes the buffer. A line over maxLine is
// errLineTooLong; the stream is then out of step and must be closed.
func (l *lineReader) next() ([]byte, error) {
	scanned := 0
	for {
		if i := bytes.IndexByte(l.buf[l.start+scanned:l.end], '\n'); i >= 0 {
			line := l.buf[l.start : l.start+scanned+i]
			l.start += scanned + i + 1
			return line, nil
		}
		scanned = l.end - l.start
		if scanned > maxLine {
			return nil, errLineTooLong
		}
		if l.end == len(l.buf) {
			if l.start > 0 {
				// Move the partial line to the front and zero what it leaves behind.
				n := copy(l.buf, l.buf[l.start:l.end])
				clear(l.buf[n:l.end])
				l.start, l.end = 0, n
			} else {
				bigger := make([]byte, min(2*len(l.buf), maxLine+2))
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
// after writing it: json.Marshal would leave a copy of the password in its pooled encoder
// buffers, so the password goes in here, base64-encoded straight into the line.
func marshalRequest(req request) ([]byte, error) {
	if req.Mount == nil || len(req.Mount.Password) == 0 {
		line, err := json.Marshal(req)
		return append(line, '\n'), err
	}
	pw := req.Mount.Password
	m := *req.Mount
	m.Password = []byte{} // encodes as ""
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
	n := base64.StdEncoding.EncodedLen(len(pw))
	line := make([]byte, 0, len(skel)+n+1)
	line = append(line, skel[:at]...)
	line = line[:at+n]
	base64.StdEncoding.Encode(line[at:], pw)
	line = append(line, skel[at:]...)
	return append(line, '\n'), nil
}
