package riptide

import (
	"context"
	"log/slog"
	"time"
)

// AccessLog returns a native handler that serves h and then logs one
// record per request to logger at level: method, target, status, response
// body bytes, duration and the client's address (RemoteAddr, so the
// client behind a PROXY header or a trusted proxy). When logger does not
// enable level it costs one Enabled call and allocates nothing; when it
// does, the record allocates as slog does. A request whose handler panics
// is not logged here (the server logs the panic).
func AccessLog(logger *slog.Logger, level slog.Level, h Handler) Handler {
	return HandlerFunc(func(x *Ctx) {
		if !logger.Enabled(context.Background(), level) {
			h.ServeCtx(x)
			return
		}
		start := time.Now()
		h.ServeCtx(x)
		r := &x.resp
		logger.LogAttrs(context.Background(), level, "request",
			slog.String("method", string(x.req.Method)),
			slog.String("target", string(x.req.Target)),
			slog.Int("status", x.Status()),
			slog.Int64("bytes", r.written+int64(len(r.body))),
			slog.Duration("duration", time.Since(start)),
			slog.String("remote", x.RemoteAddr().String()))
	})
}
