package vault

// Converting a vault to another content cipher or another format (vaultui convert).
//
// A conversion is one of two kinds, by what the format offers. Within a format that can
// reseal its files in place (gocryptfs: the resealer below), only the content cipher changes
// and the names stay byte for byte. Otherwise (into another format, or Cryptomator's
// SIV_CTRMAC to SIV_GCM) the vault is rebuilt through its plaintext: read through its Volume,
// written through the new vault's format.Builder (convert_rebuild.go). Both share the crash
// safety below.
//
// # What changes and what does not (resealing a gocryptfs vault)
//
// Only the content cipher changes: file contents, symlink targets and extended attribute
// values are sealed with it. Everything else is derived from the master key, the HKDF flag,
// Raw64 and the long-name settings, none of which a conversion touches: the EME name key
// (crypto.NewNameTransform), the directory IVs, the long-name hashes and .name files, the
// attribute names, and the sealed master key in gocryptfs.conf (always AES-GCM under the
// scrypt KEK). So the new vault keeps every stored name byte for byte and the same
// gocryptfs.conf except its feature flags: the password keeps working. The one pair where
// that would not hold is refused: a vault from before HKDF (gocryptfs < 1.3) cannot become
// AEGIS or XChaCha20-Poly1305, which require HKDF, because adding HKDF changes the name key.
//
// # Crash safety
//
// The old vault is only read until the swap. Beside it, in WORK = CIPHERDIR.vaultui-convert,
// a state file records the conversion (from, to, where the old vault goes) before WORK/new,
// the new vault, is built; the new vault is checked (every name, block, symlink and attribute
// decrypted, and compared with the old vault's plaintext) and synced (syncfs), then swapped
// in with one renameat2(RENAME_EXCHANGE), after which WORK/new holds the old vault and is
// renamed to its keeping place. A file system without RENAME_EXCHANGE gets two renames
// (old away, new in). Either way the new and the old vault differ in their configs' cipher,
// so a later run can tell from the state file which side of the swap a crash left, and
// either removes the half-built tree (the old vault was never touched) or finishes the swap.
// A rebuilt vault differs from the old one in its format or its cipher combo, read from its
// files without a key in the same way (ConvertSide).
// Nothing is written into the old vault at any point.

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/atomicfile"
	"github.com/vaultui/vaultui/vault/layout"
)

// ErrMounted is wrapped by Convert and PlanConvert for a vault that is mounted: converting
// it would change the cipherdir behind the mount's back.
var ErrMounted = errors.New("vault is mounted")

// SwapExchange and SwapRenames name how Convert put the new vault in place.
const (
	SwapExchange = "renameat2 RENAME_EXCHANGE (one atomic exchange)"
	SwapRenames  = "two renames (this file system has no renameat2 RENAME_EXCHANGE)"
)

// Names of the conversion's work directory beside the vault and what it holds.
const (
	convertWorkSuffix = ".vaultui-convert"
	convertStateFile  = "state.json"
	convertNewDir     = "new"
)

// ErrAlreadyConverted is wrapped by PlanConvert and Convert for a vault that already has the
// format and cipher asked for.
var ErrAlreadyConverted = errors.New("already uses")

// ConvertOptions says what Convert does.
type ConvertOptions struct {
	// To is the new content cipher; "" keeps the format's default for new vaults when the
	// format changes. A Cryptomator vault's is gcm (its cipher combo SIV_GCM).
	To crypto.CipherID
	// Format is the ID of the new format (Formats); "" keeps the vault's. A new format gets a
	// new vault with a new master key (ConvertResult.MasterKey), sealed under the old
	// password unless NewPassword.
	Format string
	// DropUnsupported carries a vault into a format that cannot hold some of its entries
	// (hard links, special files, extended attributes, names; see Format.Can) without them:
	// each is named in ConvertResult.Lost. Without it Convert refuses such a vault with an
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
	Progress func(ConvertProgress)
}

// Convert phases, in order.
const (
	PhaseCopy  = "re-encrypting"
	PhaseCheck = "checking" // fsck of the new vault and a compare with the old one
	PhaseSwap  = "swapping"
)

// ConvertProgress reports how far Convert is: Done of Total plaintext bytes in Phase.
type ConvertProgress struct {
	Phase       string
	Done, Total int64
}

// Interrupted states PlanConvert finds beside a vault.
const (
	InterruptedBuilding = "building" // a half-built (or unchecked) new vault: removed, the old one was never touched
	InterruptedSwapped  = "swapped"  // the new vault is in place: FinishConvert moves the old one away
)

// ConvertSide is a vault's format and content encryption: one side of a conversion.
type ConvertSide struct {
	Format *Format
	// Cipher is the content encryption in the format's terms: a content cipher's ID
	// ("aes-gcm") or a Cryptomator cipher combo ("SIV_GCM").
	Cipher string
}

// String names the side as a list of vaults does: the cipher alone where the user picks it
// ("AES-256-GCM"), else the format and its combo ("Cryptomator SIV_GCM").
func (s ConvertSide) String() string {
	if s.Format == nil || s.Format.Ciphers != nil {
		return crypto.CipherID(s.Cipher).String()
	}
	return s.Format.Name + " " + s.Cipher
}

// Label names the side with its format: "gocryptfs AES-256-GCM", "Cryptomator SIV_GCM".
func (s ConvertSide) Label() string {
	if s.Format == nil || s.Format.Ciphers == nil {
		return s.String()
	}
	return s.Format.Name + " " + s.String()
}

// key is the side as a state file records it and a later run compares it.
func (s ConvertSide) key() string {
	if s.Format == nil {
		return ""
	}
	return s.Format.ID + "/" + s.Cipher
}

// slug names the side in the default path of the kept old vault: its cipher within a
// format (CIPHERDIR.old-aegis), its format across formats (CIPHERDIR.old-gocryptfs).
func (s ConvertSide) slug(other ConvertSide) string {
	if s.Format != other.Format {
		return s.Format.ID
	}
	return strings.ToLower(s.Cipher)
}

// sideAt reads the side of the vault in dir from its files, without a key; ok is false
// when dir holds no vault vaultui can read that way.
func sideAt(dir string) (ConvertSide, bool) {
	f, err := Identify(dir)
	if err != nil {
		return ConvertSide{}, false
	}
	c, err := f.kind.variant(dir)
	if err != nil {
		return ConvertSide{}, false
	}
	return ConvertSide{Format: f, Cipher: c}, true
}

// ConvertPlan is what a conversion will do, found without the password.
type ConvertPlan struct {
	Dir      string // the cipherdir (symlinks resolved)
	From, To ConvertSide
	Work     string // the work directory; the new vault is built in Work/new
	KeepOld  string // where the old vault will be kept
	// PlainBytes is the content to re-encrypt, in Files files; NeedBytes the space the new
	// vault takes (file system blocks), FreeBytes what the file system has for this user.
	PlainBytes      int64
	Files           int
	NeedBytes       uint64
	FreeBytes       uint64
	Interrupted     string // "", InterruptedBuilding or InterruptedSwapped
	InterruptedTo   ConvertSide
	InterruptedKeep string
	// OpensIn says who opens the converted vault (the table of formats).
	OpensIn Compat
	// Rebuild: the vault is rebuilt through its plaintext (a new format, or a format that
	// cannot reseal in place), not resealed file by file; NewKey: it gets a new master key.
	Rebuild, NewKey bool
	// Cannot lists what the old format can hold and the new one cannot (from the table of
	// formats: "hard links", "permission bits"...); which entries that concerns is known
	// once the vault is unlocked.
	Cannot []string
}

