package middleware

import (
	"log/slog"
	"time"

	"github.com/riptide-http/riptide"
)

// AccessLog logs one record per request to logger at level, after the
// handler returns: method, target, status, duration, the client address
// (through realIP when not nil, else the peer's) and the request ID when
// RequestID runs before it. A handler that panics is logged too, as it
// unwinds, with status 500 (what the server or an outer Recover answers;
// the status set so far if the response was already committed) and
// panicked=true. When logger is not enabled for level, it only asks
// logger.Enabled and costs no allocation.
func AccessLog(logger *slog.Logger, level slog.Level, realIP *RealIP) func(riptide.Handler) riptide.Handler {
	if logger == nil {
		logger = slog.Default()
	}
	return func(next riptide.Handler) riptide.Handler {
		return riptide.HandlerFunc(func(c *riptide.Ctx) {
			if !logger.Enabled(c, level) {
				next.ServeCtx(c)
				return
			}
			start := time.Now()
			returned := false
			// Deferred, without recovering, so that a panic is logged on
			// its way out and an outer Recover still sees its stack.
			defer func() {
				logRequest(logger, level, realIP, c, time.Since(start), !returned)
			}()
			next.ServeCtx(c)
			returned = true
		})
	}
}

func logRequest(logger *slog.Logger, level slog.Level, realIP *RealIP, c *riptide.Ctx, d time.Duration, panicked bool) {
	var client string
	if realIP != nil {
		client = realIP.ClientIP(c).String()
	} else {
		client = c.RemoteAddr().String()
	}
	status := c.Status()
	if panicked && !c.Committed() {
		status = 500
	}
	attrs := []slog.Attr{
		slog.String("method", string(c.Method())),
		slog.String("target", string(c.RequestURI())),
		slog.Int("status", status),
		slog.Duration("duration", d),
		slog.String("client", client),
	}
	if id := GetRequestID(c); id != nil {
		attrs = append(attrs, slog.String("request_id", string(id)))
	}
	if panicked {
		attrs = append(attrs, slog.Bool("panicked", true))
	}
	logger.LogAttrs(c, level, "request", attrs...)
}
