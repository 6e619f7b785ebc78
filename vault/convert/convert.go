package convert

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault"
)

// ErrMounted is wrapped by PlanFor and Run for a vault that is mounted: converting it would
// change the cipherdir behind the mount's back.
var ErrMounted = errors.New("vault is mounted")

// ErrAlreadyConverted is wrapped by PlanFor and Run for a vault that already has the format
// and cipher asked for.
var ErrAlreadyConverted = errors.New("already uses")

// SwapExchange and SwapRenames name how Run put the new vault in place.
const (
	SwapExchange = "renameat2 RENAME_EXCHANGE (one atomic exchange)"
	SwapRenames  = "two renames (this file system has no renameat2 RENAME_EXCHANGE)"
)

// Options says what Run does.
type Options struct {
	// To is the new content cipher; "" keeps the format's default for new vaults when the
	// format changes. A Cryptomator vault's is gcm (its cipher combo SIV_GCM).
	To crypto.CipherID
	// Format is the ID of the new format (vault.Formats); "" keeps the vault's. A new format
	// gets a new vault with a new master key (Result.MasterKey), sealed under the old
	// password unless NewPassword.
	Format string
	// DropUnsupported carries a vault into a format that cannot hold some of its entries
	// (hard links, special files, extended attributes, names; see vault.Format.Can) without
	// them: each is named in Result.Lost. Without it Run refuses such a vault with an
	// *UnsupportedError listing them, before anything is written.
	DropUnsupported bool
	// NewPassword, if not nil, seals a new vault's master key (a rebuilt vault's) instead of
	// the old password. ScryptLogN is its scrypt cost; 0: the old vault's, or the format's
	// default if that is higher.
	NewPassword []byte
	ScryptLogN  int
	// KeepOld is where the old vault is moved after the swap: a path that does not exist yet,
	// on the vault's file system. "" means beside the vault, CIPHERDIR.old-CIPHER (with -2,
	// -3... if taken).
	KeepOld string
	// MountedAt reports where the vault in a cipherdir is mounted, or "" (the front ends pass
	// the mount manager's check). It is asked before anything starts and again just before
	// the swap. nil checks nothing.
	MountedAt func(cipherdir string) string
	// Progress, if not nil, is called as content is re-encrypted and checked.
	Progress func(Progress)
}

// Phases of Run, in order.
const (
	PhaseCopy  = "re-encrypting"
	PhaseCheck = "checking" // the new vault read back and compared with the old one
	PhaseSwap  = "swapping"
)

// Progress reports how far Run is: Done of Total plaintext bytes in Phase.
type Progress struct {
	Phase       string
	Done, Total int64
}

// Interrupted states PlanFor finds beside a vault.
const (
	InterruptedBuilding = "building" // a half-built (or unchecked) new vault: removed, the old one was never touched
	InterruptedSwapped  = "swapped"  // the new vault is in place: Finish moves the old one away
)

// Side is a vault's format and content encryption: one side of a conversion.
type Side struct {
	Format *vault.Format
	// Cipher is the content encryption in the format's terms (vault.Folder.Variant): a
	// content cipher's ID ("aes-gcm") or a Cryptomator cipher combo ("SIV_GCM").
	Cipher string
}

// String names the side as a list of vaults does: the cipher alone where the user picks it
// ("AES-256-GCM"), else the format and its combo ("Cryptomator SIV_GCM").
func (s Side) String() string {
	if s.Format == nil || s.Format.Ciphers != nil {
		return crypto.CipherID(s.Cipher).String()
	}
	return s.Format.Name + " " + s.Cipher
}

// Label names the side with its format: "gocryptfs AES-256-GCM", "Cryptomator SIV_GCM".
func (s Side) Label() string {
	if s.Format == nil || s.Format.Ciphers == nil {
		return s.String()
	}
	return s.Format.Name + " " + s.String()
}

// key is the side as a later run compares it with the state file's.
func (s Side) key() string {
	if s.Format == nil {
		return ""
	}
	return s.Format.ID + "/" + s.Cipher
}

// sideAt reads the side of the vault in dir from its files, without a key; the zero Side
// when dir holds no vault that can be read that way.
func sideAt(dir string) Side {
	f, err := vault.Open(dir)
	if err != nil {
		return Side{}
	}
	c, err := f.Variant()
	if err != nil {
		return Side{}
	}
	return Side{Format: f.Format, Cipher: c}
}

