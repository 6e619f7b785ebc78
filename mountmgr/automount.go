package mountmgr

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/vaultui/vaultui/registry"
)

// ReasonAutomount marks the events of the daemon's mounts at login (Event.Reason).
const ReasonAutomount = "automount"

// automountMarker is created in the socket directory ($XDG_RUNTIME_DIR/vaultui, emptied at
// logout) once automount ran, so it runs once per login: a daemon restarted later (on demand,
// or by systemd after a crash) does not mount again what the user has unmounted since.
const automountMarker = "automount.done"

// automount mounts every registered vault with the automount option (Entry.MountAtStart)
// whose password is in the keyring, reached over the session bus the daemon was started with.
// Every vault it could not mount is an event (and a log line) saying why.
func (d *daemon) automount(ctx context.Context, sockDir, registryPath string) {
	marker := filepath.Join(sockDir, automountMarker)
	f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			d.log.Printf("automount: already done in this login session (%s)", marker)
		} else {
			d.log.Printf("automount: %v; not mounting anything", err)
		}
		return
	}
	fmt.Fprintf(f, "%s\n", time.Now().Format(time.RFC3339))
	f.Close()

	reg, err := registry.Load(registryPath)
	if err != nil {
		d.log.Printf("automount: %v", err)
		d.events.add(Event{Kind: EventMountFailed, Reason: ReasonAutomount, Detail: err.Error()})
		return
	}
	var todo []registry.Entry
	for _, v := range reg.Vaults {
		if v.MountAtStart {
			todo = append(todo, v)
		}
	}
	if len(todo) == 0 {
		return
	}
	d.mountFromKeyring(ctx, todo, ReasonAutomount)
}
