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

	"github.com/vaultui/vaultui/vault"
)

// The ledger is the list of mount points that daemons of one socket directory have mounted,
// kept in that directory (file "mounts"). A starting daemon cleans up only the stale mounts its
// ledger names: the fuse.vaultui mounts of other daemons of the same user (tests run several
// side by side, each with its own XDG_RUNTIME_DIR) are theirs to clean and report. A mount
// point leaves the ledger when a daemon starts and finds it neither mounted nor stale.

// maxLedger bounds the ledger read: thousands of mount points of the longest paths.
const maxLedger = 16 << 20

func ledgerPath(socketDir string) string { return filepath.Join(socketDir, "mounts") }

// readLedger returns the mount points in the ledger at path; a missing ledger is empty.
func readLedger(path string) (map[string]bool, error) {
	data, err := vault.ReadUserFile(path, maxLedger)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return map[string]bool{}, fmt.Errorf("reading %s: %w", path, err)
	}
	owned := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if mp := sc.Text(); filepath.IsAbs(mp) {
			owned[mp] = true
		}
	}
	return owned, nil
}

// writeLedger replaces the ledger at path with the mount points in owned, atomically (temp
// file and rename), so a daemon killed mid-write leaves the old list or the new one.
func writeLedger(path string, owned map[string]bool) error {
	mps := make([]string, 0, len(owned))
	for mp := range owned {
		mps = append(mps, mp)
	}
	slices.Sort(mps)
	var buf bytes.Buffer
	for _, mp := range mps {
		buf.WriteString(mp)
		buf.WriteByte('\n')
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// pruneLedger keeps in the ledger only what may still need cleaning up: live mounts and stale
// ones not cleaned yet. The caller holds d.mu.
func (d *daemon) pruneLedger() {
	owned := map[string]bool{}
	for mp, m := range d.mounts {
		if m != nil && d.owned[mp] {
			owned[mp] = true
		}
	}
	for _, s := range d.stale {
		owned[s.MountPoint] = true
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
