// Package registry is vaultui's list of known vaults, vaults.json, and the create flow that
// makes a vault, its mount point and its entry together (CreateRegistered).
//
// The list lives outside every cipherdir (gocryptfs must never see a file it does not know),
// in $XDG_CONFIG_HOME/vaultui/vaults.json. It is the only place a vault's name, mount point and
// mount options are stored, so it is written atomically (internal/atomicfile) under a lock
// (Update), and a file that does not parse is reported, never replaced: losing it silently
// would make a user's vaults vanish from the list.
//
// The file is read like every file vaultui takes from the user's directories (userfile.Open):
// a symbolic link is followed (a dotfiles manager may keep it elsewhere) and a save replaces
// the link's target, never the link; a FIFO, a device or another user's file is refused, and
// so is a directory other users may write in; at most MaxSize bytes are read.
//
// Errors wrap ErrCorrupt, ErrChanged, ErrDuplicate, ErrInvalidName or, for a name or
// directory that is no vault, vault.ErrNotFound. It imports vault (to create vaults) and
// crypto; app, ui, cli and mountmgr import it.
package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/vaultui/vaultui/internal/atomicfile"
	"github.com/vaultui/vaultui/internal/userfile"
	"github.com/vaultui/vaultui/vault"
)

// FileName is the registry's file name inside its directory.
const FileName = "vaults.json"

// MaxSize bounds the registry file: about 60,000 vaults of ordinary paths. A larger
// file is refused rather than read into memory (a link to a huge or endless file).
const MaxSize = 16 << 20

// registryVersion is written into the file so that a future format change
// can be detected instead of misread.
const registryVersion = 1

// maxVaultNameLen bounds vault names: they appear in lists, prompts and paths.
const maxVaultNameLen = 64

// ErrCorrupt is returned (wrapped, naming the path) when vaults.json
// exists but cannot be understood.
var ErrCorrupt = errors.New("registry file is corrupt")

// ErrChanged is returned by Registry.Save when another process
// changed the file after this Registry was loaded; load it again and retry.
var ErrChanged = errors.New("registry file was changed by another program since it was read; try again")

// ErrDuplicate is returned by Registry.Add when the name or the cipherdir is
// already registered.
var ErrDuplicate = errors.New("already registered")

// ErrInvalidName is returned for a vault name that cannot be used.
var ErrInvalidName = errors.New("invalid vault name")

// Lock policies: when the daemon unmounts a vault on its own to protect it.
const (
	LockNever  = "never"
	LockSleep  = "sleep"            // before the machine suspends or hibernates
	LockScreen = "sleep+screenlock" // and when the screen locks
)

// LockPolicies lists the lock policies in order of strictness.
var LockPolicies = []string{LockNever, LockSleep, LockScreen}

// Entry is one known vault. Its tags are the keys on disk (see entryJSON).
type Entry struct {
	Name       string `json:"name"`
	CipherDir  string `json:"cipherdir"`            // absolute, cleaned
	MountPoint string `json:"mountpoint,omitempty"` // absolute, cleaned; may be empty
	ReadOnly   bool   `json:"readonly,omitempty"`
	// Idle unmounts the vault after this long without file activity; 0 = never.
	Idle time.Duration `json:"-"`
	// MountAtStart (the automount option) mounts the vault when the daemon starts at login,
	// with the password stored in the keyring.
	MountAtStart bool `json:"mount_at_start,omitempty"`
	// Lock is the lock policy as stored: "" in entries written before lock policies
	// existed, which means LockNever (see LockPolicy). Registry.Add gives new vaults
	// LockSleep.
	Lock string `json:"lock,omitempty"`
	// Reverse: CipherDir is a plaintext folder with a .gocryptfs.reverse.conf, mounted as its
	// read-only encrypted view (gocryptfs -reverse), for backups.
	Reverse bool `json:"reverse,omitempty"`
	// Exclude are the reverse view's exclusion rules, gitignore lines applied in order.
	Exclude []string `json:"exclude,omitempty"`
	// ExtPass is the vault's password program (gocryptfs's -extpass) as an argument vector,
	// run without a shell: mounts without a given password, the daemon's automount and its
	// remounts after sleep take the password from it (see package app and mountmgr/extpass).
	// A registry that names one must be writable by its owner only (Load).
	ExtPass []string `json:"extpass,omitempty"`
	// SharedStorage mounts the vault for a cipherdir that other machines use at the same time
	// over network storage (gocryptfs's -sharedstorage; see mountmgr/vfs).
	SharedStorage bool `json:"sharedstorage,omitempty"`
	// KDFCost is the key derivation cost (bytes of scrypt's table, 128·N·r) the user accepted
	// for this vault when it was created or added, when that is above the bound every other
	// vault is held to (crypto.DefaultCostBound); 0 when none was. Unlocking the vault allows
	// up to this cost and no more: a config edited afterwards to cost more is still refused.
	KDFCost uint64 `json:"kdf_cost,omitempty"`

	// extra holds the fields of the entry this version does not know (written by a newer
	// vaultui), written back unchanged so they survive this version's saves.
	extra map[string]json.RawMessage
}

