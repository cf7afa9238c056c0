package riptideroutes

import (
	"io"
	"log/slog"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/middleware"
	"github.com/riptide-http/riptide/router"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
)

// routed is the routed app (benchserver.ProfileRouted) on riptide's router
// and middleware packages.
func routed() riptide.Handler {
	quiet := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	r := router.New()
	r.Use(middleware.Recover(quiet), middleware.RequestID(), middleware.AccessLog(quiet, slog.LevelInfo, nil))
	for _, rt := range benchserver.RoutedRoutes {
		names := rt.Names()
		r.HandleFunc(rt.Method+" "+rt.Path, func(c *riptide.Ctx) {
			c.SetContentType("text/plain; charset=utf-8")
			for i, n := range names {
				if i > 0 {
					c.WriteString("/")
				}
				c.Write(c.PathValue(n))
			}
		})
	}
	return r
}
