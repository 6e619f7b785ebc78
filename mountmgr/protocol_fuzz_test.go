package mountmgr

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/vaultui/vaultui/vault"
)

// chunkReader returns at most n bytes per Read, so that lines straddle reads.
type chunkReader struct {
	b []byte
	n int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	m := copy(p[:min(len(p), r.n)], r.b)
	r.b = r.b[m:]
	return m, nil
}

// requestSeeds are request lines of every kind a client sends.
func requestSeeds(f *testing.F) [][]byte {
	var out [][]byte
	for _, req := range []request{
		{V: ProtocolVersion, ID: 1, Op: opPing},
		{V: ProtocolVersion, ID: 2, Op: opMount, Mount: &MountRequest{CipherDir: "/c", MountPoint: "/m", Password: []byte("pw\n\x00"), Idle: time.Minute, Exclude: []string{"*.tmp"}}},
		{V: ProtocolVersion, ID: 3, Op: opUnmount, Target: "/m", Lazy: true},
		{V: ProtocolVersion, ID: 4, Op: opEvents, After: 9, Follow: true},
		{V: ProtocolVersion, ID: 5, Op: opSettleConflict, Target: "/m", Settle: &settleRequest{Path: "a\xffb"}},
		{V: ProtocolVersion, ID: 6, Op: opPaths, Paths: []string{"/x"}, Encrypt: true},
		{V: ProtocolVersion, ID: 7, Op: opExport, Export: &ExportRequest{Dest: "/d", Force: true}},
		{V: 1, ID: 8, Op: opStatus, StaleReport: true},
	} {
		line, err := marshalRequest(req)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, line)
	}
	return out
}

// FuzzRequestLines is the daemon reading a hostile client's stream: the line reader splits
// it exactly at newlines, in whatever pieces it arrives, returns every line within
// maxRequestLine and refuses longer ones without growing its buffer past the bound, and each
// line decodes to a request of this version (which encodes back to the same request) or to
// the reply that refuses it. testdata/fuzz holds what it found: "paths":[] decodes to an
// empty list that encodes as none, the same request, so requests are compared encoded.
func FuzzRequestLines(f *testing.F) {
	seeds := requestSeeds(f)
	f.Add(bytes.Join(seeds, nil), uint16(4096))
	f.Add(append(seeds[1], seeds[0]...), uint16(7))
	f.Add([]byte("{\"v\":2,\"op\":\"ping\"}\n{\"v\":2,"), uint16(1))
	f.Add([]byte("\n\n{}\nnull\n[1]\n"), uint16(3))
	f.Add(append(bytes.Repeat([]byte("x"), maxRequestLine+1), '\n'), uint16(5000))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint16) {
		if len(data) > 1<<20 {
			t.Skip("over 1 MiB")
		}
		want := bytes.Split(data, []byte("\n"))
		l := newLineReader(&chunkReader{b: data, n: int(chunk) + 1})
		for i := 0; ; i++ {
			line, err := l.next()
			if len(l.buf) > maxRequestLine+2 {
				t.Fatalf("buffer grew to %d bytes", len(l.buf))
			}
			switch {
			case err == errLineTooLong:
				if len(want[i]) <= maxRequestLine {
					t.Fatalf("line %d of %d bytes refused", i, len(want[i]))
				}
				return
			case err == io.EOF || err == io.ErrUnexpectedEOF:
				if i != len(want)-1 || (err == io.EOF) != (len(want[i]) == 0) {
					t.Fatalf("%v at line %d of %d (last line %d bytes)", err, i, len(want), len(want[len(want)-1]))
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if i >= len(want)-1 || !bytes.Equal(line, want[i]) {
				t.Fatalf("line %d: %q, want %q", i, line, want[min(i, len(want)-1)])
			}
			if len(line) > maxRequestLine+1 {
				t.Fatalf("line %d of %d bytes accepted", i, len(line))
			}
			req, refusal := decodeRequest(line)
			if (req == nil) == (refusal == nil) {
				t.Fatalf("decodeRequest(%q): %v, %v", line, req, refusal)
			}
			if refusal != nil {
				if refusal.Error == nil {
					t.Fatal("a refusal without an error")
				}
				continue
			}
			if req.V != ProtocolVersion {
				t.Fatalf("version %d accepted", req.V)
			}
			again, err := marshalRequest(*req)
			if err != nil {
				t.Fatalf("request %+v does not encode: %v", req, err)
			}
			// Compared encoded: an empty list and none are one request (omitempty).
			req2, refusal := decodeRequest(bytes.TrimSuffix(again, []byte("\n")))
			if refusal != nil {
				t.Fatalf("request %+v encodes to %q, which is refused: %+v", req, again, refusal.Error)
			}
			if again2, _ := marshalRequest(*req2); !bytes.Equal(again, again2) {
				t.Fatalf("request %+v encodes to %q, which decodes to %+v, encoded %q", req, again, req2, again2)
			}
		}
	})
}

// FuzzReadReply is the client reading a hostile daemon's (or impostor's) reply: no panic,
// errors for lines of another version, cut replies and interleaved IDs, and a reply that reads
// encodes (replyLines) to lines that read back to the same reply.
func FuzzReadReply(f *testing.F) {
	now := time.Date(2026, 12, 7, 6, 0, 0, 5, time.FixedZone("x", 3600))
	for _, resp := range []*response{
		{V: ProtocolVersion, ID: 1, OK: true, PID: 42, Daemon: &DaemonInfo{PID: 42}},
		{V: ProtocolVersion, ID: 2, Mounts: []MountInfo{{CipherDir: "/c", MountPoint: "/m", Since: now, Stats: Stats{ReadBps: 1.5}}}},
		{V: ProtocolVersion, ID: 3, Error: &wireError{Code: KindDaemon, Msg: "no"}},
		{V: ProtocolVersion, ID: 4, Events: []Event{{Seq: 1, Time: now, Kind: "mounted"}}, Conflicts: wiredList([]vault.ConflictEntry{{Path: "a\xff"}})},
	} {
		lines, err := replyLines(resp)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(bytes.Join(lines, nil))
	}
	f.Add([]byte(`{"v":2,"id":1,"more":true,"mounts":[{}]}` + "\n" + `{"v":2,"id":2}` + "\n"))
	f.Add([]byte(`{"v":1}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			t.Skip("over 1 MiB")
		}
		resp, err := readReply(bufio.NewReaderSize(bytes.NewReader(data), 4096))
		if err != nil {
			var ve *versionError
			if errors.As(err, &ve) && ve.daemon == ProtocolVersion {
				t.Fatalf("version error for version %d", ve.daemon)
			}
			return
		}
		if resp.V != ProtocolVersion || resp.More {
			t.Fatalf("reply %+v", resp)
		}
		lines, err := replyLines(resp)
		if err != nil {
			t.Fatalf("reply %+v does not encode: %v", resp, err)
		}
		resp2, err := readReply(bufio.NewReader(bytes.NewReader(bytes.Join(lines, nil))))
		if err != nil {
			t.Fatalf("reply encodes to lines that do not read: %v", err)
		}
		a, _ := json.Marshal(resp)
		b, _ := json.Marshal(resp2)
		if !bytes.Equal(a, b) {
			t.Fatalf("reply %s reads back as %s", a, b)
		}
	})
}
