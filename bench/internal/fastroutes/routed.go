package fastroutes

import (
	"io"
	"log/slog"
	"sync/atomic"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
)

// routed is the routed app (benchserver.ProfileRouted) on fasthttp/router
// with the same three middleware, as fasthttp handler wrappers.
func routed() fasthttp.RequestHandler {
	r := router.New()
	for _, rt := range benchserver.RoutedRoutes {
		names := rt.Names()
		r.Handle(rt.Method, rt.Path, func(ctx *fasthttp.RequestCtx) {
			ctx.SetContentType("text/plain; charset=utf-8")
			for i, n := range names {
				if i > 0 {
					ctx.WriteString("/")
				}
				v, _ := ctx.UserValue(n).(string)
				ctx.WriteString(v)
			}
		})
	}
	h := r.Handler
	mw := routedMiddleware()
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

// routedMiddleware: recovery, request ID, access log with its level
// disabled.
func routedMiddleware() []func(fasthttp.RequestHandler) fasthttp.RequestHandler {
	quiet := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var counter atomic.Uint64
	return []func(fasthttp.RequestHandler) fasthttp.RequestHandler{
		func(next fasthttp.RequestHandler) fasthttp.RequestHandler {
			return func(ctx *fasthttp.RequestCtx) {
				defer func() {
					if v := recover(); v != nil {
						quiet.Error("panic", "panic", v)
						ctx.Error("internal server error", fasthttp.StatusInternalServerError)
					}
				}()
				next(ctx)
			}
		},
		func(next fasthttp.RequestHandler) fasthttp.RequestHandler {
			return func(ctx *fasthttp.RequestCtx) {
				id := ctx.Request.Header.Peek(benchserver.RequestIDHeader)
				if len(id) == 0 || len(id) > 64 {
					var buf [40]byte
					id = benchserver.AppendRequestID(buf[:0], counter.Add(1))
				}
				ctx.Response.Header.SetBytesV(benchserver.RequestIDHeader, id)
				next(ctx)
			}
		},
		func(next fasthttp.RequestHandler) fasthttp.RequestHandler {
			return func(ctx *fasthttp.RequestCtx) {
				if !quiet.Enabled(ctx, slog.LevelInfo) {
					next(ctx)
					return
				}
				next(ctx)
				quiet.Info("request", "method", string(ctx.Method()), "path", string(ctx.Path()))
			}
		},
	}
}
