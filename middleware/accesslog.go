package middleware

import (
	"log/slog"
	"time"

	"github.com/riptide-http/riptide"
)

// AccessLog logs one record per request to logger at level, after the
// handler returns: method, target, status, duration, the client address
// (through realIP when not nil, else the peer's) and the request ID when
// RequestID runs before it. When logger is not enabled for level, it only
// asks logger.Enabled and costs no allocation.
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
			next.ServeCtx(c)
			logRequest(logger, level, realIP, c, time.Since(start))
		})
	}
}

func logRequest(logger *slog.Logger, level slog.Level, realIP *RealIP, c *riptide.Ctx, d time.Duration) {
	var client string
	if realIP != nil {
		client = realIP.ClientIP(c).String()
	} else {
		client = c.RemoteAddr().String()
	}
	attrs := []slog.Attr{
		slog.String("method", string(c.Method())),
		slog.String("target", string(c.RequestURI())),
		slog.Int("status", c.Status()),
		slog.Duration("duration", d),
		slog.String("client", client),
	}
	if id := GetRequestID(c); id != nil {
		attrs = append(attrs, slog.String("request_id", string(id)))
	}
	logger.LogAttrs(c, level, "request", attrs...)
}