// LockPolicy is the entry's effective lock policy: LockNever for an entry from before lock
// policies, the strictest (LockScreen) for a value this version does not know.
func (e Entry) LockPolicy() string {
	switch e.Lock {
	case "":
		return LockNever
	case LockNever, LockSleep, LockScreen:
		return e.Lock
	}
	return LockScreen
}

// entryJSON is Entry on disk: Idle as a Go duration string ("15m0s"), which a person
// editing the file can read. entryFields is Entry without its methods, so the encoding
// of the embedded fields does not call them again.
type entryJSON struct {
	entryFields
	Idle string `json:"idle,omitempty"`
}

type entryFields Entry

// entryKeys are entryJSON's keys: everything else in an entry is kept in Entry.extra.
var entryKeys = map[string]bool{"name": true, "cipherdir": true, "mountpoint": true, "readonly": true,
	"idle": true, "mount_at_start": true, "lock": true, "reverse": true, "exclude": true, "extpass": true,
	"sharedstorage": true, "kdf_cost": true}

// MarshalJSON writes Idle as a duration string, and the fields this version does not know
// as they were read.
func (e Entry) MarshalJSON() ([]byte, error) {
	j := entryJSON{entryFields: entryFields(e)}
	if e.Idle != 0 {
		j.Idle = e.Idle.String()
	}
	known, err := json.Marshal(j)
	if err != nil || len(e.extra) == 0 {
		return known, err
	}
	return mergeExtra(known, e.extra)
}

// mergeExtra adds the fields of extra (unknown to this version) to the JSON object known.
func mergeExtra(known []byte, extra map[string]json.RawMessage) ([]byte, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(known, &all); err != nil {
		return nil, err
	}
	for k, v := range extra {
		if _, ok := all[k]; !ok {
			all[k] = v
		}
	}
	return json.Marshal(all)
}

// unknownFields are the fields of the JSON object b whose keys known does not hold; nil
// when there are none.
func unknownFields(b []byte, known func(key string) bool) (map[string]json.RawMessage, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	maps.DeleteFunc(all, func(k string, _ json.RawMessage) bool { return known(k) })
	if len(all) == 0 {
		return nil, nil
	}
	return all, nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *Entry) UnmarshalJSON(b []byte) error {
	var j entryJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	var err error
	if j.Idle != "" {
		if j.entryFields.Idle, err = time.ParseDuration(j.Idle); err != nil {
			return fmt.Errorf("vault %q: idle: %w", j.Name, err)
		}
	}
	if j.extra, err = unknownFields(b, func(k string) bool { return entryKeys[k] }); err != nil {
		return err
	}
	*e = Entry(j.entryFields)
	return nil
}

