package main

// The same service on the compat door: ordinary net/http handlers on an
// http.ServeMux, with the middleware written as net/http middleware, served
// by riptide through riptide.FromHTTP (-door compat) or by net/http itself
// (-door nethttp). Compression is klauspost/compress's gzhttp (the library
// the compress module is built on); nothing else beyond the standard
// library.
//
// Differences from the native door worth knowing: the mux answers a method
// it has no route for under /api/ or /admin/ with the JSON 404 of the
// catch-all pattern (the native router answers 405 with Allow), and the
// compat door's gzhttp offers gzip only (compress adds zstd and brotli).

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzhttp"
)

// compatHandler returns the service as an http.Handler. shutdown is closed
// when the server's Shutdown begins (RegisterOnShutdown); metrics appends
// the server's own metrics, if it has any, before the application's.
func compatHandler(cfg config, st *store, log *slog.Logger, shutdown <-chan struct{}, metrics func([]byte) []byte) http.Handler {
	h := &compatAPI{st: st, log: log, shutdown: shutdown}

	api := http.NewServeMux()
	api.HandleFunc("GET /api/notes", h.list)
	api.HandleFunc("GET /api/notes/{id}", h.get)
	api.HandleFunc("POST /api/notes", h.create)
	api.HandleFunc("GET /api/events", h.events)
	api.HandleFunc("/api/", notFound)

	admin := http.NewServeMux()
	admin.HandleFunc("GET /admin", h.whoami)
	admin.HandleFunc("DELETE /admin/notes/{id}", h.remove)
	admin.HandleFunc("/admin/", notFound)
	auth := basicAuth("notes admin", cfg.users)

	mux := http.NewServeMux()
	mux.Handle("/api/", cors(cfg.origins, api))
	mux.Handle("/admin", auth(admin))
	mux.Handle("/admin/", auth(admin))
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		b := st.appendMetrics(metrics(nil))
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write(b)
	})
	files := http.FileServer(http.Dir(cfg.static))
	mux.Handle("GET /{$}", files)
	mux.Handle("GET /assets/", files)
	mux.HandleFunc("/", notFound)

	return requestID(accessLog(log, recoverer(log, gzhttp.GzipHandler(mux))))
}

// writeJSON answers status with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// writeError answers as the native door's Server.ErrorHandler does.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	writeJSON(w, status, &apiError{Error: msg, Status: status})
}

func notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotFound, "Not Found")
}

type compatAPI struct {
	st       *store
	log      *slog.Logger
	shutdown <-chan struct{}
}

func (h *compatAPI) list(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, h.st.list())
}

func (h *compatAPI) get(w http.ResponseWriter, r *http.Request) {
	id, ok := parseID(r.PathValue("id"))
	if !ok {
		writeError(w, http.StatusBadRequest, "id must be a positive integer")
		return
	}
	n, ok := h.st.get(id)
	if !ok {
		writeError(w, http.StatusNotFound, "note not found")
		return
	}
	writeJSON(w, http.StatusOK, &n)
}

// create answers 415, 413 and 400 as the native door's BindJSON does.
func (h *compatAPI) create(w http.ResponseWriter, r *http.Request) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		writeError(w, http.StatusUnsupportedMediaType, "Unsupported Media Type: want application/json")
		return
	}
	var in noteInput
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxNoteBody)).Decode(&in); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			writeError(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large")
			return
		}
		writeError(w, http.StatusBadRequest, "Bad Request: "+err.Error())
		return
	}
	if msg := in.validate(); msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	n := h.st.add(in)
	w.Header().Set("Location", "/api/notes/"+strconv.FormatInt(n.ID, 10))
	writeJSON(w, http.StatusCreated, &n)
}

func (h *compatAPI) whoami(w http.ResponseWriter, r *http.Request) {
	user, _ := r.Context().Value(userKey{}).(string)
	writeJSON(w, http.StatusOK, map[string]string{"user": user})
}

func (h *compatAPI) remove(w http.ResponseWriter, r *http.Request) {
	id, ok := parseID(r.PathValue("id"))
	if !ok {
		writeError(w, http.StatusBadRequest, "id must be a positive integer")
		return
	}
	if !h.st.remove(id) {
		writeError(w, http.StatusNotFound, "note not found")
		return
	}
	user, _ := r.Context().Value(userKey{}).(string)
	h.log.Info("note deleted", "id", id, "by", user)
	w.WriteHeader(http.StatusNoContent)
}

