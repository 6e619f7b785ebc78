package vault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/atomicfile"
	"github.com/vaultui/vaultui/vault/cryptomator"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// Format is one on-disk format vaultui opens: a row of the one table of formats. Front ends
// list and name formats from it, and ask its Capabilities instead of which format a vault is.
type Format struct {
	// ID is how --format, the registry and JSON output name it: "gocryptfs", "cryptomator";
	// "gocryptfs-reverse" for a plaintext folder prepared for a reverse view.
	ID string
	// Name is how a user reads it: "gocryptfs", "Cryptomator"; Summary says which version
	// of it a new vault is, in a few words: "vault format 8 (SIV_GCM)".
	Name, Summary string
	// Marker is the file that makes a folder a vault of this format; KeyFile holds its
	// master key sealed under the password (what passwd rewrites).
	Marker, KeyFile string
	// KeyNote says how the master key Create returns is written out ("" for 32 bytes in the
	// gocryptfs way, FormatMasterKey).
	KeyNote string
	// ScryptLogN is the range and default of the scrypt cost (N = 2^LogN) of new vaults.
	ScryptLogN Range
	// LongNameMax is the range and default of the longest encrypted name stored as it is; a
	// zero Range: the format fixes it.
	LongNameMax Range
	// Ciphers are the content ciphers a new vault can have (the first is the default); nil:
	// the format fixes its cipher.
	Ciphers []crypto.CipherID
	Can     Capabilities
	// opens is who opens a vault of this format with content cipher c.
	opens func(c crypto.CipherID) Compat
	// kind is the format's code behind Folder.
	kind folderKind
}

// Range is an integer option's bounds and default.
type Range struct{ Min, Default, Max int }

// Contains reports whether n is within the range.
func (r Range) Contains(n int) bool { return n >= r.Min && n <= r.Max }

// Capabilities say what a format can hold and what vaultui can do with it. Code outside the
// format packages tests these, never which format a vault is.
type Capabilities struct {
	// Name options at creation: plaintext names, deterministic names (no per-directory IV).
	PlaintextNames, DeterministicNames bool
	// Holes: sparse files stay sparse (a hole is stored as a hole, not as encrypted zeros).
	Holes bool
	// HardLinks, SpecialFiles (FIFOs, sockets, devices) and Xattrs can be stored.
	HardLinks, SpecialFiles, Xattrs bool
	// Modes: permission bits (and, written as root, owners) are kept; without it every entry
	// shows the format's own.
	Modes bool
	// NFCNames: names are stored in Unicode normalization form C, so a name in another form
	// would come back changed.
	NFCNames bool
	// Mount: the folder mounts as a read-write plaintext view, also with --sharedstorage (other
	// machines write the cipherdir), and fsck, export, conflicts and path mapping read it
	// offline; ReverseView: it is a plaintext folder that mounts as a read-only encrypted view
	// (gocryptfs -reverse).
	Mount, ReverseView bool
	// Reseal: a vault changes to another of the format's content ciphers file by file,
	// keeping its names, master key and password (Folder.PlanReseal, Folder.Reseal); without
	// it a conversion rebuilds the vault through its plaintext.
	Reseal bool
}

// Compat says which programs open a vault of a format with a given content cipher: what a
// user trades for speed. A vault that only vaultui opens cannot be mounted on Windows or
// Android, nor with gocryptfs on another Linux machine.
type Compat struct {
	// Subject names the vault in a sentence: "A vault with AES-256-GCM", "A Cryptomator vault".
	Subject string
	// Programs open the vault, vaultui first, e.g. "cppcryptfs (Windows)".
	Programs []string
	// Short is Programs for a table column: "vaultui only", "vaultui, gocryptfs >= 2.2".
	Short string
	// Others says who cannot open it and what they say; "" when the usual tools can.
	Others string
}

