package riptide_test

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/riptide-http/riptide"
)

// robustHTTPHandler is robustHandler written as a net/http handler, served
// through riptide.FromHTTP, so that the fuzz and soak tests also drive the
// compat door. Its responses match robustHandler's for the soak mix.
func robustHTTPHandler(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Method", r.Method)
	var n int
	var err error
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/readbody"):
		var b []byte
		b, err = io.ReadAll(r.Body)
		n = len(b)
	case strings.HasPrefix(p, "/ignore"):
	default:
		var m int64
		m, err = io.Copy(io.Discard, r.Body)
		n = int(m)
	}
	if err != nil {
		w.WriteHeader(400)
		io.WriteString(w, "body: "+err.Error()+"\n")
		return
	}
	args := len(r.URL.Query()) + len(r.Cookies())
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/stream"):
		for i := range 3 {
			fmt.Fprintf(w, "part %d of a streamed body\n", i)
			w.(http.Flusher).Flush()
		}
	case strings.HasPrefix(p, "/big"):
		w.Write(bigBody[:100<<10])
	case strings.HasPrefix(p, "/huge"):
		w.Write(bigBody)
	case strings.HasPrefix(p, "/length"):
		w.Header().Set("Content-Length", strconv.Itoa(5))
		io.WriteString(w, "fixed")
	case strings.HasPrefix(p, "/empty"):
		w.WriteHeader(204)
	default:
		fmt.Fprintf(w, "read %d body bytes, %d args\n", n, args)
	}
}

// robustAPIs are the two doors the fuzz and soak tests go through.
var robustAPIs = []struct {
	name    string
	handler riptide.Handler
}{
	{"native", riptide.HandlerFunc(robustHandler)},
	{"compat", riptide.FromHTTP(http.HandlerFunc(robustHTTPHandler))},
}
