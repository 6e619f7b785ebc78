// Package keyring keeps vault passwords in the desktop keyring through the freedesktop.org
// Secret Service API on the D-Bus session bus (gnome-keyring, KWallet, KeePassXC).
//
// # Why godbus and not a keyring library
//
// It talks D-Bus through github.com/godbus/dbus/v5 directly. The ready-made wrapper
// (github.com/zalando/go-keyring) opens its sessions with the "plain" algorithm, so the
// password crosses the bus in clear, and its calls have no timeouts, so a session bus that
// never answers hangs the caller. Here every call is bounded, and secrets travel encrypted
// with the dh-ietf1024-sha256-aes128-cbc-pkcs7 algorithm (see dh.go); a service that does not
// offer it is reported, not silently used in clear.
//
// # States, not errors
//
// No session bus (ssh, containers, CI) or no Secret Service on it is ErrUnavailable, which
// callers show as a note and then ask for the password: it is a normal state of a headless
// machine. One that is there but does not answer in time is ErrUnavailable and ErrNoAnswer.
// Reason says why in a few words, for a one-line note. A locked keyring is unlocked through
// the service's own prompt, waited for at most Options.PromptTimeout.
//
// It imports internal/dbusdial; app, cli, ui and mountmgr (automount) import it.
package keyring

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/vaultui/vaultui/internal/dbusdial"
)

var (
	// ErrUnavailable: no session bus, or no Secret Service on it, or it does not answer.
	ErrUnavailable = errors.New("no keyring")
	// ErrNoAnswer: the session bus or the Secret Service is there but did not answer in time
	// (a busy or hung session). Such an error is ErrUnavailable too; this tells a keyring
	// that failed from a machine that has none.
	ErrNoAnswer = errors.New("the keyring did not answer")
	// ErrNoService: the session bus is there but no Secret Service is on it (yet: at login
	// the keyring may register a moment after the programs that want it start). Such an
	// error is ErrUnavailable too.
	ErrNoService = errors.New("no Secret Service on the session bus")
	// ErrNotFound: no password is stored for the vault.
	ErrNotFound = errors.New("no password stored")
	// ErrLocked: the keyring stayed locked (its unlock prompt was dismissed or timed out).
	ErrLocked = errors.New("keyring is locked")
)

const (
	serviceName  = "org.freedesktop.secrets"
	servicePath  = dbus.ObjectPath("/org/freedesktop/secrets")
	ifaceService = "org.freedesktop.Secret.Service"
	ifaceColl    = "org.freedesktop.Secret.Collection"
	ifaceItem    = "org.freedesktop.Secret.Item"
	ifacePrompt  = "org.freedesktop.Secret.Prompt"
	ifaceSession = "org.freedesktop.Secret.Session"
	noPrompt     = dbus.ObjectPath("/")

	// attrApp and attrCipherDir identify vaultui's items.
	attrApp       = "application"
	appName       = "vaultui"
	attrCipherDir = "vaultui-cipherdir"
)

// Options bounds the keyring's waits.
type Options struct {
	// CallTimeout bounds connecting and each D-Bus call; 0 means 5 s.
	CallTimeout time.Duration
	// PromptTimeout bounds the wait for the user to answer the service's unlock prompt; 0
	// means 60 s.
	PromptTimeout time.Duration
}

// Keyring is an open session with the Secret Service. It is not safe for concurrent use.
type Keyring struct {
	conn    *dbus.Conn
	session dbus.ObjectPath
	key     []byte // the session's AES key
	opts    Options
}

// secret is the Secret Service's (oayays) struct.
type secret struct {
	Session     dbus.ObjectPath
	Parameters  []byte
	Value       []byte
	ContentType string
}

// Open connects to the session bus (never starting one) and opens an encrypted session with
// the Secret Service. Any failure to reach it wraps ErrUnavailable.
func Open(ctx context.Context, opts Options) (*Keyring, error) {
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 5 * time.Second
	}
	if opts.PromptTimeout <= 0 {
		opts.PromptTimeout = 60 * time.Second
	}
	conn, err := dbusdial.Dial(ctx, opts.CallTimeout, dbus.SessionBusPrivateNoAutoStartup)
	if errors.Is(err, dbusdial.ErrNoAnswer) {
		return nil, &unavailableError{why: "D-Bus session bus timed out", slow: true, detail: err}
	}
	if err != nil {
		return nil, &unavailableError{why: "no D-Bus session bus", detail: err}
	}
	k := &Keyring{conn: conn, opts: opts}
	dh, err := newDHKey()
	if err != nil {
		conn.Close()
		return nil, err
	}
	defer dh.wipe() // the session key is all that is needed after OpenSession
	var out dbus.Variant
	err = k.call(ctx, k.service(), ifaceService+".OpenSession", []any{algorithmDH, dbus.MakeVariant(dh.pub)}, &out, &k.session)
	if err != nil {
		conn.Close()
		var de dbus.Error
		if errors.As(err, &de) && de.Name == "org.freedesktop.DBus.Error.NotSupported" {
			return nil, &unavailableError{why: "the Secret Service offers no encrypted transfer",
				detail: fmt.Errorf("%s; vaultui does not send passwords in clear", algorithmDH)}
		}
		return nil, unavailable(err)
	}
	peer, ok := out.Value().([]byte)
	if !ok {
		k.Close()
		return nil, &unavailableError{why: fmt.Sprintf("OpenSession answered %s, not a public key", out.Signature())}
	}
	if k.key, err = dh.sessionKey(peer); err != nil {
		k.Close()
		return nil, err
	}
	return k, nil
}