var (
	gocryptfsFormat = &Format{
		ID: "gocryptfs", Name: "gocryptfs", Summary: "gocryptfs v2", Marker: crypto.ConfName, KeyFile: crypto.ConfName,
		ScryptLogN:  Range{crypto.MinScryptLogN, crypto.DefaultScryptLogN, crypto.MaxScryptLogN},
		LongNameMax: Range{crypto.MinLongNameMax, crypto.DefaultLongNameMax, crypto.DefaultLongNameMax},
		Ciphers:     []crypto.CipherID{crypto.AESGCM, crypto.AEGIS, crypto.XChaCha, crypto.AESSIV},
		Can: Capabilities{PlaintextNames: true, DeterministicNames: true, Holes: true, HardLinks: true,
			SpecialFiles: true, Xattrs: true, Modes: true, Mount: true, Reseal: true},
		opens: gocryptfsOpensIn,
		kind:  gocryptfsKind{},
	}
	cryptomatorFormat = &Format{
		ID: "cryptomator", Name: "Cryptomator", Summary: "vault format 8 (SIV_GCM)", Marker: cryptomator.ConfigFileName, KeyFile: cryptomator.MasterkeyFileName,
		KeyNote:    "the raw 64-byte key in hex; not Cryptomator's recovery key words",
		ScryptLogN: Range{crypto.MinScryptLogN, cryptomator.DefaultScryptLogN, crypto.MaxScryptLogN},
		Can:        Capabilities{NFCNames: true, Mount: true},
		opens: func(crypto.CipherID) Compat {
			return Compat{Subject: "A Cryptomator vault", Programs: []string{"vaultui", "Cryptomator (desktop, iOS, Android)"}, Short: "vaultui, Cryptomator"}
		},
		kind: cryptomatorKind{},
	}
	reverseFormat = &Format{
		ID: "gocryptfs-reverse", Name: "gocryptfs reverse view", Summary: "gocryptfs v2, AES-SIV", Marker: gocryptfs.ReverseConfName, KeyFile: gocryptfs.ReverseConfName,
		ScryptLogN: gocryptfsFormat.ScryptLogN, LongNameMax: gocryptfsFormat.LongNameMax,
		Ciphers: []crypto.CipherID{crypto.AESSIV},
		Can:     Capabilities{PlaintextNames: true, DeterministicNames: true, Modes: true, ReverseView: true},
		opens: func(crypto.CipherID) Compat {
			return Compat{Subject: "A reverse view", Programs: []string{"vaultui", "gocryptfs -reverse"}, Short: "vaultui, gocryptfs -reverse",
				Others: "a copy of the view is an AES-SIV gocryptfs vault, which gocryptfs mounts forward"}
		},
		kind: reverseKind{},
	}
	// formats is the table, in the order front ends list it.
	formats = []*Format{gocryptfsFormat, cryptomatorFormat, reverseFormat}
)

// Formats returns the table of formats vaultui opens, in the order front ends list them.
func Formats() []*Format { return formats }

// DefaultFormat is the format of a new vault unless the user picks another.
func DefaultFormat() *Format { return gocryptfsFormat }

// FormatByID returns the format of that ID (case-insensitive); "" is DefaultFormat. An
// unknown ID is an error that lists the known ones.
func FormatByID(id string) (*Format, error) {
	if id == "" {
		return DefaultFormat(), nil
	}
	var ids []string
	for _, f := range formats {
		if strings.EqualFold(f.ID, id) {
			return f, nil
		}
		ids = append(ids, f.ID)
	}
	return nil, fmt.Errorf("%w: unknown format %q (known: %s)", ErrCreateOptions, id, strings.Join(ids, ", "))
}

// OpensIn returns who opens a vault of this format with content cipher c (ignored by a
// format that fixes its cipher).
func (f *Format) OpensIn(c crypto.CipherID) Compat { return f.opens(c) }

// CipherLabel names a vault's cipher in a list: the content cipher where the format lets
// the user choose one, else the format's name.
func (f *Format) CipherLabel(c crypto.CipherID) string {
	if f.Ciphers == nil || len(f.Ciphers) == 1 && c == "" {
		return f.Name
	}
	return c.String()
}

