// Package fastport is the event store's RPC endpoint and its middleware
// ported to fasthttp's native API, as the public migration this benchmark
// answers did. SSE and the metrics route stay on the unchanged http.Handler
// through fasthttpadaptor (the migration kept SSE on the standard library's
// interfaces too).
package fastport

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/riptide-http/riptide/bench/eventstore"
)

// Handler serves POST /rpc natively and every other request through
// fasthttpadaptor and app.Handler(log).
func Handler(app *eventstore.App, log *slog.Logger) fasthttp.RequestHandler {
	rest := fasthttpadaptor.NewFastHTTPHandler(app.Handler(log))
	return func(ctx *fasthttp.RequestCtx) {
		if !ctx.IsPost() || string(ctx.Path()) != "/rpc" {
			rest(ctx)
			return
		}
		start := time.Now()
		id := eventstore.RequestID(string(ctx.Request.Header.Peek(eventstore.RequestIDHeader)))
		ctx.Response.Header.Set(eventstore.RequestIDHeader, id)
		serveRecovered(app, log, ctx)
		eventstore.LogRequest(log, ctx, "POST", "/rpc", ctx.Response.StatusCode(),
			len(ctx.Response.Body()), time.Since(start), id)
	}
}

// serveRecovered is the recovery middleware around serveRPC.
func serveRecovered(app *eventstore.App, log *slog.Logger, ctx *fasthttp.RequestCtx) {
	defer func() {
		if v := recover(); v != nil {
			log.Error("panic", slog.Any("panic", v), slog.String("path", "/rpc"))
			ctx.Response.Header.Del("Content-Encoding")
			writeJSON(ctx, http.StatusInternalServerError, eventstore.InternalErrorBody)
		}
	}()
	ns, ok := app.Namespace(string(ctx.Request.Header.Peek("Authorization")))
	if !ok {
		ctx.Response.Header.Set("WWW-Authenticate", "Bearer")
		writeJSON(ctx, http.StatusUnauthorized, eventstore.UnauthorizedBody)
		return
	}
	ctx.Response.Header.Set("Vary", "Accept-Encoding")
	body := ctx.PostBody()
	if ctx.Request.Header.ContentLength() > eventstore.MaxBodyBytes || len(body) > eventstore.MaxBodyBytes {
		writeJSON(ctx, http.StatusRequestEntityTooLarge, eventstore.TooLargeBody)
		ctx.SetConnectionClose()
		return
	}
	// Not ctx itself as the context: the request object is reused after
	// the handler returns, and the SQLite driver calls Done from a goroutine
	// that may outlive the call.
	status, out := app.Call(context.Background(), ns, body)
	if len(out) < eventstore.GzipMinSize || !eventstore.AcceptsGzip(string(ctx.Request.Header.Peek("Accept-Encoding"))) {
		writeJSON(ctx, status, out)
		return
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.Response.Header.Set("Content-Encoding", "gzip")
	if err := eventstore.Gzip(ctx.Response.BodyWriter(), out); err != nil {
		panic(err)
	}
}

func writeJSON(ctx *fasthttp.RequestCtx, status int, body []byte) {
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
}