// unavailable classifies a failed call: the service missing is ErrUnavailable, the service
// silent ErrUnavailable and ErrNoAnswer.
func unavailable(err error) error {
	var de dbus.Error
	if errors.As(err, &de) {
		switch de.Name {
		case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
			"org.freedesktop.DBus.Error.Spawn.ChildExited", "org.freedesktop.DBus.Error.Spawn.ServiceNotFound":
			return &unavailableError{why: "no Secret Service", absent: true, detail: errors.New(de.Name)}
		case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.TimedOut":
			return &unavailableError{why: "Secret Service timed out", slow: true, detail: errors.New(de.Name)}
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &unavailableError{why: "Secret Service timed out", slow: true, detail: err}
	}
	return fmt.Errorf("keyring: %w", err)
}

// unavailableError is ErrUnavailable, and ErrNoAnswer when slow, ErrNoService when absent:
// why in a few words (see Reason) and the detail behind it.
type unavailableError struct {
	why    string
	slow   bool // the bus or the service did not answer in time
	absent bool // the bus answered: no Secret Service on it
	detail error
}

func (e *unavailableError) Error() string {
	if e.detail == nil {
		return "no keyring: " + e.why
	}
	return fmt.Sprintf("no keyring: %s (%v)", e.why, e.detail)
}

func (e *unavailableError) Is(target error) bool {
	return target == ErrUnavailable || e.slow && target == ErrNoAnswer || e.absent && target == ErrNoService
}

func (e *unavailableError) Unwrap() error { return e.detail }

// Reason says in a few words why the keyring could not be used, short enough for one line
// beside a password prompt ("no D-Bus session bus", "Secret Service timed out");
// err.Error() has the detail behind it.
func Reason(err error) string {
	var u *unavailableError
	if errors.As(err, &u) {
		return u.why
	}
	return strings.TrimPrefix(err.Error(), "keyring: ")
}

// Close ends the session and the connection.
func (k *Keyring) Close() error {
	if k.conn == nil {
		return nil
	}
	if k.session != "" {
		ctx, cancel := context.WithTimeout(context.Background(), k.opts.CallTimeout)
		k.conn.Object(serviceName, k.session).CallWithContext(ctx, ifaceSession+".Close", 0)
		cancel()
	}
	clear(k.key)
	err := k.conn.Close()
	k.conn = nil
	return err
}

func (k *Keyring) service() dbus.BusObject { return k.conn.Object(serviceName, servicePath) }

// call makes one bounded method call and stores its results in out.
func (k *Keyring) call(ctx context.Context, obj dbus.BusObject, method string, args []any, out ...any) error {
	ctx, cancel := context.WithTimeout(ctx, k.opts.CallTimeout)
	defer cancel()
	c := obj.CallWithContext(ctx, method, 0, args...)
	if c.Err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", method, context.DeadlineExceeded)
		}
		return c.Err
	}
	if len(out) == 0 {
		return nil
	}
	return c.Store(out...)
}