// Summary says what the plan converts: "from AEGIS-256X2 to AES-256-GCM" within a format,
// "from gocryptfs AES-256-GCM to Cryptomator SIV_GCM" across formats.
func (p *ConvertPlan) Summary() string {
	if p.From.Format != p.To.Format {
		return "from " + p.From.Label() + " to " + p.To.Label()
	}
	return "from " + p.From.String() + " to " + p.To.String()
}

// GocryptfsNote says which programs open the converted vault: "opens in vaultui, gocryptfs,
// ...".
func (p *ConvertPlan) GocryptfsNote() string {
	if p.OpensIn.VaultuiOnly() {
		return "opens only in vaultui: " + p.OpensIn.Others
	}
	return "opens in " + p.OpensIn.List()
}

// ConvertResult says what Convert did.
type ConvertResult struct {
	Dir      string // the cipherdir, now with the new cipher
	OldDir   string // where the old vault is kept
	From, To ConvertSide
	Swap     string // SwapExchange or SwapRenames
	Bytes    int64  // plaintext bytes re-encrypted
	// Unchanged lists entries copied as they are, cipher paths: files that are not the
	// vault's (desktop.ini and the like, which the mount hides). Dropped lists what stays
	// only in the old vault: copies of gocryptfs.conf, which carry the old cipher's flags.
	Unchanged, Dropped []string
	// Resumed says that this run finished an interrupted one; Cleaned that it removed a
	// half-built tree an interrupted run left.
	Resumed, Cleaned bool
	// Lost names what the new format cannot hold and DropUnsupported left behind (it stays
	// in the old vault). Left lists, as cipher paths, files in the old vault's folder that are
	// not the vault's (desktop.ini): a rebuilt vault does not carry them.
	Lost []Unsupported
	Left []string
	// MasterKey is a rebuilt vault's new master key, to show once (see Format.KeyNote for how
	// it is written); nil when the master key stayed. Wipe it after.
	MasterKey []byte
}

// convertState is WORK/state.json: the two sides' ciphers (ConvertSide.Cipher) and formats
// (their IDs; "" is gocryptfs, the only format of the first state files).
type convertState struct {
	From       string `json:"from"`
	To         string `json:"to"`
	Keep       string `json:"keep"`
	FromFormat string `json:"from_format,omitempty"`
	ToFormat   string `json:"to_format,omitempty"`
}

// sides returns the sides st records.
func (st *convertState) sides() (from, to ConvertSide, err error) {
	ff, err := FormatByID(st.FromFormat)
	if err != nil {
		return from, to, err
	}
	tf, err := FormatByID(st.ToFormat)
	if err != nil {
		return from, to, err
	}
	return ConvertSide{ff, st.From}, ConvertSide{tf, st.To}, nil
}

// checkConvertPair refuses conversions that would not keep the vault's names.
func checkConvertPair(dir string, c *Config, to crypto.CipherID) error {
	if !to.Valid() {
		return fmt.Errorf("%w %q", crypto.ErrUnknownCipher, string(to))
	}
	if c.Cipher() == to {
		return fmt.Errorf("%s %w %s", dir, ErrAlreadyConverted, to)
	}
	if (to == crypto.AEGIS || to == crypto.XChaCha) && !c.Has(FlagHKDF) {
		return fmt.Errorf("%s: %w: the vault predates HKDF key derivation (gocryptfs before 1.3), which %s requires; adding it would change the key every name is encrypted with (convert to gcm or siv, or copy the files into a new vault)",
			dir, ErrUnsupported, to)
	}
	return nil
}

// convertFlags returns the feature flags of the vault with flags converted to cipher to: the
// content cipher's flags replaced, every other flag kept, in gocryptfs's order.
func convertFlags(flags []string, to crypto.CipherID) []string {
	cipherFlags := []string{FlagGCMIV128, FlagAESSIV, FlagXChaCha20Poly1305, FlagAEGIS256X2}
	var out []string
	for _, f := range flags {
		if !slices.Contains(cipherFlags, f) {
			out = append(out, f)
		}
	}
	main := FlagGCMIV128
	switch to {
	case crypto.XChaCha:
		main = FlagXChaCha20Poly1305
	case crypto.AEGIS:
		main = FlagAEGIS256X2
	}
	at := 0
	if i := slices.Index(out, FlagHKDF); i >= 0 {
		at = i + 1
	}
	out = slices.Insert(out, at, main)
	if to == crypto.AESSIV {
		out = append(out, FlagAESSIV)
	}
	return out
}

// realDir resolves symlinks in dir, so the swap renames the directory itself, not a link to it.
func realDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	return real, nil
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

