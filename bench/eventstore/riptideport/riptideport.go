// Package riptideport is the event store's RPC endpoint and its middleware
// ported to riptide's native API (riptide.HandlerFunc). SSE and the metrics
// route stay on the unchanged http.Handler through riptide's compat door,
// riptide.FromHTTP: an SSE stream is long-lived, so the per-request cost
// the native API saves does not matter there.
package riptideport

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/riptide-http/riptide"

	"github.com/riptide-http/riptide/bench/eventstore"
)

// Handler serves POST /rpc natively and every other request through
// riptide.FromHTTP(app.Handler(log)).
func Handler(app *eventstore.App, log *slog.Logger) riptide.Handler {
	rest := riptide.FromHTTP(app.Handler(log))
	return riptide.HandlerFunc(func(c *riptide.Ctx) {
		if string(c.Method()) != "POST" || string(c.Path()) != "/rpc" {
			rest.ServeCtx(c)
			return
		}
		start := time.Now()
		id := eventstore.RequestID(string(c.Header(eventstore.RequestIDHeader)))
		c.SetHeader(eventstore.RequestIDHeader, id)
		w := &countingWriter{c: c}
		serveRecovered(app, log, c, w)
		eventstore.LogRequest(log, c, "POST", "/rpc", c.Status(), w.n, time.Since(start), id)
	})
}

// countingWriter counts the body bytes written, for the access log.
type countingWriter struct {
	c *riptide.Ctx
	n int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.c.Write(p)
	w.n += n
	return n, err
}

// serveRecovered is the recovery middleware around the RPC endpoint.
func serveRecovered(app *eventstore.App, log *slog.Logger, c *riptide.Ctx, w *countingWriter) {
	defer func() {
		if v := recover(); v != nil {
			log.Error("panic", slog.Any("panic", v), slog.String("path", "/rpc"))
			if !c.Committed() {
				c.DelHeader("Content-Encoding")
				writeJSON(c, w, http.StatusInternalServerError, eventstore.InternalErrorBody)
			}
		}
	}()
	ns, ok := app.Namespace(string(c.Header("Authorization")))
	if !ok {
		c.SetHeader("WWW-Authenticate", "Bearer")
		writeJSON(c, w, http.StatusUnauthorized, eventstore.UnauthorizedBody)
		return
	}
	c.SetHeader("Vary", "Accept-Encoding")
	if c.ContentLength() > eventstore.MaxBodyBytes {
		c.SetClose()
		writeJSON(c, w, http.StatusRequestEntityTooLarge, eventstore.TooLargeBody)
		return
	}
	body, err := c.ReadBody()
	if err != nil {
		writeJSON(c, w, http.StatusBadRequest, eventstore.BadBodyBody)
		return
	}
	if len(body) > eventstore.MaxBodyBytes {
		c.SetClose()
		writeJSON(c, w, http.StatusRequestEntityTooLarge, eventstore.TooLargeBody)
		return
	}
	// Not c itself as the context: the request object is reused after
	// the handler returns, and the SQLite driver calls Done from a goroutine
	// that may outlive the call.
	status, out := app.Call(context.Background(), ns, body)
	if len(out) < eventstore.GzipMinSize || !eventstore.AcceptsGzip(string(c.Header("Accept-Encoding"))) {
		writeJSON(c, w, status, out)
		return
	}
	c.SetStatus(status)
	c.SetContentType("application/json")
	c.SetHeader("Content-Encoding", "gzip")
	if err := eventstore.Gzip(w, out); err != nil {
		panic(err)
	}
}

func writeJSON(c *riptide.Ctx, w *countingWriter, status int, body []byte) {
	c.SetStatus(status)
	c.SetContentType("application/json")
	c.SetContentLength(int64(len(body)))
	w.Write(body)
}
