package middleware

import (
	"context"
	"time"

	"github.com/riptide-http/riptide"
)

// Timeout bounds the handler's work to d: once d has passed, the
// handler's Done channel is closed and Err returns
// context.DeadlineExceeded (riptide.Ctx.CancelAfter), so calls given the
// Ctx as their context.Context return early. A handler that returns
// because of it without having committed a response is answered 503
// Service Unavailable instead, as http.TimeoutHandler does: what it wrote
// is dropped (riptide.Ctx.ResetResponse; header fields other than the
// body's stay). It costs one allocation per request (Done's channel).
func Timeout(d time.Duration) func(riptide.Handler) riptide.Handler {
	return func(next riptide.Handler) riptide.Handler {
		return riptide.HandlerFunc(func(c *riptide.Ctx) {
			c.CancelAfter(d)
			next.ServeCtx(c)
			if c.Err() == context.DeadlineExceeded && c.ResetResponse() {
				c.Error(503, "Service Unavailable")
			}
		})
	}
}

// BodyLimit bounds request bodies to n bytes: a request that declares a
// longer body is answered 413 without calling the handler (and the
// connection closed); a chunked body that grows past n fails its reads
// with riptide.ErrBodyTooLarge (riptide.Ctx.SetBodyLimit), which the
// server answers with 413 when the handler then writes nothing.
func BodyLimit(n int64) func(riptide.Handler) riptide.Handler {
	return func(next riptide.Handler) riptide.Handler {
		return riptide.HandlerFunc(func(c *riptide.Ctx) {
			if c.ContentLength() > n {
				c.SetClose()
				c.Error(413, "Request Entity Too Large")
				return
			}
			c.SetBodyLimit(n)
			next.ServeCtx(c)
		})
	}
}