// PlanConvert checks that the vault in cipherdir can be converted as opts say and finds what
// that takes, without the password and without changing anything: the vault must not be
// mounted, the pair must be one vaultui converts (within gocryptfs, one that keeps the names:
// see the comment at the top of convert.go), the place for the old vault must be free and on
// the same file system, and the file system must have room for the new vault (an error
// wrapping syscall.ENOSPC says how much it needs). It also reports what an interrupted
// conversion left (Interrupted).
func PlanConvert(cipherdir string, opts ConvertOptions) (*ConvertPlan, error) {
	dir, err := realDir(cipherdir)
	missing := errors.Is(err, os.ErrNotExist)
	if missing {
		// A run interrupted between the two renames leaves no vault here; its state says so.
		dir, _ = filepath.Abs(cipherdir)
	} else if err != nil {
		return nil, err
	}
	if err := checkMounted(cipherdir, dir, opts.MountedAt); err != nil {
		return nil, err
	}
	p := &ConvertPlan{Dir: dir, Work: dir + convertWorkSuffix}
	if st, serr := readConvertState(p.Work); serr == nil {
		from, to, err := st.sides()
		if err != nil {
			return nil, err
		}
		p.InterruptedTo, p.InterruptedKeep = to, st.Keep
		p.Interrupted = InterruptedBuilding
		swapped, err := convertSwapped(dir, p.Work, st)
		if err != nil {
			return nil, err
		}
		if swapped {
			p.Interrupted = InterruptedSwapped
			p.From, p.To, p.KeepOld = from, to, st.Keep
			return p, nil
		}
	} else if !errors.Is(serr, os.ErrNotExist) {
		return nil, serr
	}
	if missing {
		return nil, fmt.Errorf("%s: %w", cipherdir, ErrNotFound)
	}
	folder, err := Open(dir)
	if err != nil {
		return nil, err
	}
	if !folder.Format.Can.Walk {
		return nil, fmt.Errorf("%s: %w: a %s is not converted", cipherdir, ErrUnsupported, folder.Format.Name)
	}
	variant, err := folder.Format.kind.variant(dir)
	if err != nil {
		return nil, err
	}
	p.From = ConvertSide{Format: folder.Format, Cipher: variant}
	target := folder.Format
	if opts.Format != "" {
		if target, err = FormatByID(opts.Format); err != nil {
			return nil, err
		}
		if !target.Can.Walk || !target.Can.Mount {
			return nil, fmt.Errorf("%w: a vault cannot be converted into a %s", ErrUnsupported, target.Name)
		}
	}
	to, err := target.kind.targetVariant(opts.To)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cipherdir, err)
	}
	p.To = ConvertSide{Format: target, Cipher: to}
	if p.To == p.From {
		return nil, fmt.Errorf("%s %w %s", cipherdir, ErrAlreadyConverted, p.To)
	}
	p.OpensIn = target.OpensIn(crypto.CipherID(to))
	if p.KeepOld, err = keepPath(dir, p.From.slug(p.To), opts.KeepOld); err != nil {
		return nil, err
	}
	var sfs unix.Statfs_t
	if err := unix.Statfs(filepath.Dir(dir), &sfs); err != nil {
		return nil, fmt.Errorf("statfs %s: %w", filepath.Dir(dir), err)
	}
	bsize := uint64(sfs.Bsize)
	p.FreeBytes = sfs.Bavail * bsize
	if r, ok := resealerOf(p); ok {
		if err := r.planReseal(cipherdir, p, bsize); err != nil {
			return nil, err
		}
	} else {
		p.Rebuild, p.NewKey = true, p.From.Format != p.To.Format
		p.Cannot = cannotHold(p.From.Format, p.To.Format)
		if err := p.measureRebuild(bsize); err != nil {
			return nil, err
		}
	}
	if opts.NewPassword != nil && !p.NewKey {
		return nil, fmt.Errorf("%s: a conversion within a format keeps the vault's key file and so its password (change it with vaultui passwd)", cipherdir)
	}
	if p.Interrupted == InterruptedBuilding {
		// The half-built tree is removed first: its space counts as free.
		p.FreeBytes += treeBytes(filepath.Join(p.Work, convertNewDir))
	}
	if p.NeedBytes > p.FreeBytes {
		return p, fmt.Errorf("%s: %w: converting needs %s for the new vault beside the old one, and %s has %s free",
			cipherdir, syscall.ENOSPC, megabytes(p.NeedBytes), filepath.Dir(dir), megabytes(p.FreeBytes))
	}
	return p, nil
}

// resealer is a format that converts a vault to another of its content ciphers by resealing
// its files in place, keeping its master key and names (gocryptfs).
type resealer interface {
	// planReseal checks the pair of p and measures what resealing takes (p.PlainBytes,
	// p.Files, p.NeedBytes) in blocks of bsize.
	planReseal(cipherdir string, p *ConvertPlan, bsize uint64) error
	// reseal converts the vault of plan p (Convert).
	reseal(ctx context.Context, cipherdir string, p *ConvertPlan, password []byte, opts ConvertOptions) (*ConvertResult, error)
}

// resealerOf returns the resealer that converts p within its format, if its format has one.
func resealerOf(p *ConvertPlan) (resealer, bool) {
	if p.From.Format != p.To.Format {
		return nil, false
	}
	r, ok := p.From.Format.kind.(resealer)
	return r, ok
}

func (gocryptfsKind) planReseal(cipherdir string, p *ConvertPlan, bsize uint64) error {
	c, err := LoadConfig(p.Dir)
	if err != nil {
		return err
	}
	if err := checkConvertPair(cipherdir, c, crypto.CipherID(p.To.Cipher)); err != nil {
		return err
	}
	return p.measure(bsize, c.PlaintextNames())
}

// keepPath returns where the old vault goes: keep, checked, or the first free
// DIR.old-SLUG[-N] beside dir.
func keepPath(dir string, slug string, keep string) (string, error) {
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

// measure walks the cipherdir (cipher entries only, no key needed) for the plaintext bytes to
// re-encrypt and the space the new vault takes in blocks of bsize.
func (p *ConvertPlan) measure(bsize uint64, plaintextNames bool) error {
	oldOver, newOver := uint64(crypto.CipherID(p.From.Cipher).BlockOverhead()), uint64(crypto.CipherID(p.To.Cipher).BlockOverhead())
	round := func(n uint64) uint64 { return (n + bsize - 1) / bsize * bsize }
	fd, err := unix.Open(p.Dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", p.Dir, err)
	}
	defer unix.Close(fd)
	var walk func(dirfd int, root bool) error
	walk = func(dirfd int, root bool) error {
		names, err := layout.ReadDirNames(dirfd)
		if err != nil {
			return err
		}
		p.NeedBytes += bsize
		for _, name := range names {
			if root && strings.HasPrefix(name, crypto.ConfName) {
				p.NeedBytes += bsize
				continue
			}
			var st unix.Stat_t
			if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFDIR:
				cfd, err := layout.OpenDir(dirfd, name)
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				err = walk(cfd, false)
				unix.Close(cfd)
				if err != nil {
					return err
				}
			case unix.S_IFREG:
				size := uint64(st.Size)
				plain := size
				if size > crypto.HeaderLen && (plaintextNames || !isMachineryName(name)) {
					blocks := (size - crypto.HeaderLen + uint64(crypto.BlockSize) + oldOver - 1) / (uint64(crypto.BlockSize) + oldOver)
					plain = size - crypto.HeaderLen - min(size-crypto.HeaderLen, blocks*oldOver)
					size = crypto.HeaderLen + plain + blocks*newOver
					p.PlainBytes += int64(plain)
					p.Files++
				}
				p.NeedBytes += round(size)
			default:
				p.NeedBytes += bsize
			}
		}
		return nil
	}
	if err := walk(fd, true); err != nil {
		return fmt.Errorf("%s: %w", p.Dir, err)
	}
	return nil
}

