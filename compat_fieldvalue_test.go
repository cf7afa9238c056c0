package riptide_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/riptide-http/riptide"
)

// TestCompatFieldValueNULReplacedOverHTTP1: over HTTP/1.1 a NUL in a field
// value a compat handler set, in a trailer (http.TrailerPrefix) or in a
// header, is replaced by a space as CR and LF are (RFC 9110 §5.5: a field
// value must not carry CR, LF or NUL); it went out raw in the trailer.
func TestCompatFieldValueNULReplacedOverHTTP1(t *testing.T) {
	t.Parallel()
	for _, e := range firstLineEngines {
		srv := &riptide.Server{Engine: e.engine, Handler: riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Head", "h\x00e\rad")
			io.WriteString(w, "body")
			w.(http.Flusher).Flush()
			w.Header().Set(http.TrailerPrefix+"X-Trail", "t\x00ra\nil")
		}))}
		ls := startLive(t, srv)
		got := rawAnswer(t, ls.addr, "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
		if bytes.IndexByte(got, 0) >= 0 {
			t.Errorf("%s: a NUL went out: %q", e.name, got)
		}
		for _, want := range []string{"\r\nX-Head: h e ad\r\n", "\r\nX-Trail: t ra il\r\n"} {
			if !bytes.Contains(got, []byte(want)) {
				t.Errorf("%s: %q lacks %q", e.name, got, want)
			}
		}
	}
}
