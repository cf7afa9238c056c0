package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/riptide-http/riptide"
)

// -mode compat: the same routes as the native router, written as ordinary
// net/http handlers on an http.ServeMux and served through
// riptide.FromHTTP on the same engine.
func init() {
	compatHandler = func() (riptide.Handler, error) {
		return riptide.FromHTTP(compatMux()), nil
	}
}

func compatMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { // GET also serves HEAD
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "Hello, World!")
	})
	mux.HandleFunc("OPTIONS /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
	})
	mux.HandleFunc("POST /{$}", compatEchoBody)
	mux.HandleFunc("GET /json", func(w http.ResponseWriter, r *http.Request) {
		// Encoded per request.
		b, err := json.Marshal(struct {
			Message string `json:"message"`
		}{"Hello, World!"})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	})
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		// net/http keeps Host out of Header; print it first, then the
		// rest in the order Header's keys sort.
		fmt.Fprintf(w, "Host: %s\n", r.Host)
		for _, name := range sortedKeys(r.Header) {
			for _, v := range r.Header[name] {
				fmt.Fprintf(w, "%s: %s\n", name, v)
			}
		}
	})
	mux.HandleFunc("GET /whoami", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, r.RemoteAddr+"\n")
	})
	mux.HandleFunc("GET /cookie", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		for _, c := range r.Cookies() {
			fmt.Fprintf(w, "%s=%s\n", c.Name, c.Value)
		}
	})
	mux.HandleFunc("GET /stream", compatSSE)
	return mux
}

// compatEchoBody streams the request body back, with the same length when
// the request declared one.
func compatEchoBody(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	if r.ContentLength >= 0 {
		w.Header().Set("Content-Length", strconv.FormatInt(r.ContentLength, 10))
	}
	if _, err := io.Copy(w, r.Body); err != nil {
		w.WriteHeader(http.StatusBadRequest)
	}
}

// compatSSE sends five server-sent events 100 ms apart, flushing each, and
// stops early if the client goes away.
func compatSSE(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	rc := http.NewResponseController(w)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(w, "data: event %d\n\n", i)
		if rc.Flush() != nil || i == 5 {
			return
		}
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
	}
}

func sortedKeys(h http.Header) []string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
