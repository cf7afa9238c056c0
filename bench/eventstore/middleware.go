package eventstore

import (
	"compress/gzip"
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// RequestIDHeader carries the request ID, from the client or generated.
const RequestIDHeader = "X-Request-Id"

var requestSeq atomic.Uint64

// RequestID returns the client's request ID when it is short enough to log,
// or else a new one.
func RequestID(fromClient string) string {
	if fromClient != "" && len(fromClient) <= 64 {
		return fromClient
	}
	return "req-" + strconv.FormatUint(requestSeq.Add(1), 10)
}

type ctxKey int

const (
	requestIDKey ctxKey = iota
	namespaceKey
)

// withRequestID sets the request ID on the context and the response.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := RequestID(r.Header.Get(RequestIDHeader))
		w.Header().Set(RequestIDHeader, id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey, id)))
	})
}

// statusRecorder remembers the status and size written, for the access log.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(p)
	s.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach Flush through the recorder.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Flush implements http.Flusher for the SSE handler.
func (s *statusRecorder) Flush() { http.NewResponseController(s.ResponseWriter).Flush() }

// accessLog writes one slog record per request.
func accessLog(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		id, _ := r.Context().Value(requestIDKey).(string)
		LogRequest(log, r.Context(), r.Method, r.URL.Path, rec.status, rec.bytes, time.Since(start), id)
	})
}

// LogRequest writes the access-log record every server writes.
func LogRequest(log *slog.Logger, ctx context.Context, method, path string, status, size int, d time.Duration, id string) {
	log.LogAttrs(ctx, slog.LevelInfo, "request",
		slog.String("method", method), slog.String("path", path), slog.Int("status", status),
		slog.Int("bytes", size), slog.Duration("duration", d), slog.String("request_id", id))
}

// recoverPanics answers a panicking handler with 500 and logs the panic.
func recoverPanics(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				log.Error("panic", slog.Any("panic", v), slog.String("path", r.URL.Path))
				writeJSON(w, http.StatusInternalServerError, InternalErrorBody)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// Canned bodies shared by every server.
var (
	// InternalErrorBody answers a panicking handler.
	InternalErrorBody = []byte(`{"error":{"code":-32603,"message":"internal error"}}`)
	// UnauthorizedBody answers a missing or unknown bearer token.
	UnauthorizedBody = []byte(`{"error":{"code":-32000,"message":"missing or unknown bearer token"}}`)
	// TooLargeBody answers a request body over MaxBodyBytes.
	TooLargeBody = []byte(`{"error":{"code":-32600,"message":"request body too large"}}`)
	// BadBodyBody answers a request body that could not be read.
	BadBodyBody = []byte(`{"error":{"code":-32600,"message":"unreadable request body"}}`)
)

// authenticate resolves the bearer token to a namespace or answers 401.
func (a *App) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ns, ok := a.Namespace(r.Header.Get("Authorization"))
		if !ok {
			w.Header().Set("WWW-Authenticate", "Bearer")
			writeJSON(w, http.StatusUnauthorized, UnauthorizedBody)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), namespaceKey, ns)))
	})
}

// gzipLarge compresses responses of at least GzipMinSize bytes (as declared
// by Content-Length) for clients that accept gzip.
func gzipLarge(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Accept-Encoding")
		if !AcceptsGzip(r.Header.Get("Accept-Encoding")) {
			next.ServeHTTP(w, r)
			return
		}
		gw := &gzipWriter{ResponseWriter: w}
		next.ServeHTTP(gw, r)
		if gw.zw != nil {
			gw.zw.Close()
			gzipWriters.Put(gw.zw)
		}
	})
}

// gzipWriter decides at WriteHeader from the declared Content-Length.
type gzipWriter struct {
	http.ResponseWriter
	decided, zip bool
	zw           *gzip.Writer
}

func (g *gzipWriter) WriteHeader(code int) {
	if !g.decided {
		g.decided = true
		h := g.Header()
		if n, err := strconv.Atoi(h.Get("Content-Length")); err == nil && n >= GzipMinSize {
			g.zip = true
			h.Del("Content-Length")
			h.Set("Content-Encoding", "gzip")
		}
	}
	g.ResponseWriter.WriteHeader(code)
}

func (g *gzipWriter) Write(p []byte) (int, error) {
	if !g.decided {
		g.WriteHeader(http.StatusOK)
	}
	if !g.zip {
		return g.ResponseWriter.Write(p)
	}
	if g.zw == nil {
		g.zw = gzipWriters.Get().(*gzip.Writer)
		g.zw.Reset(g.ResponseWriter)
	}
	return g.zw.Write(p)
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}