// Identify tells what the folder dir holds, once, for every entry point: the format whose
// marker it holds. A folder vaultui knows but cannot open (a Cryptomator vault of format 7
// or 9, a Hub vault, a FIDO2 gocryptfs vault) gives an error wrapping ErrUnsupported that
// names what it is and what opens it; damage that hides the format (a Cryptomator vault
// without its vault.cryptomator) wraps ErrCorrupt; a folder with no vault at all wraps
// ErrNotFound. The marker's content is checked when the folder is opened for a job.
func Identify(dir string) (*Format, error) {
	if exists(dir, crypto.ConfName) {
		return gocryptfsFormat, nil
	}
	if found, err := cryptomator.Identify(dir); found {
		if err != nil {
			return nil, cryptomatorError(dir, err)
		}
		return cryptomatorFormat, nil
	}
	if exists(dir, gocryptfs.ReverseConfName) {
		return reverseFormat, nil
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("%s is not a vault: %w: %w", dir, ErrNotFound, err)
	}
	return nil, fmt.Errorf("%s is not a vault (no %s, %s or %s): %w", dir, crypto.ConfName, cryptomator.ConfigFileName, gocryptfs.ReverseConfName, ErrNotFound)
}

// Folder is a vault's folder of a known format, not unlocked: what can be done with it
// without its keys, and the ways to unlock it.
type Folder struct {
	Dir    string
	Format *Format
}

// Open identifies dir (see Identify) for the jobs of a Folder.
func Open(dir string) (*Folder, error) {
	f, err := Identify(dir)
	if err != nil {
		return nil, err
	}
	return &Folder{Dir: dir, Format: f}, nil
}

// Info describes the vault from its files, without its password (like gocryptfs -info).
func (f *Folder) Info() (Info, error) {
	i, err := f.Format.kind.info(f.Dir)
	i.FormatID = f.Format.ID
	return i, err
}

// Unlock opens the vault with its password for the offline jobs (fsck, export, conflicts,
// path mapping) and the mount. A wrong password gives an error wrapping ErrWrongPassword.
// The key derivation stops when ctx ends and costs no more than ctx allows
// (crypto.WithCostBound).
func (f *Folder) Unlock(ctx context.Context, password []byte) (Volume, error) {
	return f.Format.kind.unlock(ctx, f.Dir, password)
}

// UnlockWithKey opens the vault with its master key, for a lost password: gocryptfs's 32
// bytes, tried on the vault's files first (see UnlockWithMasterKey; unverified skips that
// once the user accepted it), or a Cryptomator vault's raw 64 bytes, which its signed
// configuration always checks.
func (f *Folder) UnlockWithKey(key []byte, unverified bool) (Volume, error) {
	return f.Format.kind.unlockWithKey(f.Dir, key, unverified)
}

func (f *Folder) changePassword(ctx context.Context, fsys atomicfile.FS, pc PasswordChange) (string, error) {
	if len(pc.NewPassword) == 0 {
		return "", errors.New("the new password is empty")
	}
	if pc.Unverified && pc.MasterKey == nil {
		return "", errors.New("no master key")
	}
	if pc.ScryptLogN != 0 && !f.Format.ScryptLogN.Contains(pc.ScryptLogN) {
		return "", fmt.Errorf("%w: scrypt cost %d is outside %d..%d", ErrCreateOptions, pc.ScryptLogN, f.Format.ScryptLogN.Min, f.Format.ScryptLogN.Max)
	}
	return f.Format.kind.changePassword(ctx, fsys, f.Dir, f.Format, pc)
}

// Variant says from the vault's files alone, without its key, which content encryption it
// has: what a conversion within the format changes (a content cipher's ID, "aes-gcm"; a
// Cryptomator cipher combo, "SIV_GCM").
func (f *Folder) Variant() (string, error) { return f.Format.kind.variant(f.Dir) }

// TargetVariant is the variant (see Folder.Variant) a conversion into the format with
// content cipher to makes; "" picks the format's default for new vaults. A cipher the
// format cannot have is an error.
func (f *Format) TargetVariant(to crypto.CipherID) (string, error) { return f.kind.targetVariant(to) }