// Registry is the list of known vaults and the file it was read from.
// It is not safe for concurrent use; a process loads it, changes it and saves it.
type Registry struct {
	Path   string
	Vaults []Entry

	// loaded is the file's content when it was read (nil: no file), so
	// Save can refuse to overwrite a change another process made since.
	loaded []byte
	// files is the file system Save writes through; nil is the real one (tests fail it).
	files atomicfile.FS
	// extra holds top-level fields this version does not know, written back unchanged.
	extra map[string]json.RawMessage
}

type registryFileJSON struct {
	Version int     `json:"version"`
	Vaults  []Entry `json:"vaults"`
}

// DefaultPath returns $XDG_CONFIG_HOME/vaultui/vaults.json, with
// XDG_CONFIG_HOME defaulting to ~/.config as the XDG spec says.
func DefaultPath() (string, error) {
	dir, err := userfile.BaseDir("XDG_CONFIG_HOME", ".config")
	if err != nil {
		return "", fmt.Errorf("finding the registry: %w", err)
	}
	return filepath.Join(dir, "vaultui", FileName), nil
}

// Load reads the registry at path. A missing file is an empty
// registry; a file that does not parse or holds invalid entries is an error
// wrapping ErrCorrupt that names the path.
func Load(path string) (*Registry, error) {
	r := &Registry{Path: path}
	if err := checkRegistryDirs(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return r, nil
		}
		return nil, fmt.Errorf("reading registry: %w", err)
	}
	data, err := userfile.Read(path, MaxSize)
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading registry: %w", err)
	}
	vaults, extra, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v (fix or move the file away; vaultui will not overwrite it)", ErrCorrupt, path, err)
	}
	if err := checkExtPassTrust(path, vaults); err != nil {
		return nil, fmt.Errorf("reading registry: %w", err)
	}
	r.Vaults, r.extra = vaults, extra
	r.loaded = data
	return r, nil
}

// parse reads the content of a registry file: one JSON object of this version, with valid
// entries, no two of one name or cipherdir. Fields this version does not know, at the top
// (extra) or in an entry, are kept to be written back: a newer vaultui may add options, and
// saving here must not lose them. The error does not name the file.
func parse(data []byte) (vaults []Entry, extra map[string]json.RawMessage, err error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, errors.New("file is empty")
	}
	var f registryFileJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, nil, err
	}
	if dec.More() {
		return nil, nil, errors.New("trailing data after the JSON object")
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, nil, err
	}
	if extra, err = unknownFields(raw, func(k string) bool { return k == "version" || k == "vaults" }); err != nil {
		return nil, nil, err
	}
	if f.Version != registryVersion {
		return nil, nil, fmt.Errorf("unsupported version %d (this vaultui reads version %d)", f.Version, registryVersion)
	}
	seen := newVaultIndex(len(f.Vaults))
	for i, e := range f.Vaults {
		if err := validateRegistryEntry(e); err != nil {
			return nil, nil, fmt.Errorf("entry %d: %v", i+1, err)
		}
		if err := seen.add(e); err != nil {
			return nil, nil, fmt.Errorf("entry %d: %v", i+1, err)
		}
	}
	return f.Vaults, extra, nil
}

// encode is the content of a registry file holding vaults and the top-level fields extra.
func encode(vaults []Entry, extra map[string]json.RawMessage) ([]byte, error) {
	if vaults == nil {
		vaults = []Entry{}
	}
	data, err := json.Marshal(registryFileJSON{Version: registryVersion, Vaults: vaults})
	if err == nil && len(extra) > 0 {
		data, err = mergeExtra(data, extra)
	}
	var indented bytes.Buffer
	if err == nil {
		err = json.Indent(&indented, data, "", "  ")
	}
	if err != nil {
		return nil, err
	}
	return append(indented.Bytes(), '\n'), nil
}

// Save writes the registry atomically: a temp file in the same directory,
// fsync, rename over the old file, fsync the directory. A crash leaves
// either the old or the new file. When the registry is a symbolic link, all of
// that happens beside the link's target, which is replaced: the link stays. The directory is created 0700 and the
// file is 0600: it reveals where a user keeps encrypted data.
// It holds the registry's lock (see Update) while it compares and
// renames.
func (r *Registry) Save() error {
	if r.Path == "" {
		return errors.New("saving registry: no path")
	}
	unlock, err := lockRegistry(r.Path)
	if err != nil {
		return err
	}
	defer unlock()
	return r.save()
}

