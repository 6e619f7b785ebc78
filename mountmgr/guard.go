package mountmgr

import (
	"context"
	"fmt"
	"runtime/debug"
)

// handleGuarded serves one request and turns a panic in it into an error answer for that
// request alone: one bad vault or request must not take down the daemon, and with it every
// other mounted vault. (Fatal errors such as running out of memory cannot be recovered: the
// KDF refuses those before it starts, see crypto.CheckScryptMemory, and a costly one runs in a
// helper process of its own.)
func (d *daemon) handleGuarded(ctx context.Context, req *request) (resp *response) {
	defer func() {
		if r := recover(); r != nil {
			d.log.Printf("internal error serving %q (recovered, the daemon goes on): %v\n%s", req.Op, r, debug.Stack())
			resp = &response{Error: &wireError{Code: KindOther,
				Msg: fmt.Sprintf("internal error serving %q: %v (see the daemon log)", req.Op, r)}}
		}
	}()
	return d.handle(ctx, req)
}
