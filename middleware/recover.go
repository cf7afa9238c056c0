package middleware

import (
	"log/slog"
	"net/http"
	"runtime/debug"

	"github.com/riptide-http/riptide"
)

// Recover logs a panic in the handler to logger (level Error, with the
// request, the panic value and the stack; slog.Default() when nil) and
// then lets the server answer 500 and close the connection, without the
// server logging it again: the response the handler may have half built
// is dropped, or, if some of it was already sent, the connection is cut so
// that the client cannot take it for a whole one. riptide.ErrAbortHandler
// and http.ErrAbortHandler pass through unlogged.
func Recover(logger *slog.Logger) func(riptide.Handler) riptide.Handler {
	return func(next riptide.Handler) riptide.Handler {
		return riptide.HandlerFunc(func(c *riptide.Ctx) {
			defer func() {
				if v := recover(); v != nil {
					logPanic(logger, c, v)
				}
			}()
			next.ServeCtx(c)
		})
	}
}

func logPanic(logger *slog.Logger, c *riptide.Ctx, v any) {
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
	// The server turns this into a clean 500 (or a cut connection) and
	// does not log it a second time.
	panic(riptide.ErrAbortHandler)
}
