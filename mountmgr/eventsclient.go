package mountmgr

import (
	"context"
)

// Events returns the daemon's event log after event number after (0: all of it), oldest first.
func (c *Client) Events(ctx context.Context, after uint64) ([]Event, error) {
	resp, err := c.call(ctx, request{Op: opEvents, After: after})
	if err != nil {
		return nil, err
	}
	return resp.Events, nil
}

// FollowEvents calls each with the events after event number after, then with every new one as
// it happens, until ctx is done (then it returns nil) or the daemon goes away.
func (c *Client) FollowEvents(ctx context.Context, after uint64, each func([]Event)) error {
	first := true
	return c.stream(ctx, request{V: ProtocolVersion, ID: 1, Op: opEvents, After: after, Follow: true}, func(resp *response) {
		// The first answer is the backlog, even when empty; later empty ones keep the
		// connection checked.
		if len(resp.Events) > 0 || first {
			each(resp.Events)
		}
		first = false
	})
}
