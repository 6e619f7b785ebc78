package mountmgr

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vaultui/vaultui/internal/atomicfile"
	"github.com/vaultui/vaultui/internal/userfile"
	"golang.org/x/sys/unix"
)

// The ledger is the list of mounts that daemons of one socket directory have mounted, kept in
// that directory (file "mounts"). A starting daemon cleans up only the stale mounts its ledger
// names: the fuse.vaultui mounts of other daemons of the same user (tests run several side by
// side, each with its own XDG_RUNTIME_DIR) are theirs to clean and report. A mount leaves the
// ledger as soon as it is unmounted (its mount ID and device number go to the next FUSE file
// system, which a later daemon must not take for it), and at any cleanup of stale mounts that
// finds it neither in the daemon's mount table nor stale.
//
// Each line names a mount by its identity (mount ID and device, see mountID) and, last, the
// mount point it had when mounted: "ID MAJOR:MINOR PATH". A mount whose mount point was moved
// since (a parent directory renamed) is still found by its identity. A line of a path alone
// (ledgers of older versions) names the mount at that path.

// maxLedger bounds the ledger read: thousands of mount points of the longest paths.
const maxLedger = 16 << 20

func ledgerPath(socketDir string) string { return filepath.Join(socketDir, "mounts") }

// readLedger returns the ledger at path: mount point -> identity (zero for a line of a path
// alone); a missing ledger is empty.
func readLedger(path string) (map[string]mountID, error) {
	data, err := userfile.Read(path, maxLedger)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]mountID{}, nil
	}
	if err != nil {
		return map[string]mountID{}, fmt.Errorf("reading %s: %w", path, err)
	}
	owned := map[string]mountID{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if filepath.IsAbs(line) {
			owned[line] = mountID{}
			continue
		}
		var id mountID
		var major, minor uint32
		var mp string
		if n, _ := fmt.Sscanf(line, "%d %d:%d ", &id.ID, &major, &minor); n == 3 {
			if _, rest, ok := strings.Cut(line, " "); ok {
				_, mp, _ = strings.Cut(rest, " ")
			}
		}
		if filepath.IsAbs(mp) {
			id.Dev = unix.Mkdev(major, minor)
			owned[mp] = id
		}
	}
	return owned, nil
}

// writeLedger replaces the ledger at path with owned, atomically (atomicfile.Replace), so a
// daemon killed mid-write leaves the old list or the new one.
func writeLedger(path string, owned map[string]mountID) error {
	mps := slices.Sorted(maps.Keys(owned))
	var buf bytes.Buffer
	for _, mp := range mps {
		if id := owned[mp]; id.known() {
			fmt.Fprintf(&buf, "%d %d:%d ", id.ID, unix.Major(id.Dev), unix.Minor(id.Dev))
		}
		buf.WriteString(mp)
		buf.WriteByte('\n')
	}
	if err := atomicfile.Replace(atomicfile.OS{}, path, path+".tmp", buf.Bytes(), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// owns reports whether the ledger names the mount e: by identity, or, for a line of a path
// alone, by its mount point. The caller holds d.mu.
func (d *daemon) owns(e mountEntry) bool {
	for mp, id := range d.owned {
		if id.known() && id == e.identity() || !id.known() && mp == e.MountPoint {
			return true
		}
	}
	return false
}

// pruneLedger keeps in the ledger only what may still need cleaning up: the mounts in the
// table and the stale ones not cleaned yet (stale). The caller holds d.mu.
func (d *daemon) pruneLedger(stale []StaleMount) {
	owned := map[string]mountID{}
	for mp := range d.mounts {
		if id, ok := d.owned[mp]; ok {
			owned[mp] = id
		}
	}
	for _, s := range stale {
		owned[s.MountPoint] = s.id
	}
	if !maps.Equal(owned, d.owned) {
		d.owned = owned
		d.saveLedger()
	}
}

// saveLedger writes d.owned to the ledger; a failure is logged (a crash would then leave that
// mount for the user to clean up). The caller holds d.mu.
func (d *daemon) saveLedger() {
	if d.ledger == "" {
		return
	}
	if err := writeLedger(d.ledger, d.owned); err != nil {
		d.log.Printf("%v", err)
	}
}