// save is Save for a caller that holds the registry's lock.
func (r *Registry) save() error {
	data, err := encode(r.Vaults, r.extra)
	if err != nil {
		return fmt.Errorf("saving registry %s: %w", r.Path, err)
	}
	target, err := registryTarget(r.Path)
	if err != nil {
		return fmt.Errorf("saving registry: %w", err)
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("saving registry: %w", err)
	}
	if err := checkRegistryDirs(r.Path); err != nil {
		return fmt.Errorf("saving registry: %w", err)
	}
	// Never replace a file we could not have read: if the current file is
	// corrupt, refuse rather than lose what the user may still recover. And
	// never undo another process's change (the terminal app and a command
	// may both edit the list): the file must still be what was loaded.
	current, err := Load(r.Path)
	if err != nil {
		return fmt.Errorf("saving registry: %w", err)
	}
	if !bytes.Equal(current.loaded, r.loaded) {
		return fmt.Errorf("saving registry %s: %w", r.Path, ErrChanged)
	}
	files := r.files
	if files == nil {
		files = atomicfile.OS{}
	}
	// The lock held keeps other processes from writing the same temporary file.
	tmp := filepath.Join(dir, "."+filepath.Base(target)+".tmp")
	if err := atomicfile.Replace(files, target, tmp, data, 0o600); err != nil {
		return fmt.Errorf("saving registry %s: %w", r.Path, err)
	}
	r.loaded = data
	if err := files.SyncDir(dir); err != nil {
		return fmt.Errorf("saving registry %s: %w", r.Path, err)
	}
	return nil
}

// DefaultMountPoint is where a vault called name is mounted unless the user
// chooses otherwise: ~/Vaults/NAME. Both the command line and the terminal
// app use it, so a vault created in one mounts at the same place in the other.
func DefaultMountPoint(name string) (string, error) {
	if err := ValidateName(name); err != nil {
		return "", err
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("default mount point for %q: %w", name, err)
	}
	return filepath.Join(home, "Vaults", name), nil
}

// Add registers e. The cipherdir and mount point are made absolute; a name
// or cipherdir that is already registered is refused with ErrDuplicate.
func (r *Registry) Add(e Entry) error {
	var err error
	if e.CipherDir, err = registryAbs(e.CipherDir); err != nil {
		return err
	}
	if e.Lock == "" {
		e.Lock = LockSleep // new vaults lock on sleep; older entries keep "" (never)
	}
	if e, err = checked(e, r.Vaults); err != nil {
		return err
	}
	r.Vaults = append(r.Vaults, e)
	return nil
}

// ValidateLockPolicy accepts the lock policies this version knows.
func ValidateLockPolicy(p string) error {
	if slices.Contains(LockPolicies, p) {
		return nil
	}
	return fmt.Errorf("lock policy %q: want one of %s", p, strings.Join(LockPolicies, ", "))
}

// Update replaces the entry called name with what change makes of it, checked like Add.
// Fields this version does not know stay as they were.
func (r *Registry) Update(name string, change func(e *Entry) error) (Entry, error) {
	for i, e := range r.Vaults {
		if e.Name != name {
			continue
		}
		if err := change(&e); err != nil {
			return Entry{}, err
		}
		v, err := checked(e, slices.Delete(slices.Clone(r.Vaults), i, i+1))
		if err != nil {
			return Entry{}, err
		}
		r.Vaults[i] = v
		return v, nil
	}
	return Entry{}, fmt.Errorf("vault %q is not in the registry: %w", name, vault.ErrNotFound)
}