// Plan is what a conversion will do, found without the password.
type Plan struct {
	Dir      string // the cipherdir (symlinks resolved)
	From, To Side
	Work     string // the work directory; the new vault is built in Work/new
	KeepOld  string // where the old vault will be kept
	// PlainBytes is the content to re-encrypt, in Files files; NeedBytes the space the new
	// vault takes (file system blocks), FreeBytes what the file system has for this user.
	vault.Sizes
	FreeBytes   uint64
	Interrupted string // "", InterruptedBuilding or InterruptedSwapped
	// OpensIn says who opens the converted vault (the table of formats).
	OpensIn vault.Compat
	// Rebuild: the vault is rebuilt through its plaintext (a new format, or a format that
	// cannot reseal its files), not resealed file by file; NewKey: it gets a new master key.
	Rebuild, NewKey bool
	// Cannot lists what the old format can hold and the new one cannot (from the table of
	// formats: "hard links", "permission bits"...); which entries that concerns is known
	// once the vault is unlocked.
	Cannot []string
}

// Summary says what the plan converts: "from AEGIS-256X2 to AES-256-GCM" within a format,
// "from gocryptfs AES-256-GCM to Cryptomator SIV_GCM" across formats.
func (p *Plan) Summary() string {
	if p.From.Format != p.To.Format {
		return "from " + p.From.Label() + " to " + p.To.Label()
	}
	return "from " + p.From.String() + " to " + p.To.String()
}

// OpensNote says which programs open the converted vault: "opens in vaultui, gocryptfs, ...".
func (p *Plan) OpensNote() string {
	if p.OpensIn.VaultuiOnly() {
		return "opens only in vaultui: " + p.OpensIn.Others
	}
	return "opens in " + p.OpensIn.List()
}

// Result says what Run did.
type Result struct {
	Dir      string // the cipherdir, now with the new cipher
	OldDir   string // where the old vault is kept
	From, To Side
	Swap     string // SwapExchange or SwapRenames
	Bytes    int64  // plaintext bytes re-encrypted
	// Unchanged lists entries a reseal copied as they are, cipher paths: files that are not
	// the vault's (desktop.ini and the like, which the mount hides). Dropped lists what stays
	// only in the old vault: copies of its key file, which carry the old cipher.
	Unchanged, Dropped []string
	// Cleaned says that this run removed a half-built tree an interrupted run left.
	Cleaned bool
	// Lost names what the new format cannot hold and DropUnsupported left behind (it stays
	// in the old vault). Left lists, as cipher paths, files in the old vault's folder that are
	// not the vault's (desktop.ini): a rebuilt vault does not carry them.
	Lost []Unsupported
	Left []string
	// MasterKey is a rebuilt vault's new master key, to show once (see vault.Format.KeyNote
	// for how it is written); nil when the master key stayed. Wipe it after.
	MasterKey []byte
}

// Unsupported is an entry of the old vault the new format cannot hold: its plaintext path
// and what it is ("a FIFO", "a hard link (2 names)", "extended attributes user.a").
type Unsupported struct {
	Path, What string
}

func (u Unsupported) String() string { return u.Path + ": " + u.What }

// UnsupportedError is Run's refusal of a vault holding entries its new format cannot hold
// (Options.DropUnsupported carries the vault without them). It wraps vault.ErrUnsupported.
type UnsupportedError struct {
	Format *vault.Format
	Items  []Unsupported
}

func (e *UnsupportedError) Error() string {
	entries := "entries"
	if len(e.Items) == 1 {
		entries = "entry"
	}
	return fmt.Sprintf("%d %s a %s vault cannot hold (first: %s); nothing was changed", len(e.Items), entries, e.Format.Name, e.Items[0])
}

func (e *UnsupportedError) Unwrap() error { return vault.ErrUnsupported }

// realDir resolves symlinks in dir, so the swap renames the directory itself, not a link to
// it; a vault that is not there (a run interrupted between the two renames leaves none) is
// made absolute, with missing set.
func realDir(dir string) (real string, missing bool, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false, err
	}
	real, err = filepath.EvalSymlinks(abs)
	if errors.Is(err, os.ErrNotExist) {
		return abs, true, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", dir, err)
	}
	return real, false, nil
}

func checkMounted(dir, real string, mountedAt func(string) string) error {
	if mountedAt == nil {
		return nil
	}
	for _, d := range []string{dir, real} {
		if mp := mountedAt(d); mp != "" {
			return fmt.Errorf("%s: %w at %s", dir, ErrMounted, mp)
		}
	}
	return nil
}