// prompt runs a Secret Service prompt (an unlock dialog) and waits for it, at most
// PromptTimeout. A dismissed or unanswered prompt is ErrLocked.
func (k *Keyring) prompt(ctx context.Context, p dbus.ObjectPath) error {
	if p == noPrompt || p == "" {
		return nil
	}
	match := []dbus.MatchOption{dbus.WithMatchObjectPath(p), dbus.WithMatchInterface(ifacePrompt), dbus.WithMatchMember("Completed")}
	if err := k.conn.AddMatchSignal(match...); err != nil {
		return unavailable(err)
	}
	defer k.conn.RemoveMatchSignal(match...)
	ch := make(chan *dbus.Signal, 4)
	k.conn.Signal(ch)
	defer k.conn.RemoveSignal(ch)
	if err := k.call(ctx, k.conn.Object(serviceName, p), ifacePrompt+".Prompt", []any{""}); err != nil {
		return unavailable(err)
	}
	t := time.NewTimer(k.opts.PromptTimeout)
	defer t.Stop()
	for {
		select {
		case s := <-ch:
			if s.Path != p || s.Name != ifacePrompt+".Completed" {
				continue
			}
			if len(s.Body) > 0 {
				if dismissed, _ := s.Body[0].(bool); dismissed {
					return fmt.Errorf("%w: the unlock prompt was dismissed", ErrLocked)
				}
			}
			return nil
		case <-t.C:
			dctx, cancel := context.WithTimeout(context.Background(), k.opts.CallTimeout)
			k.conn.Object(serviceName, p).CallWithContext(dctx, ifacePrompt+".Dismiss", 0)
			cancel()
			return fmt.Errorf("%w: nobody answered the unlock prompt within %v", ErrLocked, k.opts.PromptTimeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// attrs are the attributes of a vault's item. The vault is its cipherdir as an absolute,
// clean path: the one spelling every caller (the commands, the TUI, the daemon's automount)
// looks it up by, however it was given.
func attrs(cipherDir string) map[string]string {
	if abs, err := filepath.Abs(cipherDir); err == nil {
		cipherDir = abs
	}
	return map[string]string{attrApp: appName, attrCipherDir: cipherDir}
}

// Label is what keyring managers list for the password of the vault called name (its
// registry name, or its path when it has none) at cipherDir.
func Label(name, cipherDir string) string {
	return fmt.Sprintf("vaultui: %s (%s)", cmp.Or(name, filepath.Base(cipherDir)), cipherDir)
}

// find returns the items stored for cipherDir, unlocking them if needed.
func (k *Keyring) find(ctx context.Context, cipherDir string) ([]dbus.ObjectPath, error) {
	var unlocked, locked []dbus.ObjectPath
	if err := k.call(ctx, k.service(), ifaceService+".SearchItems", []any{attrs(cipherDir)}, &unlocked, &locked); err != nil {
		return nil, unavailable(err)
	}
	if len(locked) > 0 {
		var now []dbus.ObjectPath
		var p dbus.ObjectPath
		if err := k.call(ctx, k.service(), ifaceService+".Unlock", []any{locked}, &now, &p); err != nil {
			return nil, unavailable(err)
		}
		if err := k.prompt(ctx, p); err != nil {
			return nil, err
		}
		if p != noPrompt {
			now = locked // the prompt unlocked them
		}
		unlocked = append(unlocked, now...)
	}
	return unlocked, nil
}

// Get returns the password stored for cipherDir, or ErrNotFound. The caller wipes it.
func (k *Keyring) Get(ctx context.Context, cipherDir string) ([]byte, error) {
	items, err := k.find(ctx, cipherDir)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s: %w", cipherDir, ErrNotFound)
	}
	var s secret
	if err := k.call(ctx, k.conn.Object(serviceName, items[0]), ifaceItem+".GetSecret", []any{k.session}, &s); err != nil {
		return nil, unavailable(err)
	}
	pw, err := decryptSecret(k.key, s.Parameters, s.Value)
	clear(s.Value)
	return pw, err
}

// Has reports whether a password is stored for cipherDir, without reading it or unlocking
// the keyring.
func (k *Keyring) Has(ctx context.Context, cipherDir string) (bool, error) {
	var unlocked, locked []dbus.ObjectPath
	if err := k.call(ctx, k.service(), ifaceService+".SearchItems", []any{attrs(cipherDir)}, &unlocked, &locked); err != nil {
		return false, unavailable(err)
	}
	return len(unlocked)+len(locked) > 0, nil
}

// Set stores password for cipherDir in the default keyring, replacing what was there. label
// is what keyring managers show ("vaultui: work (/data/work.crypt)").
func (k *Keyring) Set(ctx context.Context, cipherDir, label string, password []byte) error {
	var coll dbus.ObjectPath
	if err := k.call(ctx, k.service(), ifaceService+".ReadAlias", []any{"default"}, &coll); err != nil {
		return unavailable(err)
	}
	if coll == noPrompt || coll == "" {
		return &unavailableError{why: "the Secret Service has no default keyring"}
	}
	var unlockedNow []dbus.ObjectPath
	var p dbus.ObjectPath
	if err := k.call(ctx, k.service(), ifaceService+".Unlock", []any{[]dbus.ObjectPath{coll}}, &unlockedNow, &p); err != nil {
		return unavailable(err)
	}
	if err := k.prompt(ctx, p); err != nil {
		return err
	}
	iv, ct, err := encryptSecret(k.key, password)
	if err != nil {
		return err
	}
	props := map[string]dbus.Variant{
		ifaceItem + ".Label":      dbus.MakeVariant(label),
		ifaceItem + ".Attributes": dbus.MakeVariant(attrs(cipherDir)),
	}
	s := secret{Session: k.session, Parameters: iv, Value: ct, ContentType: "text/plain; charset=utf8"}
	var item dbus.ObjectPath
	if err := k.call(ctx, k.conn.Object(serviceName, coll), ifaceColl+".CreateItem", []any{props, s, true}, &item, &p); err != nil {
		return unavailable(err)
	}
	return k.prompt(ctx, p)
}

// Delete removes every password stored for cipherDir; none is ErrNotFound.
func (k *Keyring) Delete(ctx context.Context, cipherDir string) error {
	items, err := k.find(ctx, cipherDir)
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return fmt.Errorf("%s: %w", cipherDir, ErrNotFound)
	}
	for _, it := range items {
		var p dbus.ObjectPath
		if err := k.call(ctx, k.conn.Object(serviceName, it), ifaceItem+".Delete", nil, &p); err != nil {
			return unavailable(err)
		}
		if err := k.prompt(ctx, p); err != nil {
			return err
		}
	}
	return nil
}
