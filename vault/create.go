package vault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/atomicfile"
	"golang.org/x/sys/unix"
)

// CreateOptions selects what a new vault uses. The zero value is gocryptfs's
// default: AES-256-GCM, scrypt N=2^16, encrypted names with per-directory
// IVs and long names over 255 bytes.
type CreateOptions struct {
	Cipher             crypto.CipherID // "" means AES-256-GCM
	ScryptLogN         int             // 0 means crypto.DefaultScryptLogN
	PlaintextNames     bool
	DeterministicNames bool // no per-directory IVs (gocryptfs -deterministic-names)
	LongNameMax        int  // 0 means 255; else 62..255
	Creator            string
	// Format is the ID of the new vault's format (Formats); "" is DefaultFormat. Options the
	// format has no place for (Format.Can, Ciphers, LongNameMax) are refused by Validate.
	Format string
}

// DefaultCreator is written into gocryptfs.conf when CreateOptions.Creator
// is empty.
const DefaultCreator = "vaultui"

// ErrCreateOptions: options for a new vault that exclude each other, or a value out of
// range. The error's text says which.
var ErrCreateOptions = errors.New("invalid options for a new vault")

// optionsError is a refusal of CreateOptions.Validate: its text alone, wrapping
// ErrCreateOptions.
type optionsError struct{ msg string }

func (e *optionsError) Error() string { return e.msg }
func (e *optionsError) Unwrap() error { return ErrCreateOptions }

// Validate checks the options against the table of formats: each value in its format's
// range, none the format has no place for, and none that exclude each other. It is the one
// place of these rules: Create checks them again, and app.CheckCreate checks them before a
// front end asks for the password. A zero field is its default, and valid; so is an unset
// Cipher, which a front end may choose later.
func (o CreateOptions) Validate() error {
	f, err := FormatByID(o.Format)
	if err != nil {
		return err
	}
	if o.Cipher != "" && !o.Cipher.Valid() {
		return fmt.Errorf("%w %q", crypto.ErrUnknownCipher, string(o.Cipher))
	}
	if r := f.ScryptLogN; o.ScryptLogN != 0 && !r.Contains(o.ScryptLogN) {
		return &optionsError{fmt.Sprintf("scrypt cost %d is outside %d..%d", o.ScryptLogN, r.Min, r.Max)}
	}
	var not []string
	if o.Cipher != "" && !slices.Contains(f.Ciphers, o.Cipher) {
		if f.Ciphers == nil {
			not = append(not, "a content cipher (its format fixes it)")
		} else {
			not = append(not, "the content cipher "+o.Cipher.String())
		}
	}
	if o.PlaintextNames && !f.Can.PlaintextNames {
		not = append(not, "plaintext names")
	}
	if o.DeterministicNames && !f.Can.DeterministicNames {
		not = append(not, "deterministic names")
	}
	if o.LongNameMax != 0 && f.LongNameMax == (Range{}) {
		not = append(not, "a long name limit")
	}
	if len(not) > 0 {
		return &optionsError{"a " + f.Name + " vault takes no " + strings.Join(not, ", ")}
	}
	if o.PlaintextNames && o.DeterministicNames {
		return &optionsError{"plaintext names and deterministic names exclude each other: deterministic names only apply to encrypted names"}
	}
	if o.LongNameMax != 0 {
		if o.PlaintextNames {
			return &optionsError{"a long name limit needs encrypted names: plaintext names are stored as they are"}
		}
		if r := f.LongNameMax; !r.Contains(o.LongNameMax) {
			return &optionsError{fmt.Sprintf("long name limit %d is outside %d..%d", o.LongNameMax, r.Min, r.Max)}
		}
	}
	return nil
}

// check validates the options and fills in the defaults Create needs.
func (o *CreateOptions) check() error {
	if err := o.Validate(); err != nil {
		return err
	}
	if f, _ := FormatByID(o.Format); o.Cipher == "" && f.Ciphers != nil {
		o.Cipher = f.Ciphers[0]
	}
	if o.Creator == "" {
		o.Creator = DefaultCreator
	}
	return nil
}

// Create makes a new vault in cipherdir, which must be empty or not exist
// yet (its parent must), and returns the new master key for the user to
// keep (wipe it with crypto.Wipe after showing it). It writes
// gocryptfs.conf (mode 0400, atomically) and, unless names are plaintext or
// deterministic, the root gocryptfs.diriv: exactly what gocryptfs -init
// writes. On failure it leaves nothing behind.
func Create(ctx context.Context, cipherdir string, password []byte, opts CreateOptions) (masterKey []byte, err error) {
	return create(ctx, atomicfile.OS{}, cipherdir, password, opts)
}

// create is Create writing the config through fsys.
func create(ctx context.Context, fsys atomicfile.FS, cipherdir string, password []byte, opts CreateOptions) (masterKey []byte, err error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	if len(password) == 0 {
		return nil, errors.New("the password is empty")
	}
	f, _ := FormatByID(opts.Format) // checked
	return f.kind.create(ctx, fsys, cipherdir, password, opts)
}

// CheckNewCipherDir reports whether dir can hold a new vault, without
// changing anything: it must be an empty directory, or not exist yet. Create
// makes it, and the folders above it that are missing, as the mount point is
// made; the nearest one that exists must be a directory. A non-empty
// directory gives ErrNotEmpty. The CLI and the TUI ask before prompting for a
// password.
func CheckNewCipherDir(dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ENOTDIR) {
		for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
			pfi, perr := os.Stat(p)
			switch {
			case perr == nil && pfi.IsDir():
				return nil
			case perr == nil:
				return fmt.Errorf("%s: %s is not a directory", dir, p)
			case !errors.Is(perr, os.ErrNotExist) && !errors.Is(perr, unix.ENOTDIR):
				return perr
			case p == filepath.Dir(p):
				return perr
			}
		}
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	d, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0) // swapped for a FIFO: ENOTDIR, not a hang
	if err != nil {
		return err
	}
	defer d.Close()
	if names, err := d.Readdirnames(1); len(names) > 0 {
		return fmt.Errorf("%s: %w", dir, ErrNotEmpty)
	} else if err != nil && err != io.EOF {
		return fmt.Errorf("reading %s: %w", dir, err)
	}
	return nil
}

// prepareEmptyDir checks dir with CheckNewCipherDir and creates it (mode
// 0700) when it does not exist, with the folders above it that are missing
// (0700 too). undo removes what it made, if still empty, for a create that
// failed.
func prepareEmptyDir(dir string) (undo func(), err error) {
	if err := CheckNewCipherDir(dir); err != nil {
		return nil, err
	}
	var made []string // the deepest first
	for p := dir; ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil || p == filepath.Dir(p) {
			break
		}
		made = append(made, p)
	}
	undo = func() {
		for _, p := range made {
			os.Remove(p)
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		undo()
		return nil, err
	}
	return undo, nil
}
