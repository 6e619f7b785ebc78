package mountmgr

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
	"time"
)

// TestLongLineClosesOnlyThatConnection: a request line over 64 KiB gets an error and loses
// its connection; another connection to the same daemon goes on being served.
func TestLongLineClosesOnlyThatConnection(t *testing.T) {
	d := testDaemon(t)
	a, b := socketPair(t)
	c, e := socketPair(t)
	serveTest(t, d, b)
	serveTest(t, d, e)
	a.SetDeadline(time.Now().Add(10 * time.Second))
	go a.Write(bytes.Repeat([]byte("x"), maxRequestLine+100)) // no newline, ever
	r := bufio.NewReader(a)
	resp, err := readResponse(r)
	if err != nil || resp.Error == nil || !strings.Contains(resp.Error.Msg, "longer than") {
		t.Fatalf("long line answered %+v, %v", resp, err)
	}
	// Closed with our bytes unread: EOF or a reset, either way no more answers.
	if _, err := r.ReadByte(); err != io.EOF && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("connection still open after a long line: %v", err)
	}
	line, _ := json.Marshal(request{V: ProtocolVersion, ID: 1, Op: opPing})
	c.SetDeadline(time.Now().Add(10 * time.Second))
	c.Write(append(line, '\n'))
	if resp, err := readResponse(bufio.NewReader(c)); err != nil || resp.Error != nil || resp.PID == 0 {
		t.Errorf("the other connection: %+v, %v", resp, err)
	}
	// The client side: a daemon (or impostor) answering with an endless line.
	long := append(bytes.Repeat([]byte(" "), maxReplyLine+10), '\n')
	if _, err := readResponse(bufio.NewReaderSize(bytes.NewReader(long), 4096)); !errors.Is(err, lineTooLong(maxReplyLine)) {
		t.Errorf("client reading a long response: %v", err)
	}
}

// TestLineReaderWipes: the daemon's line reader splits lines across reads and refuses long
// ones; once the caller wipes a line, no copy of it is left in the buffer (compaction and
// growth zero what they leave behind).
func TestLineReaderWipes(t *testing.T) {
	secret := []byte("s3cret-password-" + strings.Repeat("p", 5000))
	var in bytes.Buffer
	in.WriteString(strings.Repeat("a", 3000) + "\n")
	in.Write(secret)
	in.WriteString("\nlast\n")
	l := newLineReader(iotest.HalfReader(&in))
	first, err := l.next()
	if err != nil || len(first) != 3000 {
		t.Fatalf("first line: %d bytes, %v", len(first), err)
	}
	got, err := l.next()
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("second line: %v", err)
	}
	clear(got)
	if bytes.Contains(l.buf, []byte("s3cret")) || bytes.Contains(l.buf, []byte("ppppppppp")) {
		t.Error("the buffer keeps a copy of the wiped line")
	}
	if last, err := l.next(); err != nil || string(last) != "last" {
		t.Errorf("third line %q, %v", last, err)
	}
	if _, err := l.next(); err != io.EOF {
		t.Errorf("at the end: %v", err)
	}
	l.wipe()
	if bytes.ContainsFunc(l.buf, func(r rune) bool { return r != 0 }) {
		t.Error("wipe left bytes behind")
	}
	long := newLineReader(bytes.NewReader(bytes.Repeat([]byte("y"), 3*maxRequestLine)))
	if _, err := long.next(); !errors.Is(err, errLineTooLong) {
		t.Errorf("long line: %v", err)
	}
}

// TestMarshalRequest: the hand-built mount request line decodes to the same request, even
// with paths that contain the field's own text.
func TestMarshalRequest(t *testing.T) {
	pw := []byte("pa\"ss\n\x00wörd")
	req := request{V: ProtocolVersion, ID: 3, Op: opMount, Mount: &MountRequest{
		CipherDir: `/tmp/"Password":""/c`, MountPoint: "/m", Password: pw, ReadOnly: true, Idle: time.Minute}}
	line, err := marshalRequest(req)
	if err != nil || line[len(line)-1] != '\n' {
		t.Fatal(err)
	}
	var back request
	if err := json.Unmarshal(line, &back); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	if !bytes.Equal(back.Mount.Password, pw) || back.Mount.CipherDir != req.Mount.CipherDir || !back.Mount.ReadOnly ||
		back.Mount.Idle != time.Minute || back.ID != 3 || back.Op != opMount {
		t.Errorf("round trip: %+v", back.Mount)
	}
	if !bytes.Contains(line, []byte(base64.StdEncoding.EncodeToString(pw))) {
		t.Error("password not base64 in the line")
	}
	if req.Mount.Password == nil || !bytes.Equal(req.Mount.Password, pw) {
		t.Error("marshalRequest changed the caller's request")
	}

	// A master key request (recovery) goes the same way, with or without a password, and
	// the line has no room past its end that json.Marshal's buffer would have left.
	mk := bytes.Repeat([]byte{0xa5}, 32)
	for _, pw := range [][]byte{nil, []byte("pw")} {
		req := request{V: ProtocolVersion, ID: 4, Op: opMount, Mount: &MountRequest{
			CipherDir: "/c", MountPoint: "/m", Password: pw, MasterKey: mk, ReadOnly: true}}
		line, err := marshalRequest(req)
		if err != nil || line[len(line)-1] != '\n' || cap(line) != len(line) {
			t.Fatalf("%v (len %d, cap %d)", err, len(line), cap(line))
		}
		var back request
		if err := json.Unmarshal(line, &back); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if !bytes.Equal(back.Mount.MasterKey, mk) || !bytes.Equal(back.Mount.Password, pw) || back.Mount.CipherDir != "/c" || !back.Mount.ReadOnly {
			t.Errorf("round trip with a master key: %+v", back.Mount)
		}
		if !bytes.Equal(req.Mount.MasterKey, mk) || !bytes.Equal(req.Mount.Password, pw) {
			t.Error("marshalRequest changed the caller's request")
		}
	}
}

// readResponse reads and decodes one line of a reply.
func readResponse(r *bufio.Reader) (*response, error) {
	resp, _, err := readResponseLine(r)
	return resp, err
}
