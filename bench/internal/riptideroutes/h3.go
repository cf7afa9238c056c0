package riptideroutes

import (
	"github.com/riptide-http/riptide"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
)

// H3 returns the native handler of the HTTP/3 servers: the bench routes,
// GET benchserver.BulkPath and GET benchserver.AllocsPath (as
// stdroutes.H3).
func H3() riptide.Handler {
	return riptide.HandlerFunc(func(c *riptide.Ctx) {
		if string(c.Method()) == "GET" {
			switch string(c.Path()) {
			case benchserver.BulkPath:
				c.SetContentType("application/octet-stream")
				c.SetContentLength(benchserver.BulkSize)
				c.Write(benchserver.BulkBody())
				return
			case benchserver.AllocsPath:
				c.SetContentType("text/plain")
				var buf [24]byte
				c.Write(benchserver.AppendHeapAllocs(buf[:0]))
				return
			}
		}
		bench(c)
	})
}