// checked is e as Add and Update store it, its mount point made absolute, or why it cannot
// be: an invalid entry or lock policy, or a name or cipherdir that others hold.
func checked(e Entry, others []Entry) (Entry, error) {
	var err error
	if e.MountPoint != "" {
		if e.MountPoint, err = registryAbs(e.MountPoint); err != nil {
			return Entry{}, err
		}
	}
	if err := validateRegistryEntry(e); err != nil {
		return Entry{}, err
	}
	if e.Lock != "" {
		if err := ValidateLockPolicy(e.Lock); err != nil {
			return Entry{}, err
		}
	}
	x := newVaultIndex(len(others) + 1)
	for _, o := range others {
		x.add(o)
	}
	return e, x.add(e)
}

// Remove forgets the vault called name and returns its entry. It never touches the vault's
// files.
func (r *Registry) Remove(name string) (Entry, error) {
	for i, e := range r.Vaults {
		if e.Name == name {
			r.Vaults = append(r.Vaults[:i:i], r.Vaults[i+1:]...)
			return e, nil
		}
	}
	return Entry{}, fmt.Errorf("vault %q is not in the registry: %w", name, vault.ErrNotFound)
}

// Lookup returns the entry called name.
func (r *Registry) Lookup(name string) (Entry, bool) {
	if i := slices.IndexFunc(r.Vaults, func(e Entry) bool { return e.Name == name }); i >= 0 {
		return r.Vaults[i], true
	}
	return Entry{}, false
}

// Resolve finds a vault by registry name, or by cipherdir path: a registered
// cipherdir returns its entry, an unregistered folder marked as a vault of any
// format (vault.Identify) returns an entry with only CipherDir set (and
// Reverse, for a folder prepared for reverse mode). Anything else is an error
// wrapping vault.ErrNotFound.
//
// A name wins over a path, except when the argument looks like a path
// (contains a slash or is "." or ".."), so "./work" always means the directory.
func (r *Registry) Resolve(nameOrDir string) (Entry, error) {
	if nameOrDir == "" {
		return Entry{}, fmt.Errorf("empty vault name or directory: %w", vault.ErrNotFound)
	}
	looksLikePath := strings.ContainsRune(nameOrDir, '/') || nameOrDir == "." || nameOrDir == ".."
	if !looksLikePath {
		if e, ok := r.Lookup(nameOrDir); ok {
			return e, nil
		}
	}
	dir, err := registryAbs(nameOrDir)
	if err != nil {
		return Entry{}, err
	}
	for _, e := range r.Vaults {
		if e.CipherDir == dir {
			return e, nil
		}
	}
	// A folder marked as a vault of any format, even one vaultui cannot open or whose marker
	// is damaged: opening it then says what it is and what is wrong (vault.Identify). A
	// plaintext folder prepared for reverse mode is served as its encrypted view.
	f, err := vault.Identify(dir)
	if err == nil {
		return Entry{CipherDir: dir, Reverse: f.Can.ReverseView}, nil
	}
	if !errors.Is(err, vault.ErrNotFound) {
		return Entry{CipherDir: dir}, nil
	}
	if looksLikePath {
		return Entry{}, err
	}
	return Entry{}, fmt.Errorf("%q is neither a registered vault name nor a vault directory: %w", nameOrDir, vault.ErrNotFound)
}

// ValidateName reports whether name can be used as a vault name: 1 to 64
// printable characters, no slash, no leading dash or dot, no surrounding
// spaces. Names show up as command arguments and default mount point
// directory names, so they must be unambiguous and path-safe.
func ValidateName(name string) error {
	bad := func(why string) error { return fmt.Errorf("%w %q: %s", ErrInvalidName, name, why) }
	switch {
	case name == "":
		return fmt.Errorf("%w: empty", ErrInvalidName)
	case !utf8.ValidString(name):
		return bad("not valid UTF-8")
	case utf8.RuneCountInString(name) > maxVaultNameLen:
		return bad(fmt.Sprintf("longer than %d characters", maxVaultNameLen))
	case strings.HasPrefix(name, "-"):
		return bad("starts with '-' (would read as an option)")
	case strings.HasPrefix(name, "."):
		return bad("starts with '.'")
	case strings.TrimSpace(name) != name:
		return bad("starts or ends with a space")
	case strings.ContainsRune(name, '/'):
		return bad("contains '/' (would read as a path)")
	}
	for _, c := range name {
		if !unicode.IsPrint(c) {
			return bad("contains a control or non-printable character")
		}
	}
	return nil
}

