package riptide

import "github.com/riptide-http/riptide/internal/takeover"

func init() { takeover.Bytes = statCounters }

// statCounters is takeover.Bytes: the stats shard of the HTTP/1.1
// connection of xa (a *Ctx, or the compat door's ResponseWriter), whose
// bytes after a hijack or a takeover its new protocol counts there.
func statCounters(xa any) *takeover.Counters {
	var x *Ctx
	switch v := xa.(type) {
	case *Ctx:
		x = v
	case *compatResponse:
		w := v.lock()
		if w == nil {
			return nil
		}
		x = w.x
		v.unlock()
	}
	if x == nil || x.conn == nil || x.IsHTTP2() || x.IsHTTP3() || !x.conn.cfg.stats || x.conn.shard == nil {
		return nil
	}
	return &x.conn.shard.bytes
}