// CreateFor makes the empty vault in dir (a new folder) that a conversion fills through its
// Volume's Builder: of the variant, sealed under password at scrypt cost 2^logN, with a new
// master key, returned; or, with keep (an unlocked vault of this format), under keep's
// master key and key file, so that the old password and master key open it (nil is returned
// then).
func (f *Format) CreateFor(ctx context.Context, dir, variant string, password []byte, logN int, keep Volume) (masterKey []byte, err error) {
	return f.kind.createFor(ctx, dir, variant, password, logN, keep)
}

// Sizes is what a conversion takes: PlainBytes of content in Files files to re-encrypt, and
// NeedBytes of space for the new vault.
type Sizes struct {
	PlainBytes int64
	Files      int
	NeedBytes  uint64
}

// Resealed is the vault Folder.Reseal made, unlocked (Close it), with what it did.
type Resealed struct {
	Volume
	gocryptfs.Resealed
}

// PlanReseal checks, without the password, that the vault can be resealed to the variant to
// (Capabilities.Reseal) and measures what that takes in file system blocks of blockSize.
func (f *Folder) PlanReseal(to string, blockSize uint64) (Sizes, error) {
	r, ok := f.Format.kind.(resealer)
	if !ok {
		return Sizes{}, fmt.Errorf("%s: %w: a %s vault is not resealed", f.Dir, ErrUnsupported, f.Format.Name)
	}
	return r.planReseal(f.Dir, to, blockSize)
}

// Reseal writes the vault, unlocked with password, into newDir (a path that does not exist
// yet) under the variant to: the same names, master key and password, every file, symlink
// target and attribute sealed again. Content that does not authenticate under a name of the
// vault stops it (ErrCorrupt). progress, if not nil, gets the content bytes done. It
// returns the new vault, unlocked; the old one is only read.
func (f *Folder) Reseal(ctx context.Context, password []byte, newDir, to string, progress func(done int64)) (*Resealed, error) {
	r, ok := f.Format.kind.(resealer)
	if !ok {
		return nil, fmt.Errorf("%s: %w: a %s vault is not resealed", f.Dir, ErrUnsupported, f.Format.Name)
	}
	return r.reseal(ctx, f.Dir, password, newDir, to, progress)
}

// DecryptFile decrypts the regular file n of vol block by block, calling data (if not nil)
// with each run of plaintext at its offset; blocks that do not authenticate are reported to
// problem and given to data as zeros. It returns the plaintext size, and an error when the
// file was not readable at all (also reported), ctx is done or data fails.
func DecryptFile(ctx context.Context, vol format.Volume, n Node, data func(off int64, b []byte) error, problem func(Problem)) (int64, error) {
	return decryptVolumeFile(ctx, vol, n, data, problem, nil)
}

// folderKind is a format's code behind Folder.
type folderKind interface {
	// create makes a new vault in dir with checked options (Create).
	create(ctx context.Context, fsys atomicfile.FS, dir string, password []byte, opts CreateOptions) (masterKey []byte, err error)
	info(dir string) (Info, error)
	// describe says what the vault's Info means in the format's terms (Info.Facts).
	describe(i Info) []Fact
	unlock(ctx context.Context, dir string, password []byte) (Volume, error)
	unlockWithKey(dir string, key []byte, unverified bool) (Volume, error)
	changePassword(ctx context.Context, fsys atomicfile.FS, dir string, f *Format, pc PasswordChange) (string, error)
	// variant, targetVariant and createFor are Folder.Variant, Format.TargetVariant and
	// Format.CreateFor: what a conversion asks of the format.
	variant(dir string) (string, error)
	targetVariant(to crypto.CipherID) (string, error)
	createFor(ctx context.Context, dir, variant string, password []byte, logN int, keep Volume) (masterKey []byte, err error)
}