// treeBytes returns the space the tree at dir takes (best effort).
func treeBytes(dir string) uint64 {
	var n uint64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
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

// megabytes writes n for an error message; front ends format sizes their own way.
func megabytes(n uint64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// readConvertState reads WORK/state.json; a missing work directory or state file wraps
// os.ErrNotExist.
func readConvertState(work string) (*convertState, error) {
	b, err := os.ReadFile(filepath.Join(work, convertStateFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("reading the state of an interrupted conversion: %w", err)
	}
	var st convertState
	err = json.Unmarshal(b, &st)
	if err == nil {
		_, _, err = st.sides()
	}
	if err != nil || st.From == "" || st.To == "" || st.Keep == "" {
		return nil, fmt.Errorf("%s: %w: the state of an interrupted conversion does not parse; move %s away and run again", filepath.Join(work, convertStateFile), ErrCorrupt, work)
	}
	return &st, nil
}

// convertSwapped reports whether an interrupted conversion (st) got past the swap: the
// vault's place holds the new cipher and WORK/new the old one (after an exchange), or the
// vault's place is empty, the old vault is at its keeping place and WORK/new holds the new
// one (between the two renames). Any other mix is an error: nothing is touched then.
func convertSwapped(dir, work string, st *convertState) (bool, error) {
	fromSide, toSide, err := st.sides()
	if err != nil {
		return false, err
	}
	from, to := fromSide.key(), toSide.key()
	at := func(d string) string {
		s, _ := sideAt(d)
		return s.key()
	}
	newDir := filepath.Join(work, convertNewDir)
	atDir, atNew := at(dir), at(newDir)
	_, dirErr := os.Lstat(dir)
	_, newErr := os.Lstat(newDir)
	switch {
	case errors.Is(dirErr, os.ErrNotExist) && atNew == to && at(st.Keep) == from:
		return true, nil
	case atDir == to && (atNew == from || errors.Is(newErr, os.ErrNotExist)):
		return true, nil
	case atDir == from && atNew != from:
		return false, nil
	}
	return false, fmt.Errorf("%s: an interrupted conversion from %s to %s left a state vaultui does not recognise (%s: %q, %s: %q); nothing was changed: check both by hand",
		dir, fromSide.Label(), toSide.Label(), dir, atDir, newDir, atNew)
}

// FinishConvert completes a conversion that was interrupted after its swap (PlanConvert says
// InterruptedSwapped): the new vault is in place and checked; the old one is moved to where
// the interrupted run meant to keep it. It needs no password.
func FinishConvert(cipherdir string) (*ConvertResult, error) {
	dir, err := realDir(cipherdir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			dir, err = filepath.Abs(cipherdir) // interrupted between the two renames
		}
		if err != nil {
			return nil, err
		}
	}
	res, swapped, err := recoverConvert(dir)
	if err != nil {
		return nil, err
	}
	if !swapped {
		return nil, fmt.Errorf("%s: no interrupted conversion to finish", cipherdir)
	}
	return res, nil
}

// recoverConvert deals with what an interrupted conversion left in dir's work directory: it
// finishes a swapped one (res, true) or removes a half-built tree (res.Cleaned). Without a
// work directory it does nothing.
func recoverConvert(dir string) (res *ConvertResult, swapped bool, err error) {
	work := dir + convertWorkSuffix
	res = &ConvertResult{Dir: dir}
	st, err := readConvertState(work)
	if errors.Is(err, os.ErrNotExist) {
		// Either no conversion, or one stopped before its state file was in place (only a
		// temporary state file can be there then) or after the old vault was moved away.
		names, rerr := readDirNames(work)
		if errors.Is(rerr, os.ErrNotExist) {
			return res, false, nil
		}
		if rerr != nil {
			return nil, false, rerr
		}
		for _, n := range names {
			if n != convertStateFile+".tmp" {
				return nil, false, fmt.Errorf("%s holds %s but no %s: not a conversion vaultui recognises; move it away and run again", work, n, convertStateFile)
			}
		}
		return res, false, removeWork(work)
	}
	if err != nil {
		return nil, false, err
	}
	if res.From, res.To, err = st.sides(); err != nil {
		return nil, false, err
	}
	res.OldDir = st.Keep
	swapped, err = convertSwapped(dir, work, st)
	if err != nil {
		return nil, false, err
	}
	newDir := filepath.Join(work, convertNewDir)
	parent := filepath.Dir(dir)
	if !swapped {
		if err := removeTree(newDir); err != nil {
			return nil, false, fmt.Errorf("removing the half-built vault an interrupted conversion left in %s: %w", newDir, err)
		}
		res.Cleaned = true
		return res, false, removeWork(work)
	}
	res.Resumed = true
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		// Between the two renames of a file system without RENAME_EXCHANGE.
		res.Swap = SwapRenames
		if err := os.Rename(newDir, dir); err != nil {
			return nil, false, err
		}
		if err := syncDirs(parent, work); err != nil {
			return nil, false, err
		}
	} else if _, err := os.Lstat(newDir); err == nil {
		if err := moveOld(newDir, st.Keep); err != nil {
			return nil, false, err
		}
	}
	return res, true, removeWork(work)
}

// moveOld renames the old vault (at from, after the swap) to keep.
func moveOld(from, keep string) error {
	if err := os.Rename(from, keep); err != nil {
		return fmt.Errorf("moving the old vault to %s: %w (it is still at %s)", keep, err, from)
	}
	if err := syncDirs(filepath.Dir(keep), filepath.Dir(from)); err != nil {
		return fmt.Errorf("the old vault is at %s, but the move may not be on disk: %w", keep, err)
	}
	return nil
}

// removeWork removes the state file and the work directory, in that order: a crash between
// leaves an empty work directory, which the next run removes.
func removeWork(work string) error {
	for _, n := range []string{convertStateFile + ".tmp", convertStateFile} {
		if err := os.Remove(filepath.Join(work, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if err := syncDirs(work); err != nil {
		return err
	}
	if err := os.Remove(work); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", work, err)
	}
	return syncDirs(filepath.Dir(work))
}

// syncDirs fsyncs each directory in dirs, making the renames, creations and removals in them
// durable; it stops at the first error. Each error counts: a conversion that went on after
// one could report success for a swap that is not on disk. Stopping leaves what a crash at
// that point leaves, which the next run finishes or cleans up (TestConvertKilled).
func syncDirs(dirs ...string) error {
	for _, d := range dirs {
		if err := atomicfile.SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}

func readDirNames(dir string) ([]string, error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0) // a FIFO in its place: ENOTDIR, not a hang
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// removeTree removes the tree at dir, which this package built: directories it left
// read-only are made writable first. A missing dir is not an error.
func removeTree(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	err = removeContents(fd)
	unix.Close(fd)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if err := os.Remove(dir); err != nil {
		return err
	}
	return syncDirs(filepath.Dir(dir))
}

func removeContents(dirfd int) error {
	unix.Fchmod(dirfd, 0o700)
	names, err := layout.ReadDirNames(dirfd)
	if err != nil {
		return err
	}
	for _, name := range names {
		err := unix.Unlinkat(dirfd, name, 0)
		if err == unix.EISDIR || err == unix.EPERM {
			cfd, oerr := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if oerr != nil {
				// No read permission: make it readable first.
				unix.Fchmodat(dirfd, name, 0o700, 0)
				if cfd, oerr = unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); oerr != nil {
					return fmt.Errorf("%s: %w", name, oerr)
				}
			}
			err = removeContents(cfd)
			unix.Close(cfd)
			if err != nil {
				return err
			}
			err = unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR)
		}
		if err != nil && err != unix.ENOENT {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// Convert converts the vault in cipherdir as opts say, crash-safely (see the comment at the
// top of convert.go): it builds the new vault beside the old one (within gocryptfs with the
// same master key, names and password; into another format with a new master key), checks
// it completely, swaps it in and keeps the old vault at opts.KeepOld (or beside). An
// interrupted earlier run is finished or cleaned up first. It refuses a mounted vault
// (ErrMounted), a wrong password (ErrWrongPassword), a damaged vault (ErrCorrupt: run Fsck;
// nothing unauthenticated is carried over), entries the new format cannot hold
// (*UnsupportedError, unless opts.DropUnsupported) and too little space (syscall.ENOSPC). On
// any error before the swap the old vault is unchanged and the half-built tree is removed; a
// later run also removes what a crash left.
func Convert(ctx context.Context, cipherdir string, password []byte, opts ConvertOptions) (res *ConvertResult, err error) {
	if dir, err := realDir(cipherdir); err == nil {
		if _, err := readConvertState(dir + convertWorkSuffix); errors.Is(err, os.ErrNotExist) {
			// A work directory without a state file is what a run killed at its very start
			// or end leaves: only the work directory itself goes.
			if _, _, err := recoverConvert(dir); err != nil {
				return nil, err
			}
		}
	}
	plan, err := PlanConvert(cipherdir, opts)
	if err != nil {
		return nil, err
	}
	if plan.Interrupted == InterruptedSwapped {
		done, err := FinishConvert(cipherdir)
		if err != nil {
			return nil, err
		}
		// If the interrupted conversion was another one, go on from its result.
		if plan, err = PlanConvert(cipherdir, opts); err != nil {
			if errors.Is(err, ErrAlreadyConverted) {
				return done, nil
			}
			return nil, err
		}
	}
	if r, ok := resealerOf(plan); ok {
		return r.reseal(ctx, cipherdir, plan, password, opts)
	}
	return rebuild(ctx, cipherdir, plan, password, opts)
}

// reseal converts a gocryptfs vault to another content cipher, file by file (see the
// comment at the top of convert.go).
func (gocryptfsKind) reseal(ctx context.Context, cipherdir string, plan *ConvertPlan, password []byte, opts ConvertOptions) (*ConvertResult, error) {
	dir := plan.Dir
	to := crypto.CipherID(plan.To.Cipher)
	c, err := LoadConfig(dir)
	if err != nil {
		return nil, err
	}
	mk, err := c.openMasterKey(ctx, cipherdir, password)
	if err != nil {
		return nil, err
	}
	defer crypto.Wipe(mk)
	old, err := open(dir, c, mk)
	if err != nil {
		return nil, err
	}
	defer old.Close()
	oldPaths, err := listVault(ctx, old)
	if err != nil {
		return nil, err
	}

	res := &ConvertResult{Dir: dir, From: plan.From, To: plan.To, OldDir: plan.KeepOld}
	err = convertInto(cipherdir, plan, opts, res, func(newDir string) error {
		nc := *c
		nc.FeatureFlags = convertFlags(c.FeatureFlags, to)
		if err := nc.Validate(); err != nil {
			return fmt.Errorf("the converted config does not validate: %w", err)
		}
		newCE, err := crypto.NewContentEnc(to, mk, c.Has(FlagHKDF))
		if err != nil {
			return err
		}
		newCE.SetPaddedBase64(!c.Has(FlagRaw64))
		defer newCE.Wipe()
		cv := &converter{ctx: ctx, old: old, newCE: newCE, newRoot: newDir, total: plan.PlainBytes,
			progress: opts.Progress, links: map[[2]uint64]string{}}
		if err := cv.copyVault(dir, newDir, &nc); err != nil {
			return err
		}
		res.Bytes, res.Unchanged, res.Dropped = cv.done, cv.unchanged, cv.dropped

		nv, err := open(newDir, &nc, mk)
		if err != nil {
			return err
		}
		defer nv.Close()
		return checkConverted(ctx, old, nv, oldPaths, plan.PlainBytes, opts.Progress)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// convertInto does what every conversion does around building its new vault: it removes what
// an interrupted run left before its swap, records the conversion in the work directory's
// state file, has build make and check the new vault in WORK/new, syncs it, swaps it in and
// removes the work directory. Until the swap, an error (or a crash, on the next run) removes
// what was built; the old vault is only read.
func convertInto(cipherdir string, plan *ConvertPlan, opts ConvertOptions, res *ConvertResult, build func(newDir string) error) (err error) {
	dir := plan.Dir
	// What an interrupted run left before the swap (a half-built tree, or only the start
	// of a work directory) goes first.
	r, _, err := recoverConvert(dir)
	if err != nil {
		return err
	}
	res.Cleaned = r.Cleaned
	work := plan.Work
	if err := os.Mkdir(work, 0o700); err != nil {
		return fmt.Errorf("creating the work directory: %w", err)
	}
	state, err := json.Marshal(convertState{From: plan.From.Cipher, To: plan.To.Cipher, Keep: plan.KeepOld,
		FromFormat: plan.From.Format.ID, ToFormat: plan.To.Format.ID})
	if err != nil {
		return err
	}
	statePath := filepath.Join(work, convertStateFile)
	if err := atomicfile.Replace(atomicfile.OS{}, statePath, statePath+".tmp", state, 0o600); err != nil {
		removeWork(work)
		return fmt.Errorf("writing %s: %w", statePath, err)
	}
	if err := syncDirs(work, filepath.Dir(work)); err != nil {
		removeWork(work)
		return err
	}

	newDir := filepath.Join(work, convertNewDir)
	swapped := false
	defer func() {
		if err != nil && !swapped {
			// The old vault was only read: remove what was built, keep the error.
			if rerr := removeTree(newDir); rerr == nil {
				removeWork(work)
			}
		}
	}()
	if err = build(newDir); err != nil {
		return err
	}
	if opts.Progress != nil {
		opts.Progress(ConvertProgress{Phase: PhaseSwap})
	}
	// Everything of the new vault reaches the disk before it becomes the vault.
	if err = syncFS(newDir); err != nil {
		return err
	}
	if err = checkMounted(cipherdir, dir, opts.MountedAt); err != nil {
		return err
	}
	res.Swap, err = swapIn(dir, newDir, plan.KeepOld)
	if res.Swap != "" {
		swapped = true
	}
	if err == nil {
		err = removeWork(work)
	}
	if err != nil && swapped {
		// Stopping here leaves what a crash here would: the state file says what is left to
		// do, or, once removeWork has taken it, an empty work directory; the next run
		// finishes or removes it.
		return fmt.Errorf("%s: the conversion to %s stopped after its swap: %w; nothing is lost: run convert again to finish it", dir, plan.To, err)
	}
	return err
}

// syncFS flushes the file system holding dir (syncfs): one call for the whole new tree.
func syncFS(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	defer unix.Close(fd)
	if err := unix.Syncfs(fd); err != nil {
		return fmt.Errorf("syncfs %s: %w", dir, err)
	}
	return nil
}

// swapIn puts the new vault at newDir in dir's place and the old one at keep: one
// renameat2(RENAME_EXCHANGE) then a rename, or, where the file system cannot exchange, two
// renames. method is set as soon as the old vault has left dir's place, even with an error:
// from then on only finishing (a later run) is safe, not removing newDir.
func swapIn(dir, newDir, keep string) (method string, err error) {
	err = unix.Renameat2(unix.AT_FDCWD, newDir, unix.AT_FDCWD, dir, unix.RENAME_EXCHANGE)
	switch err {
	case nil:
		if err := syncDirs(filepath.Dir(dir), filepath.Dir(newDir)); err != nil {
			return SwapExchange, err
		}
		return SwapExchange, moveOld(newDir, keep)
	case unix.EINVAL, unix.ENOSYS, unix.EOPNOTSUPP:
		if err := os.Rename(dir, keep); err != nil {
			return "", fmt.Errorf("moving the old vault to %s: %w", keep, err)
		}
		if err := syncDirs(filepath.Dir(keep)); err != nil {
			return SwapRenames, fmt.Errorf("%w (the old vault is at %s; run convert again to finish)", err, keep)
		}
		if err := os.Rename(newDir, dir); err != nil {
			return SwapRenames, fmt.Errorf("moving the new vault to %s: %w (the old vault is at %s; run convert again to finish)", dir, err, keep)
		}
		return SwapRenames, syncDirs(filepath.Dir(dir))
	}
	return "", fmt.Errorf("renameat2 RENAME_EXCHANGE %s %s: %w", newDir, dir, err)
}

// converter copies an unlocked vault into a new tree with another content cipher.
type converter struct {
	ctx       context.Context
	old       *Vault
	newCE     *crypto.ContentEnc
	newRoot   string
	progress  func(ConvertProgress)
	done      int64
	total     int64
	links     map[[2]uint64]string // (dev, inode) of multiply linked files -> new cipher path
	unchanged []string
	dropped   []string
}

func (cv *converter) report() {
	if cv.progress != nil {
		cv.progress(ConvertProgress{Phase: PhaseCopy, Done: cv.done, Total: max(cv.total, cv.done)})
	}
}

// copyVault copies the vault at src into the new directory dst and writes its config c.
func (cv *converter) copyVault(src, dst string, c *Config) error {
	sfd, err := unix.Open(src, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	defer unix.Close(sfd)
	if err := os.Mkdir(dst, 0o700); err != nil {
		return err
	}
	dfd, err := unix.Open(dst, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", dst, err)
	}
	defer unix.Close(dfd)
	cv.report()
	if err := cv.copyDir(sfd, dfd, ""); err != nil {
		return err
	}
	if err := writeConfig(atomicfile.OS{}, dst, c); err != nil {
		return fmt.Errorf("%s: %w", dst, err)
	}
	// The root's own attributes last: writing the config changes its times.
	var st unix.Stat_t
	if err := unix.Fstat(sfd, &st); err != nil {
		return err
	}
	return cv.finishEntry(sfd, dfd, ".", &st)
}

// copyDir copies the directory open at src (cipher path cdir) into the one open at dst.
func (cv *converter) copyDir(src, dst int, cdir string) error {
	names, err := layout.ReadDirNames(src)
	if err != nil {
		return fmt.Errorf("%s: %w", cdir, err)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := cv.ctx.Err(); err != nil {
			return err
		}
		cpath := path.Join(cdir, name)
		if cdir == "" && strings.HasPrefix(name, crypto.ConfName) {
			// The new config is written at the end. Backups and sync conflict copies of the
			// old one carry the old cipher's flags: they stay with the old vault only.
			if name != crypto.ConfName && name != crypto.ConfName+".tmp" {
				cv.dropped = append(cv.dropped, cpath)
			}
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstatat(src, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fmt.Errorf("%s: %w", cpath, err)
		}
		if err := cv.copyEntry(src, dst, cdir, name, &st); err != nil {
			return err
		}
	}
	return nil
}

// copyEntry copies one entry and its attributes.
func (cv *converter) copyEntry(src, dst int, cdir, name string, st *unix.Stat_t) error {
	cpath := path.Join(cdir, name)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		if err := unix.Mkdirat(dst, name, 0o700); err != nil {
			return fmt.Errorf("%s: %w", cpath, err)
		}
		sfd, err := layout.OpenDir(src, name)
		if err != nil {
			return fmt.Errorf("%s: %w", cpath, err)
		}
		defer unix.Close(sfd)
		dfd, err := layout.OpenDir(dst, name)
		if err != nil {
			return fmt.Errorf("%s: %w", cpath, err)
		}
		defer unix.Close(dfd)
		if err := cv.copyDir(sfd, dfd, cpath); err != nil {
			return err
		}
		return cv.finishEntry(sfd, dfd, ".", st)
	case unix.S_IFREG:
		if st.Nlink > 1 {
			key := [2]uint64{uint64(st.Dev), uint64(st.Ino)}
			if first, ok := cv.links[key]; ok {
				if err := unix.Linkat(unix.AT_FDCWD, filepath.Join(cv.newRoot, first), dst, name, 0); err != nil {
					return fmt.Errorf("%s: hard link: %w", cpath, err)
				}
				return nil
			}
			cv.links[key] = cpath
		}
		if cv.isMachinery(name) {
			if err := copyRaw(src, dst, name); err != nil {
				return fmt.Errorf("%s: %w", cpath, err)
			}
			return cv.finishEntry(src, dst, name, st)
		}
		ok, err := cv.resealFile(src, dst, name, st)
		if err != nil {
			return fmt.Errorf("%s: %w", cpath, err)
		}
		if !ok {
			if err := cv.foreign(src, cdir, name); err != nil {
				return err
			}
			if err := copyRaw(src, dst, name); err != nil {
				return fmt.Errorf("%s: %w", cpath, err)
			}
		}
		return cv.finishEntry(src, dst, name, st)
	case unix.S_IFLNK:
		target, err := readlinkAt(src, name)
		if err != nil {
			return fmt.Errorf("%s: %w", cpath, err)
		}
		if cv.old.Names != nil { // plaintext names: targets are stored as they are
			plain, derr := cv.old.Content.DecryptSymlink(target)
			if derr == nil {
				target = cv.newCE.EncryptSymlink(plain)
			} else if err := cv.foreign(src, cdir, name); err != nil {
				return err
			}
		}
		if err := unix.Symlinkat(target, dst, name); err != nil {
			return fmt.Errorf("%s: %w", cpath, err)
		}
		return cv.finishEntry(src, dst, name, st)
	default: // FIFOs, sockets, device nodes: only their names are encrypted
		if err := unix.Mknodat(dst, name, st.Mode&(unix.S_IFMT|0o777), int(st.Rdev)); err != nil {
			return fmt.Errorf("%s: %w", cpath, err)
		}
		return cv.finishEntry(src, dst, name, st)
	}
}

// isMachinery reports whether name is one of the format's own small files that are the same
// under any content cipher: gocryptfs.diriv, long names' .name files, and sync tools'
// conflict copies of them.
func (cv *converter) isMachinery(name string) bool {
	return cv.old.Names != nil && isMachineryName(name)
}

// isMachineryName is isMachinery for a vault with encrypted names.
func isMachineryName(name string) bool {
	own := func(base string) bool { return base == crypto.DirIVName || crypto.IsLongNameFile(base) }
	if own(name) {
		return true
	}
	_, ok := layout.ParseConflict(name, own)
	return ok
}

// foreign decides about an entry whose content does not authenticate: if its name is one of
// the vault's (it decrypts, or is a sync tool's conflict copy of one), the vault is damaged
// and the conversion stops; otherwise it is a file put there by hand or by a sync tool, which
// the mount hides, and it is copied unchanged.
func (cv *converter) foreign(dirfd int, cdir, name string) error {
	cpath := path.Join(cdir, name)
	damaged := fmt.Errorf("%s: %w: content does not authenticate; nothing was changed (run vaultui fsck for details)", cpath, ErrCorrupt)
	if cv.old.Names == nil {
		return damaged
	}
	if iv, err := cv.old.dirIVAt(dirfd); err == nil {
		if _, err := cv.old.decryptEntryName(dirfd, name, iv); err == nil {
			return damaged
		}
		if _, _, _, ok := layout.ConflictCopy(dirfd, name, iv, cv.old.Names, cdir == ""); ok {
			return damaged
		}
	}
	cv.unchanged = append(cv.unchanged, cpath)
	return nil
}

// resealFile re-encrypts the regular file name from src into a new file in dst, block by
// block, under a fresh file ID. ok is false (and nothing is left in dst) when the old file's
// size, header or a block does not authenticate; err is for I/O errors.
func (cv *converter) resealFile(src, dst int, name string, st *unix.Stat_t) (ok bool, err error) {
	sfd, err := layout.OpenFile(src, name, unix.O_RDONLY, 0, nil)
	if err != nil {
		return false, err
	}
	in := os.NewFile(uintptr(sfd), name)
	defer in.Close()
	dfd, err := unix.Openat(dst, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return false, err
	}
	out := os.NewFile(uintptr(dfd), name)
	defer func() {
		out.Close()
		if !ok || err != nil {
			unix.Unlinkat(dst, name, 0)
		}
	}()
	oc, nc := cv.old.Content, cv.newCE
	csize := uint64(st.Size)
	psize, perr := oc.PlainSize(csize)
	if perr != nil {
		return false, nil
	}
	if csize == 0 {
		return true, nil
	}
	var hdr [crypto.HeaderLen]byte
	if _, err := in.ReadAt(hdr[:], 0); err != nil {
		return false, err
	}
	oh, herr := crypto.ParseFileHeader(hdr[:])
	if herr != nil {
		return false, nil
	}
	if psize == 0 {
		return true, nil // only a header (an interrupted first write): an empty file
	}
	nh, err := crypto.NewFileHeader()
	if err != nil {
		return false, err
	}
	if _, err := out.Write(nh.Bytes()); err != nil {
		return false, err
	}
	ocbs := int64(oc.CipherBlockSize())
	nblocks := (int64(csize) - crypto.HeaderLen + ocbs - 1) / ocbs
	cbuf := make([]byte, readChunkBlocks*ocbs)
	pbuf := make([]byte, 0, readChunkBlocks*crypto.BlockSize)
	obuf := make([]byte, 0, readChunkBlocks*nc.CipherBlockSize())
	defer crypto.Wipe(pbuf[:cap(pbuf)])
	for first := int64(0); first < nblocks; first += readChunkBlocks {
		if err := cv.ctx.Err(); err != nil {
			return false, err
		}
		off := crypto.HeaderLen + first*ocbs
		chunk := cbuf[:min(readChunkBlocks*ocbs, int64(csize)-off)]
		if _, err := in.ReadAt(chunk, off); err != nil {
			return false, err
		}
		plain, derr := oc.DecryptBlocks(pbuf[:0], chunk, uint64(first), oh.ID[:])
		if derr != nil {
			return false, nil
		}
		// Runs of blocks are sealed and written; full zero blocks stay holes, as gocryptfs
		// leaves them (they read as zeros).
		for i := 0; i < len(plain); {
			j := i
			for j < len(plain) && !(j+crypto.BlockSize <= len(plain) && isZero(plain[j:j+crypto.BlockSize])) {
				j += crypto.BlockSize
			}
			j = min(j, len(plain))
			if j > i {
				blk := uint64(first) + uint64(i/crypto.BlockSize)
				obuf = nc.EncryptBlocks(obuf[:0], plain[i:j], blk, nh.ID[:])
				if _, err := out.WriteAt(obuf, int64(nc.BlockCipherOffset(blk))); err != nil {
					return false, err
				}
			}
			i = j + crypto.BlockSize
		}
		cv.done += int64(len(plain))
		cv.report()
	}
	if err := out.Truncate(int64(nc.CipherSize(psize))); err != nil {
		return false, err
	}
	return true, nil
}

// copyRaw copies the regular file name from src to a new file in dst byte for byte.
func copyRaw(src, dst int, name string) error {
	sfd, err := layout.OpenFile(src, name, unix.O_RDONLY, 0, nil)
	if err != nil {
		return err
	}
	in := os.NewFile(uintptr(sfd), name)
	defer in.Close()
	dfd, err := unix.Openat(dst, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	out := os.NewFile(uintptr(dfd), name)
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		unix.Unlinkat(dst, name, 0)
	}
	return err
}

func readlinkAt(dirfd int, name string) (string, error) {
	for n := 4096; ; n *= 2 {
		buf := make([]byte, n)
		m, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if m < n {
			return string(buf[:m]), nil
		}
	}
}

// procPath names entry name of dirfd for the *xattr calls, which have no *at form before
// Linux 6.13 (a symlink in name's place is not followed: the l*xattr calls are used).
func procPath(dirfd int, name string) string {
	return "/proc/self/fd/" + strconv.Itoa(dirfd) + "/" + name
}

// finishEntry gives the new entry name in dst the extended attributes (values re-sealed),
// owner (as root), permission bits and times of the old one in src (st).
func (cv *converter) finishEntry(src, dst int, name string, st *unix.Stat_t) error {
	isLink := st.Mode&unix.S_IFMT == unix.S_IFLNK
	if !isLink {
		if err := cv.copyXattrs(procPath(src, name), procPath(dst, name)); err != nil {
			return err
		}
	}
	if os.Geteuid() == 0 {
		if err := unix.Fchownat(dst, name, int(st.Uid), int(st.Gid), unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if !isLink {
		if err := unix.Fchmodat(dst, name, st.Mode&0o7777, 0); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	ts := []unix.Timespec{st.Atim, st.Mtim}
	if err := unix.UtimesNanoAt(dst, name, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// copyXattrs copies the extended attributes of sp to dp: the vault's own (user.gocryptfs.*)
// with their values opened with the old cipher and sealed with the new one (their names do
// not depend on the cipher), POSIX ACLs and other programs' user.* attributes as they are.
func (cv *converter) copyXattrs(sp, dp string) error {
	list, err := xattrList(sp)
	if err != nil || len(list) == 0 {
		return nil // a file system without attributes has none to copy
	}
	for _, attr := range list {
		ours := strings.HasPrefix(attr, crypto.XattrPrefix)
		if !ours && !strings.HasPrefix(attr, "user.") && attr != "system.posix_acl_access" && attr != "system.posix_acl_default" {
			continue
		}
		val, err := xattrGet(sp, attr)
		if err != nil {
			return fmt.Errorf("attribute %q: %w", attr, err)
		}
		if ours {
			plain, err := cv.old.Content.DecryptXattrValue(val)
			if err != nil {
				return fmt.Errorf("%w: attribute %q of %s does not authenticate; nothing was changed (run vaultui fsck)", ErrCorrupt, attr, sp)
			}
			val = cv.newCE.EncryptXattrValue(plain)
			crypto.Wipe(plain)
		}
		if err := unix.Lsetxattr(dp, attr, val, 0); err != nil {
			return fmt.Errorf("attribute %q: %w", attr, err)
		}
	}
	return nil
}

func xattrList(p string) ([]string, error) {
	buf := make([]byte, 4096)
	for {
		n, err := unix.Llistxattr(p, buf)
		if err == unix.ERANGE {
			buf = make([]byte, 2*len(buf))
			continue
		}
		if err != nil {
			return nil, err
		}
		var out []string
		for _, s := range strings.Split(string(buf[:n]), "\x00") {
			if s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	}
}

func xattrGet(p, attr string) ([]byte, error) {
	buf := make([]byte, xattrBufMax)
	n, err := unix.Lgetxattr(p, attr, buf)
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// checkConverted checks the new vault nv completely against the old one: every name, block,
// symlink target and attribute of nv decrypts (what Fsck checks), the two hold the same
// entries in the same order, and each entry has the same type, permission bits, times,
// plaintext content, target and attributes. Both sides are read with the offline reader
// (decryptFile), not with the code that wrote the new vault.
func checkConverted(ctx context.Context, old, nv *Vault, oldPaths []string, total int64, progress func(ConvertProgress)) error {
	var problems []Problem
	addProblem := func(p Problem) {
		if p.Damage() {
			problems = append(problems, p)
		}
	}
	type dirFD struct {
		cdir string
		fd   int
	}
	rootfd, err := unix.Open(old.Dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	stack := []dirFD{{"", rootfd}}
	defer func() {
		for _, d := range stack {
			unix.Close(d.fd)
		}
	}()
	var done int64
	i := 0
	mismatch := func(p, what string) error {
		return fmt.Errorf("%s: the converted vault does not match the old one at %s: %s; nothing was changed", old.Dir, p, what)
	}
	err = nv.Walk(ctx, func(n Node) error {
		if i >= len(oldPaths) || oldPaths[i] != n.Path {
			return mismatch(n.Path, "an entry the old vault does not have there")
		}
		i++
		parent := path.Dir(n.CipherPath)
		if parent == "." {
			parent = ""
		}
		for len(stack) > 1 && stack[len(stack)-1].cdir != parent {
			unix.Close(stack[len(stack)-1].fd)
			stack = stack[:len(stack)-1]
		}
		if stack[len(stack)-1].cdir != parent {
			return mismatch(n.Path, "its directory is not where it is in the old vault")
		}
		ofd := stack[len(stack)-1].fd
		oinfo, err := lstatAt(ofd, refOf(n).name)
		if err != nil {
			return mismatch(n.Path, err.Error())
		}
		on := Node{Path: n.Path, CipherPath: n.CipherPath, Info: oinfo, Conflict: n.Conflict, Ref: gocryptfsRef{ofd, refOf(n).name}}
		ost, nst := oinfo.Sys().(*syscall.Stat_t), n.Info.Sys().(*syscall.Stat_t)
		if oinfo.Mode() != n.Info.Mode() {
			return mismatch(n.Path, fmt.Sprintf("mode %v, was %v", n.Info.Mode(), oinfo.Mode()))
		}
		if ost.Mtim != nst.Mtim {
			return mismatch(n.Path, "modification time differs")
		}
		switch t := n.Info.Mode().Type(); {
		case t.IsDir():
			cfd, err := layout.OpenDir(ofd, refOf(n).name)
			if err != nil {
				return mismatch(n.Path, err.Error())
			}
			stack = append(stack, dirFD{n.CipherPath, cfd})
		case t.IsRegular():
			oh, nh := sha256.New(), sha256.New()
			osize, _ := old.decryptFile(ctx, on, hashInto(oh), addProblem)
			nsize, _ := nv.decryptFile(ctx, n, hashInto(nh), func(p Problem) {
				addProblem(p)
			})
			if err := ctx.Err(); err != nil {
				return err
			}
			if osize != nsize || string(oh.Sum(nil)) != string(nh.Sum(nil)) {
				return mismatch(n.Path, "content differs")
			}
			done += nsize
			if progress != nil {
				progress(ConvertProgress{Phase: PhaseCheck, Done: done, Total: max(total, done)})
			}
		case t == fs.ModeSymlink:
			ot, oerr := old.readSymlink(on)
			nt, nerr := nv.readSymlink(n)
			if nerr != nil {
				addProblem(newProblem(n.Path, n.CipherPath, KindSymlink, errDetail(nerr)))
			} else if oerr != nil || ot != nt {
				return mismatch(n.Path, "symlink target differs")
			}
		}
		ox, nx := old.readXattrs(on, addProblem), nv.readXattrs(n, addProblem)
		if len(ox) != len(nx) {
			return mismatch(n.Path, "extended attributes differ")
		}
		for k, v := range ox {
			if w, ok := nx[k]; !ok || string(w) != string(v) {
				return mismatch(n.Path, fmt.Sprintf("extended attribute %q differs", k))
			}
		}
		if len(problems) > 0 {
			return fmt.Errorf("%s: %w: the converted vault fails its check: %s; nothing was changed", old.Dir, ErrCorrupt, problems[0])
		}
		return nil
	}, addProblem)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: %w: the converted vault fails its check: %s; nothing was changed", old.Dir, ErrCorrupt, problems[0])
	}
	if i != len(oldPaths) {
		return mismatch(oldPaths[i], "missing in the converted vault")
	}
	return nil
}

// listVault returns the plaintext paths of the vault's entries in walk order, or an error
// wrapping ErrCorrupt for the first damaged name or directory IV: a vault is converted only
// when every entry can be carried over and checked.
func listVault(ctx context.Context, v *Vault) ([]string, error) {
	var paths []string
	var damage []Problem
	err := v.Walk(ctx, func(n Node) error {
		paths = append(paths, n.Path)
		return nil
	}, func(p Problem) {
		if p.Damage() {
			damage = append(damage, p)
		}
	})
	if err != nil {
		return nil, err
	}
	if len(damage) > 0 {
		return nil, fmt.Errorf("%s: %w: %s; nothing was changed (run vaultui fsck)", v.Dir, ErrCorrupt, damage[0])
	}
	return paths, nil
}

func hashInto(h hash.Hash) func(int64, []byte) error {
	return func(_ int64, b []byte) error {
		h.Write(b)
		return nil
	}
}
