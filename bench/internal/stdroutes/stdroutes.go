// Package stdroutes builds the benchmark and probe routes as net/http
// handlers, once on http.ServeMux and once on go-chi/chi, so that net/http and
// riptide's compat mode serve byte-for-byte the same handlers.
package stdroutes

import (
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
)

// Mux returns the routes of profile p on an http.ServeMux.
func Mux(p benchserver.Profile) http.Handler {
	switch p {
	case benchserver.ProfileRouted:
		return routedMux()
	case benchserver.ProfileStatic:
		return http.FileServer(http.Dir(benchserver.DefaultStaticDir()))
	}
	m := http.NewServeMux()
	if p == benchserver.ProfileProbe {
		m.HandleFunc("GET /{$}", plaintext) // GET patterns also match HEAD
		m.HandleFunc("OPTIONS /{$}", options)
		m.HandleFunc("POST /{$}", echoBody)
		m.HandleFunc("/echo", echoHeaders) // Http11Probe cookie checks send GET /echo
		m.HandleFunc("GET /cookie", cookies)
		return m
	}
	m.HandleFunc("GET /{$}", plaintext)
	m.HandleFunc("GET /json", jsonHandler)
	m.HandleFunc("POST /echo", echoBody)
	m.HandleFunc("GET /64k", body64k)
	return m
}

// Chi returns the routes of profile p on a chi router.
func Chi(p benchserver.Profile) http.Handler {
	switch p {
	case benchserver.ProfileRouted:
		return routedChi()
	case benchserver.ProfileStatic:
		r := chi.NewRouter()
		r.Handle("/static/*", http.FileServer(http.Dir(benchserver.DefaultStaticDir())))
		return r
	}
	r := chi.NewRouter()
	if p == benchserver.ProfileProbe {
		r.Get("/", plaintext)
		r.Head("/", plaintext)
		r.Options("/", options)
		r.Post("/", echoBody)
		r.HandleFunc("/echo", echoHeaders) // any method: Http11Probe cookie checks send GET /echo
		r.Get("/cookie", cookies)
		return r
	}
	r.Get("/", plaintext)
	r.Get("/json", jsonHandler)
	r.Post("/echo", echoBody)
	r.Get("/64k", body64k)
	return r
}

var helloBytes = []byte(benchserver.Hello)

func plaintext(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h["Content-Type"] = []string{"text/plain; charset=utf-8"}
	h["Content-Length"] = []string{strconv.Itoa(len(helloBytes))}
	w.Write(helloBytes)
}

func jsonHandler(w http.ResponseWriter, _ *http.Request) {
	b, err := json.Marshal(benchserver.HelloMessage)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	w.Write(b)
}

func body64k(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h["Content-Type"] = []string{"application/octet-stream"}
	h["Content-Length"] = []string{strconv.Itoa(len(benchserver.Body64K))}
	w.Write(benchserver.Body64K)
}

func echoBody(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h := w.Header()
	h["Content-Type"] = []string{"application/octet-stream"}
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	w.Write(b)
}

func options(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h["Allow"] = []string{"GET, HEAD, OPTIONS, POST"}
	h["Content-Length"] = []string{"0"}
	w.WriteHeader(http.StatusOK)
}

// echoHeaders writes the request's Host and headers as "Name: Value" lines,
// names sorted, one line per value.
func echoHeaders(w http.ResponseWriter, r *http.Request) {
	buf := make([]byte, 0, 512)
	buf = append(buf, "Host: "...)
	buf = append(buf, r.Host...)
	buf = append(buf, '\n')
	names := make([]string, 0, len(r.Header))
	for k := range r.Header {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		for _, v := range r.Header[k] {
			buf = append(buf, k...)
			buf = append(buf, ": "...)
			buf = append(buf, v...)
			buf = append(buf, '\n')
		}
	}
	h := w.Header()
	h["Content-Type"] = []string{"text/plain; charset=utf-8"}
	h["Content-Length"] = []string{strconv.Itoa(len(buf))}
	w.Write(buf)
}

// cookies writes the parsed request cookies as "name=value" lines in the
// order they were sent.
func cookies(w http.ResponseWriter, r *http.Request) {
	buf := make([]byte, 0, 128)
	for _, c := range r.Cookies() {
		buf = append(buf, c.Name...)
		buf = append(buf, '=')
		buf = append(buf, c.Value...)
		buf = append(buf, '\n')
	}
	h := w.Header()
	h["Content-Type"] = []string{"text/plain; charset=utf-8"}
	h["Content-Length"] = []string{strconv.Itoa(len(buf))}
	w.Write(buf)
}

// H3 returns the routes of the HTTP/3 servers (quic-go's http3.Server and
// riptide's compat door over HTTP/3): the bench profile, GET
// benchserver.BulkPath and GET benchserver.AllocsPath.
func H3() http.Handler {
	m := http.NewServeMux()
	m.Handle("/", Mux(benchserver.ProfileBench))
	m.HandleFunc("GET "+benchserver.BulkPath, bulk)
	m.HandleFunc("GET "+benchserver.AllocsPath, allocs)
	return m
}

func bulk(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(benchserver.BulkSize))
	w.Write(benchserver.BulkBody())
}

func allocs(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	w.Write(benchserver.AppendHeapAllocs(nil))
}