// PlanFor checks that the vault in cipherdir can be converted as opts say and finds what
// that takes, without the password and without changing anything: the vault must not be
// mounted, the pair must be one vaultui converts (a reseal keeps the names: see
// vault.Folder.PlanReseal), the place for the old vault must be free and on the same file
// system, and the file system must have room for the new vault (an error wrapping
// syscall.ENOSPC says how much it needs). It also reports what an interrupted conversion
// left (Interrupted).
func PlanFor(cipherdir string, opts Options) (*Plan, error) {
	dir, missing, err := realDir(cipherdir)
	if err != nil {
		return nil, err
	}
	if err := checkMounted(cipherdir, dir, opts.MountedAt); err != nil {
		return nil, err
	}
	p := &Plan{Dir: dir, Work: dir + workSuffix}
	if st, serr := readState(p.Work); serr == nil {
		p.Interrupted = InterruptedBuilding
		swapped, err := st.swapped(dir)
		if err != nil {
			return nil, err
		}
		if swapped {
			p.Interrupted = InterruptedSwapped
			p.From, p.To, p.KeepOld = st.from, st.to, st.Keep
			return p, nil
		}
	} else if !errors.Is(serr, os.ErrNotExist) {
		return nil, serr
	}
	if missing {
		return nil, fmt.Errorf("%s: %w", cipherdir, vault.ErrNotFound)
	}
	folder, err := vault.Open(dir)
	if err != nil {
		return nil, err
	}
	if !folder.Format.Can.Mount {
		return nil, fmt.Errorf("%s: %w: a %s is not converted", cipherdir, vault.ErrUnsupported, folder.Format.Name)
	}
	variant, err := folder.Variant()
	if err != nil {
		return nil, err
	}
	p.From = Side{Format: folder.Format, Cipher: variant}
	target := folder.Format
	if opts.Format != "" {
		if target, err = vault.FormatByID(opts.Format); err != nil {
			return nil, err
		}
		if !target.Can.Mount {
			return nil, fmt.Errorf("%w: a vault cannot be converted into a %s", vault.ErrUnsupported, target.Name)
		}
	}
	to, err := target.TargetVariant(opts.To)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cipherdir, err)
	}
	p.To = Side{Format: target, Cipher: to}
	if p.To == p.From {
		return nil, fmt.Errorf("%s %w %s", cipherdir, ErrAlreadyConverted, p.To)
	}
	p.OpensIn = target.OpensIn(crypto.CipherID(to))
	slug := strings.ToLower(p.From.Cipher) // CIPHERDIR.old-aegis within a format
	if p.From.Format != p.To.Format {
		slug = p.From.Format.ID // CIPHERDIR.old-gocryptfs across formats
	}
	if p.KeepOld, err = keepPath(dir, slug, opts.KeepOld); err != nil {
		return nil, err
	}
	var sfs unix.Statfs_t
	if err := unix.Statfs(filepath.Dir(dir), &sfs); err != nil {
		return nil, fmt.Errorf("statfs %s: %w", filepath.Dir(dir), err)
	}
	bsize := uint64(sfs.Bsize)
	p.FreeBytes = sfs.Bavail * bsize
	if p.From.Format == p.To.Format && p.From.Format.Can.Reseal {
		if p.Sizes, err = folder.PlanReseal(to, bsize); err != nil {
			return nil, err
		}
	} else {
		p.Rebuild, p.NewKey = true, p.From.Format != p.To.Format
		p.Cannot = cannotHold(p.From.Format, p.To.Format)
		if p.Sizes, err = measure(dir, bsize); err != nil {
			return nil, err
		}
	}
	if opts.NewPassword != nil && !p.NewKey {
		return nil, fmt.Errorf("%s: a conversion within a format keeps the vault's key file and so its password (change it with vaultui passwd)", cipherdir)
	}
	if p.Interrupted == InterruptedBuilding {
		// The half-built tree is removed first: its space counts as free.
		p.FreeBytes += treeBytes(filepath.Join(p.Work, newDirName))
	}
	if p.NeedBytes > p.FreeBytes {
		return p, fmt.Errorf("%s: %w: converting needs %.1f MB for the new vault beside the old one, and %s has %.1f MB free",
			cipherdir, syscall.ENOSPC, float64(p.NeedBytes)/1e6, filepath.Dir(dir), float64(p.FreeBytes)/1e6)
	}
	return p, nil
}

// cannotHold lists what a vault of format from can hold and one of format to cannot.
func cannotHold(from, to *vault.Format) []string {
	var out []string
	for _, c := range []struct {
		from, to bool
		what     string
	}{
		{from.Can.HardLinks, to.Can.HardLinks, "hard links"},
		{from.Can.SpecialFiles, to.Can.SpecialFiles, "FIFOs, sockets and device nodes"},
		{from.Can.Xattrs, to.Can.Xattrs, "extended attributes"},
		{from.Can.Modes, to.Can.Modes, "permission bits and owners"},
		{from.Can.Holes, to.Can.Holes, "holes (sparse files take their full size)"},
		{!from.Can.NFCNames, !to.Can.NFCNames, "names not in Unicode NFC"},
	} {
		if c.from && !c.to {
			out = append(out, c.what)
		}
	}
	return out
}

