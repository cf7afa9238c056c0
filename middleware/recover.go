package middleware

import (
	"log/slog"
	"net/http"
	"runtime/debug"

	"github.com/riptide-http/riptide"
)

// Recover recovers a panic in the handler, logs it to logger (level Error,
// with the request, the panic value and the stack; slog.Default() when
// nil), counts it in the server's statistics (Stats.Panics,
// riptide_panics_total) and answers 500 itself, so that middleware around
// it sees the request end: AccessLog logs the 500, and header fields that
// middleware set (X-Request-Id, CORS) stay on the response. What the
// handler had begun of the response is dropped (Ctx.ResetResponse) and the
// connection closes after the 500. If some of the response was already
// committed, nothing can replace it: the panic goes on as
// riptide.ErrAbortHandler, and the server cuts the connection so that the
// client cannot take it for a whole response (without logging or counting
// the panic again). riptide.ErrAbortHandler and http.ErrAbortHandler pass
// through unlogged.
func Recover(logger *slog.Logger) func(riptide.Handler) riptide.Handler {
	return func(next riptide.Handler) riptide.Handler {
		return riptide.HandlerFunc(func(c *riptide.Ctx) {
			defer func() {
				if v := recover(); v != nil {
					recovered(logger, c, v)
				}
			}()
			next.ServeCtx(c)
		})
	}
}

// recovered handles a panic value Recover caught.
func recovered(logger *slog.Logger, c *riptide.Ctx, v any) {
	if v == riptide.ErrAbortHandler || v == http.ErrAbortHandler {
		panic(v)
	}
	if logger == nil {
		logger = slog.Default()
	}
	logger.LogAttrs(c, slog.LevelError, "panic serving request",
		slog.String("method", string(c.Method())),
		slog.String("target", string(c.RequestURI())),
		slog.String("remote", c.RemoteAddr().String()),
		slog.Any("panic", v),
		slog.String("stack", string(debug.Stack())))
	c.CountPanic()
	if !c.ResetResponse() {
		// Part of the response is out: the server cuts the connection
		// and does not log or count this a second time.
		panic(riptide.ErrAbortHandler)
	}
	c.SetClose()
	c.Error(500, "Internal Server Error")
}
