package crypto

// The key derivation helper: a costly scrypt runs in a child process, the running binary
// re-executed with the hidden command KDFHelperArg, so that it can be stopped. x/crypto's
// scrypt.Key cannot be interrupted, and a goroutine left to finish it would hold its table
// (gigabytes, for a hostile config) for as long as it runs. Killing the child ends the work
// and gives the memory back at once.
//
// The password, salt and parameters go to the child over its stdin and the key comes back
// over its stdout: never in its arguments or environment, which other processes of the user
// can read. The child turns its core dumps off before it reads the password.

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/crypto/scrypt"
)

// KDFHelperArg is the hidden command that makes the program a key derivation helper
// (ServeKDFHelper on its stdin and stdout): "vaultui __kdf". A test binary whose tests derive
// costly keys serves it from its TestMain.
const KDFHelperArg = "__kdf"

// helperExe is the running binary. Through /proc it is the same file even when a newer
// vaultui has replaced it on disk since.
const helperExe = "/proc/self/exe"

// helperRequest bounds what a helper reads: the longest password and salt it accepts.
const (
	maxHelperPassword = 1 << 20
	maxHelperSalt     = 1 << 10
)

// deriveInHelper runs scrypt with s on password in a helper process and returns the key. When
// ctx ends first, the helper is killed and waited for, and the error wraps ctx.Err().
func deriveInHelper(ctx context.Context, s ScryptKDF, password []byte) (key []byte, err error) {
	cmd := exec.CommandContext(ctx, helperExe, KDFHelperArg)
	cmd.Args[0] = "vaultui" // the name the program answers to, also in a test's script
	// The helper dies with the process that started it, however that one ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &limitedWriter{w: &stderr, n: 4 << 10}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("crypto: key derivation helper: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("crypto: key derivation helper: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("crypto: starting the key derivation helper: %w", err)
	}
	req := encodeHelperRequest(s, password)
	_, werr := in.Write(req)
	Wipe(req)
	in.Close()
	key = make([]byte, s.KeyLen)
	_, rerr := io.ReadFull(out, key)
	werr2 := cmd.Wait()
	if ctx.Err() != nil {
		Wipe(key)
		return nil, fmt.Errorf("crypto: key derivation stopped: %w", ctx.Err())
	}
	if err := errors.Join(rerr, werr, werr2); err != nil {
		Wipe(key)
		msg := bytes.TrimSpace(stderr.Bytes())
		if len(msg) > 0 {
			return nil, fmt.Errorf("crypto: key derivation helper: %s (%w)", msg, err)
		}
		return nil, fmt.Errorf("crypto: key derivation helper: %w", err)
	}
	return key, nil
}

// encodeHelperRequest is the request a helper reads: N, R, P, KeyLen, the salt's and the
// password's lengths (uint32, big-endian), then the salt and the password.
func encodeHelperRequest(s ScryptKDF, password []byte) []byte {
	b := make([]byte, 0, 24+len(s.Salt)+len(password))
	for _, v := range []int{s.N, s.R, s.P, s.KeyLen, len(s.Salt), len(password)} {
		b = binary.BigEndian.AppendUint32(b, uint32(v))
	}
	b = append(b, s.Salt...)
	return append(b, password...)
}

// ServeKDFHelper is the helper's side: it reads one request from r (see deriveInHelper),
// runs scrypt and writes the key to w, wiping the password and the key behind it. The
// parameters are checked as DeriveKey checks them (any salt of 1 to 1024 bytes).
func ServeKDFHelper(r io.Reader, w io.Writer) error {
	syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{}) // no core dump holds the password
	var hdr [24]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return fmt.Errorf("crypto: key derivation helper: reading the request: %w", err)
	}
	var f [6]int
	for i := range f {
		f[i] = int(binary.BigEndian.Uint32(hdr[4*i:]))
	}
	s := ScryptKDF{N: f[0], R: f[1], P: f[2], KeyLen: f[3]}
	saltLen, pwLen := f[4], f[5]
	if saltLen > maxHelperSalt || pwLen > maxHelperPassword {
		return fmt.Errorf("crypto: key derivation helper: salt of %d or password of %d bytes is too long", saltLen, pwLen)
	}
	buf := make([]byte, saltLen+pwLen)
	defer Wipe(buf)
	if _, err := io.ReadFull(r, buf); err != nil {
		return fmt.Errorf("crypto: key derivation helper: reading the request: %w", err)
	}
	s.Salt = buf[:saltLen]
	if err := s.ValidateMinSalt(1); err != nil {
		return err
	}
	key, err := scrypt.Key(buf[saltLen:], s.Salt, s.N, s.R, s.P, s.KeyLen)
	if err != nil {
		return fmt.Errorf("crypto: scrypt: %w", err)
	}
	defer Wipe(key)
	_, err = w.Write(key)
	return err
}

// limitedWriter keeps the first n bytes written to it and drops the rest.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}