func validateRegistryEntry(e Entry) error {
	if err := ValidateName(e.Name); err != nil {
		return err
	}
	if e.CipherDir == "" || !filepath.IsAbs(e.CipherDir) {
		return fmt.Errorf("vault %q: cipherdir %q is not an absolute path", e.Name, e.CipherDir)
	}
	if e.MountPoint != "" && !filepath.IsAbs(e.MountPoint) {
		return fmt.Errorf("vault %q: mount point %q is not an absolute path", e.Name, e.MountPoint)
	}
	if e.MountPoint != "" && filepath.Clean(e.MountPoint) == filepath.Clean(e.CipherDir) {
		return fmt.Errorf("vault %q: mount point and cipherdir are the same directory", e.Name)
	}
	if e.Idle < 0 {
		return fmt.Errorf("vault %q: negative idle timeout", e.Name)
	}
	if len(e.ExtPass) > 0 && e.ExtPass[0] == "" {
		return fmt.Errorf("vault %q: extpass names no program", e.Name)
	}
	return nil
}

// vaultIndex finds registered names and cipherdirs in constant time: loading checks each
// entry against all before it, which a list made quadratic (20,000 vaults took 17 s).
type vaultIndex struct {
	names map[string]bool
	dirs  map[string]string // cleaned cipherdir → name
}

func newVaultIndex(n int) *vaultIndex {
	return &vaultIndex{names: make(map[string]bool, n), dirs: make(map[string]string, n)}
}

// add records e, or refuses it with ErrDuplicate when its name or cipherdir is recorded.
func (x *vaultIndex) add(e Entry) error {
	if x.names[e.Name] {
		return fmt.Errorf("vault name %q: %w", e.Name, ErrDuplicate)
	}
	dir := filepath.Clean(e.CipherDir)
	if other, ok := x.dirs[dir]; ok {
		return fmt.Errorf("cipherdir %s: %w as %q", e.CipherDir, ErrDuplicate, other)
	}
	x.names[e.Name] = true
	x.dirs[dir] = e.Name
	return nil
}

// registryTarget is the file a save replaces: path, or when path is a symbolic link the file
// at the end of its links (which may not exist yet).
func registryTarget(path string) (string, error) {
	p := path
	for range 40 { // the kernel's own limit on links in a path
		fi, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			return p, nil
		}
		link, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			// Relative to the link's directory as the kernel sees it, symbolic links and all.
			d, err := filepath.EvalSymlinks(filepath.Dir(p))
			if err != nil {
				return "", err
			}
			link = filepath.Join(d, link)
		}
		p = link
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", path)
}

// checkRegistryDirs refuses the registry when the directory it is in, or the directory of the
// file its link points to, lets someone else replace it (userfile.CheckDir). A missing directory
// wraps fs.ErrNotExist.
func checkRegistryDirs(path string) error {
	if err := userfile.CheckDir(filepath.Dir(path)); err != nil {
		return err
	}
	target, err := registryTarget(path)
	if err != nil {
		return err
	}
	if target != path {
		return userfile.CheckDir(filepath.Dir(target))
	}
	return nil
}

// checkExtPassTrust refuses a registry that names a password program (Entry.ExtPass), which
// vaultui runs, when other users may write in the file: they could make it run anything as
// this user. Its directories were checked already (checkRegistryDirs); vaultui writes the file
// 0600, so this only catches a file made or changed by hand.
func checkExtPassTrust(path string, vaults []Entry) error {
	if !slices.ContainsFunc(vaults, func(e Entry) bool { return len(e.ExtPass) > 0 }) {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s: %w: it names password programs (extpass) and other users may write in it (mode %04o; chmod go-w %s)",
			path, userfile.ErrUnsafe, fi.Mode().Perm(), path)
	}
	return nil
}

func registryAbs(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	a, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	return a, nil
}
