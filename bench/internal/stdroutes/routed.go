package stdroutes

import (
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/go-chi/chi/v5"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
)

// routedMux is the routed app (benchserver.ProfileRouted) on http.ServeMux.
func routedMux() http.Handler {
	m := http.NewServeMux()
	for _, rt := range benchserver.RoutedRoutes {
		m.HandleFunc(rt.Method+" "+rt.Path, pathValues(rt.Names(), (*http.Request).PathValue))
	}
	return withRoutedMiddleware(m)
}

// routedChi is the routed app on chi, its middleware added with Use as chi
// apps do.
func routedChi() http.Handler {
	r := chi.NewRouter()
	r.Use(routedMiddleware()...)
	for _, rt := range benchserver.RoutedRoutes {
		r.MethodFunc(rt.Method, rt.Path, pathValues(rt.Names(), chi.URLParam))
	}
	return r
}

// pathValues answers with the route's path values joined by '/'.
func pathValues(names []string, value func(*http.Request, string) string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		vals := make([]string, len(names))
		for i, n := range names {
			vals[i] = value(r, n)
		}
		body := strings.Join(vals, "/")
		h := w.Header()
		h["Content-Type"] = []string{"text/plain; charset=utf-8"}
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
		io.WriteString(w, body)
	}
}

func withRoutedMiddleware(h http.Handler) http.Handler {
	mw := routedMiddleware()
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

// routedMiddleware is the routed app's three middleware for net/http:
// recovery, request ID, access log with its level disabled.
func routedMiddleware() []func(http.Handler) http.Handler {
	quiet := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var counter atomic.Uint64
	return []func(http.Handler) http.Handler{
		func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				defer func() {
					if v := recover(); v != nil && v != http.ErrAbortHandler {
						quiet.Error("panic", "panic", v)
						http.Error(w, "internal server error", http.StatusInternalServerError)
					}
				}()
				next.ServeHTTP(w, r)
			})
		},
		func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				id := r.Header.Get(benchserver.RequestIDHeader)
				if id == "" || len(id) > 64 {
					var buf [40]byte
					id = string(benchserver.AppendRequestID(buf[:0], counter.Add(1)))
				}
				w.Header()[benchserver.RequestIDHeader] = []string{id}
				next.ServeHTTP(w, r)
			})
		},
		func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !quiet.Enabled(r.Context(), slog.LevelInfo) {
					next.ServeHTTP(w, r)
					return
				}
				next.ServeHTTP(w, r)
				quiet.Info("request", "method", r.Method, "path", r.URL.Path)
			})
		},
	}
}
