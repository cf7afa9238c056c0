package riptide_test

import (
	"io"
	"net/http"
	"sort"
	"strconv"

	"github.com/riptide-http/riptide"
)

// compatProbeHandler serves the probe routes with net/http handlers on an
// http.ServeMux through riptide.FromHTTP: the compat column.
func compatProbeHandler() riptide.Handler {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) { // GET also matches HEAD
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "Hello, World!")
	})
	m.HandleFunc("OPTIONS /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Allow", "GET, HEAD, OPTIONS, POST")
		w.WriteHeader(http.StatusNoContent) // COMP-NO-CL-IN-204
	})
	m.HandleFunc("POST /{$}", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.Write(b)
	})
	m.HandleFunc("/echo", // any method: the cookie checks send GET /echo
		func(w http.ResponseWriter, r *http.Request) {
			buf := []byte("Host: " + r.Host + "\n")
			names := make([]string, 0, len(r.Header))
			for k := range r.Header {
				names = append(names, k)
			}
			sort.Strings(names)
			for _, k := range names {
				for _, v := range r.Header[k] {
					buf = append(buf, k+": "+v+"\n"...)
				}
			}
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Write(buf)
		})
	m.HandleFunc("GET /cookie", func(w http.ResponseWriter, r *http.Request) {
		var buf []byte
		for _, c := range r.Cookies() {
			buf = append(buf, c.Name+"="+c.Value+"\n"...)
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write(buf)
	})
	return riptide.FromHTTP(m)
}