// Volume is an unlocked vault of any format: what the walker reads (Fsck, Export, the
// conflicts listing), path mapping, and the keys a mount serves.
type Volume interface {
	format.Volume
	// FormatName names the format as every front end shows it ("Cryptomator vault format 8,
	// SIV_GCM"; for gocryptfs, "gocryptfs v2, AES-256-GCM").
	FormatName() string
	// Paths maps paths between the plaintext view and the vault's folder.
	Paths() format.PathMapper
	// Conflicts lists the sync tools' conflict copies, in plaintext path order.
	Conflicts(ctx context.Context) ([]ConflictEntry, error)
	// Settle settles the conflict listed at plaintext path p in the vault's folder (the vault
	// is not mounted). Nothing is deleted but what keep says; a copy that does not
	// authenticate is refused (ErrCorrupt) unless it is deleted.
	Settle(ctx context.Context, p string, keep Keep) (Settled, error)
	// PlanSettle makes the checks Settle makes, changing nothing, for a mounted vault: it
	// says what to rename or remove through the mount, or that Settle does it in the folder.
	PlanSettle(ctx context.Context, p string, keep Keep) (SettlePlan, error)
	// Format is the vault's row in the table of formats.
	Format() *Format
	// ContentCipher is the content cipher where the format lets the user choose one ("" where
	// it does not).
	ContentCipher() crypto.CipherID
	// Builder writes into the vault (an empty one that a conversion fills).
	Builder() format.Builder
	// Keys is the format's own unlocked vault (*gocryptfs.Vault, *cryptomator.Vault), for the mount's
	// per-format code alone (vfs.VolumeOf).
	Keys() any
	// Close wipes the keys.
	Close()
}

// SettlePlan is how a conflict of a mounted vault is settled. With Mount set, the daemon
// renames or removes Entry through the mount (so the kernel's view stays right) and, for a
// folder made twice, moves each of Made into the folder, then calls Settle for what the mount
// never shows; else Settle does all of it in the vault's folder.
type SettlePlan struct {
	Mount bool
	Entry ConflictEntry
	Made  []ConflictEntry
}

// UnlockVolume opens the vault in cipherdir, of any format, with its password.
func UnlockVolume(ctx context.Context, cipherdir string, password []byte) (Volume, error) {
	f, err := Open(cipherdir)
	if err != nil {
		return nil, err
	}
	return f.Unlock(ctx, password)
}

// cryptomatorError makes an error of package cryptomator also wrap this package's sentinel
// for it, so that callers (the CLI's exit codes, the keyring's retry) treat both formats alike.
func cryptomatorError(cipherdir string, err error) error {
	switch {
	case errors.Is(err, cryptomator.ErrWrongPassword):
		return fmt.Errorf("%s: %w", cipherdir, ErrWrongPassword)
	case errors.Is(err, cryptomator.ErrUnsupported), errors.Is(err, crypto.ErrKDFMemory), errors.Is(err, crypto.ErrKDFCostly):
		return alsoUnsupported{err}
	}
	return err // ErrCorrupt is layout's, which is this package's
}

// alsoUnsupported is err that also wraps ErrUnsupported, with err's message.
type alsoUnsupported struct{ err error }

func (a alsoUnsupported) Error() string   { return a.err.Error() }
func (a alsoUnsupported) Unwrap() []error { return []error{a.err, ErrUnsupported} }

// exists reports whether dir holds an entry name (of any type: a damaged config still marks
// the folder's format).
func exists(dir, name string) bool {
	_, err := os.Lstat(filepath.Join(dir, name))
	return err == nil
}

// MappedPath is one path mapped by MapPaths: the result, or why it could not be mapped.
type MappedPath struct {
	Path  string `json:"path,omitempty"`
	Error string `json:"error,omitempty"`
}

// MapPaths maps each of paths with pm, cipher paths to plaintext paths or the other way with
// encrypt: one result per path, in order.
func MapPaths(pm format.PathMapper, encrypt bool, paths []string) []MappedPath {
	out := make([]MappedPath, 0, len(paths))
	for _, p := range paths {
		var r MappedPath
		var err error
		if encrypt {
			r.Path, err = pm.EncryptPath(p)
		} else {
			r.Path, err = pm.DecryptPath(p)
		}
		if err != nil {
			r.Error = err.Error()
		}
		out = append(out, r)
	}
	return out
}