// events is the native door's events: the request's context ends when the
// client leaves, h.shutdown when Shutdown begins.
func (h *compatAPI) events(w http.ResponseWriter, r *http.Request) {
	notes, cancel := h.st.subscribe()
	defer cancel()
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(sseEvent(nil, "hello", map[string]string{"stream": "notes"}))
	if rc.Flush() != nil {
		return
	}
	ping := time.NewTicker(15 * time.Second)
	defer ping.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-h.shutdown:
			return
		case n := <-notes:
			w.Write(sseEvent(nil, "note", &n))
		case <-ping.C:
			w.Write([]byte(": ping\n\n"))
		}
		if rc.Flush() != nil {
			return
		}
	}
}

// userKey is the context key under which basicAuth leaves the user name.
type userKey struct{}

// basicAuth is middleware.BasicAuth: 401 with a challenge unless the
// credentials match users (compared in constant time).
func basicAuth(realm string, users map[string]string) func(http.Handler) http.Handler {
	challenge := "Basic realm=" + strconv.Quote(realm) + `, charset="UTF-8"`
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			user, pass, ok := r.BasicAuth()
			want, known := users[user]
			if ok && subtle.ConstantTimeCompare([]byte(pass), []byte(want)) == 1 && known {
				next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, user)))
				return
			}
			w.Header().Set("WWW-Authenticate", challenge)
			writeError(w, http.StatusUnauthorized, "Unauthorized")
		})
	}
}

// cors is middleware.CORS for a list of origins: it answers preflights
// with 204 and marks the other responses to an allowed origin.
func cors(origins []string, next http.Handler) http.Handler {
	allowed := func(o string) bool {
		for _, a := range origins {
			if a == "*" || a == o {
				return true
			}
		}
		return false
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" || !allowed(origin) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Add("Vary", "Origin")
		w.Header().Set("Access-Control-Allow-Origin", origin)
		m := r.Header.Get("Access-Control-Request-Method")
		if r.Method != http.MethodOptions || m == "" {
			next.ServeHTTP(w, r)
			return
		}
		if m != "GET" && m != "POST" && m != "HEAD" {
			next.ServeHTTP(w, r) // not allowed: no preflight answer
			return
		}
		w.Header().Set("Access-Control-Allow-Methods", "GET, POST")
		if rh := r.Header.Get("Access-Control-Request-Headers"); rh != "" {
			w.Header().Set("Access-Control-Allow-Headers", "Content-Type")
		}
		w.Header().Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
	})
}

// requestID is middleware.RequestID: the client's X-Request-Id when it is
// 1 to 64 visible ASCII characters, else a random one.
func requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if id == "" || len(id) > 64 || strings.IndexFunc(id, func(c rune) bool { return c <= ' ' || c >= 0x7f }) >= 0 {
			var b [8]byte
			rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r)
	})
}

// recorder remembers the status for accessLog and recoverer. Unwrap lets
// http.ResponseController reach the writer underneath; Flush is there too
// because middleware such as gzhttp asserts http.Flusher rather than use a
// ResponseController (without it the event stream would never be flushed).
type recorder struct {
	http.ResponseWriter
	status int
}

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *recorder) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

// accessLog is middleware.AccessLog: one line per request, after it,
// panics included.
func accessLog(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w}
		panicked := true
		defer func() {
			status := rec.status
			switch {
			case panicked: // no recoverer inside: net/http cuts the connection
				status = http.StatusInternalServerError
			case status == 0:
				status = http.StatusOK
			}
			log.Info("request", "method", r.Method, "target", r.RequestURI, "status", status,
				"dur", time.Since(start), "remote", r.RemoteAddr, "request_id", w.Header().Get("X-Request-Id"), "panicked", panicked)
		}()
		next.ServeHTTP(rec, r)
		panicked = false
	})
}

// recoverer is middleware.Recover: a panic is logged and answered with a
// JSON 500, unless the response had begun (then the connection is cut).
func recoverer(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler || rec.status != 0 {
				panic(http.ErrAbortHandler)
			}
			log.Error("panic", "method", r.Method, "target", r.RequestURI, "panic", v)
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusInternalServerError, "Internal Server Error")
		}()
		next.ServeHTTP(rec, r)
	})
}