// keepPath returns where the old vault goes: keep, checked, or the first free
// DIR.old-SLUG[-N] beside dir.
func keepPath(dir, slug, keep string) (string, error) {
	if keep == "" {
		base := dir + ".old-" + slug
		for i := 1; ; i++ {
			p := base
			if i > 1 {
				p = base + "-" + strconv.Itoa(i)
			}
			if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
				return p, nil
			}
		}
	}
	abs, err := filepath.Abs(keep)
	if err != nil {
		return "", err
	}
	if _, err := os.Lstat(abs); err == nil {
		return "", fmt.Errorf("%s already exists: the old vault needs a new path", abs)
	}
	var want, got unix.Stat_t
	if err := unix.Stat(filepath.Dir(dir), &want); err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Dir(dir), err)
	}
	if err := unix.Stat(filepath.Dir(abs), &got); err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Dir(abs), err)
	}
	if want.Dev != got.Dev {
		return "", fmt.Errorf("%s is on another file system than %s: the old vault is kept by renaming it, which works only within one file system", abs, dir)
	}
	if rel, err := filepath.Rel(dir, abs); err == nil && !strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("%s is inside the vault %s", abs, dir)
	}
	return abs, nil
}

// measure estimates, without the key, what a rebuilt vault takes: the old vault's regular
// files at their full size (a format without holes fills them) plus a little for headers
// and tags, and a block for every other entry, twice (a directory, its name or ID file).
func measure(dir string, bsize uint64) (vault.Sizes, error) {
	var s vault.Sizes
	round := func(n uint64) uint64 { return (n + bsize - 1) / bsize * bsize }
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			s.NeedBytes += 2 * bsize
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		size := uint64(fi.Size())
		s.PlainBytes += int64(size)
		s.Files++
		s.NeedBytes += round(size+size/64+128) + bsize
		return nil
	})
	if err != nil {
		return s, fmt.Errorf("%s: %w", dir, err)
	}
	return s, nil
}

// treeBytes returns the space the tree at dir takes (best effort).
func treeBytes(dir string) uint64 {
	var n uint64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil {
			if fi, err := d.Info(); err == nil {
				if st, ok := fi.Sys().(*syscall.Stat_t); ok {
					n += uint64(st.Blocks) * 512
				}
			}
		}
		return nil
	})
	return n
}

// Run converts the vault in cipherdir as opts say, crash-safely (see the package doc): it
// builds the new vault beside the old one (within a format that reseals, with the same
// master key, names and password; otherwise with a new master key), checks it completely,
// swaps it in and keeps the old vault at opts.KeepOld (or beside). An interrupted earlier
// run is finished or cleaned up first. It refuses a mounted vault (ErrMounted), a wrong
// password (vault.ErrWrongPassword), a damaged vault (vault.ErrCorrupt: run fsck; nothing
// unauthenticated is carried over), entries the new format cannot hold (*UnsupportedError,
// unless opts.DropUnsupported) and too little space (syscall.ENOSPC). On any error before
// the swap the old vault is unchanged and the half-built tree is removed; a later run also
// removes what a crash left.
func Run(ctx context.Context, cipherdir string, password []byte, opts Options) (*Result, error) {
	if dir, missing, err := realDir(cipherdir); err == nil && !missing {
		if _, err := readState(dir + workSuffix); errors.Is(err, os.ErrNotExist) {
			// A work directory without a state file is what a run killed at its very start
			// or end leaves: only the work directory itself goes.
			if _, _, err := recoverWork(dir); err != nil {
				return nil, err
			}
		}
	}
	plan, err := PlanFor(cipherdir, opts)
	if err != nil {
		return nil, err
	}
	if plan.Interrupted == InterruptedSwapped {
		done, err := Finish(cipherdir)
		if err != nil {
			return nil, err
		}
		// If the interrupted conversion was another one, go on from its result.
		if plan, err = PlanFor(cipherdir, opts); err != nil {
			if errors.Is(err, ErrAlreadyConverted) {
				return done, nil
			}
			return nil, err
		}
	}
	return build(ctx, cipherdir, plan, password, opts)
}

// Finish completes a conversion that was interrupted after its swap (PlanFor says
// InterruptedSwapped): the new vault is in place and checked; the old one is moved to where
// the interrupted run meant to keep it. It needs no password.
func Finish(cipherdir string) (*Result, error) {
	dir, _, err := realDir(cipherdir)
	if err != nil {
		return nil, err
	}
	res, swapped, err := recoverWork(dir)
	if err != nil {
		return nil, err
	}
	if !swapped {
		return nil, fmt.Errorf("%s: no interrupted conversion to finish", cipherdir)
	}
	return res, nil
}
