package mountmgr

import (
	"context"
	"fmt"

	"github.com/vaultui/vaultui/vault"
)

// mapPaths maps paths of the vault mounted from or at target with the keys the daemon holds
// (vault.Volume.Paths), so a mounted vault's paths map without its password. Results and errors
// may hold plaintext names: they go to the client, never into the log.
func (d *daemon) mapPaths(target string, encrypt bool, paths []string) ([]PathResult, error) {
	mp := d.findTarget(target)
	d.mu.Lock()
	m := d.mounts[mp]
	d.mu.Unlock()
	if mp == "" || m == nil || m.v == nil {
		return nil, ErrorOf(ErrNotMounted, "%s is not mounted", target)
	}
	var out []PathResult
	var err error
	used := m.v.using(func(u *unlocked) {
		if u.walk == nil {
			err = fmt.Errorf("%s is a reverse view: its paths are the plaintext folder's", target)
			return
		}
		out = vault.MapPaths(u.walk.Paths(), encrypt, paths)
	})
	if !used {
		return nil, ErrorOf(ErrNotMounted, "%s is not mounted any more", target)
	}
	return out, err
}

// pathsPerRequest bounds the paths bytes in one request, well within maxRequestLine; a reply
// (a cipher path is at most about 1.4 times the plaintext) stays within maxReplyLine.
const pathsPerRequest = 16 << 10

// MapPaths maps paths of the vault mounted from or at target (a cipherdir or mount point)
// through the daemon, which holds its keys: cipher paths to plaintext paths, or the other way
// with encrypt (see layout.PathNames). A vault that is not mounted fails with ErrNotMounted.
// There is one result per path, in order.
func (c *Client) MapPaths(ctx context.Context, target string, encrypt bool, paths []string) ([]PathResult, error) {
	out := make([]PathResult, 0, len(paths))
	for len(paths) > 0 {
		if len(paths[0]) > pathsPerRequest {
			out = append(out, PathResult{Error: fmt.Sprintf("a path of %d bytes is too long to map", len(paths[0]))})
			paths = paths[1:]
			continue
		}
		n, size := 0, 0
		for n < len(paths) && len(paths[n]) <= pathsPerRequest && (n == 0 || size+len(paths[n]) <= pathsPerRequest) {
			size += len(paths[n])
			n++
		}
		resp, err := c.call(ctx, request{Op: opPaths, Target: target, Encrypt: encrypt, Paths: paths[:n]})
		if err != nil {
			return nil, err
		}
		if len(resp.Paths) != n {
			return nil, fmt.Errorf("%w: %d results for %d paths", ErrDaemon, len(resp.Paths), n)
		}
		out = append(out, resp.Paths...)
		paths = paths[n:]
	}
	return out, nil
}
