package keyring

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/godbus/dbus/v5"
)

// TestUnavailableClassifies: a Secret Service that is missing is ErrUnavailable; one that
// does not answer (our deadline, or the bus's own reply timeout) is ErrNoAnswer too, with a
// short reason; anything else is neither.
func TestUnavailableClassifies(t *testing.T) {
	for _, c := range []struct {
		err    error
		noAns  bool
		reason string
	}{
		{dbus.Error{Name: "org.freedesktop.DBus.Error.ServiceUnknown"}, false, "no Secret Service"},
		{dbus.Error{Name: "org.freedesktop.DBus.Error.NoReply"}, true, "Secret Service timed out"},
		{fmt.Errorf("SearchItems: %w", context.DeadlineExceeded), true, "Secret Service timed out"},
	} {
		err := unavailable(c.err)
		if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrNoAnswer) != c.noAns {
			t.Errorf("unavailable(%v) = %v: ErrUnavailable %v, ErrNoAnswer %v, want true, %v",
				c.err, err, errors.Is(err, ErrUnavailable), errors.Is(err, ErrNoAnswer), c.noAns)
		}
		if got := Reason(err); got != c.reason {
			t.Errorf("Reason(%v) = %q, want %q", err, got, c.reason)
		}
	}
	other := unavailable(dbus.Error{Name: "org.freedesktop.DBus.Error.AccessDenied", Body: []any{"denied"}})
	if errors.Is(other, ErrUnavailable) || errors.Is(other, ErrNoAnswer) {
		t.Errorf("AccessDenied: %v, want neither ErrUnavailable nor ErrNoAnswer", other)
	}
	if got := Reason(other); got != "denied" {
		t.Errorf("Reason(%v) = %q, want the D-Bus message without the package prefix", other, got)
	}
}
