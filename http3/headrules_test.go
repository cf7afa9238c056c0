package http3

import (
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/quic-go/quic-go"
	qhttp3 "github.com/quic-go/quic-go/http3"
	"github.com/riptide-http/riptide"
)

// TestCompatHeadRulesMatchQuicGo: over real QUIC, the compat door answers
// as quic-go's http3.Server does to a handler that sets a Content-Length
// that is not 1*DIGIT ("+5": dropped, the body framed by the server): the
// same status, body, Content-Length and Content-Type. To a handler that
// sets Transfer-Encoding it answers as net/http's HTTP/2 server does (the
// field not sent, the Content-Type still sniffed); quic-go's server sends
// the field, and its own client refuses the response (logged should that
// change).
func TestCompatHeadRulesMatchQuicGo(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/sign", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", "+5")
		io.WriteString(w, "hello world!")
	})
	mux.HandleFunc("/te", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Transfer-Encoding", "chunked")
		io.WriteString(w, "<html><body>hi</body></html>")
	})
	saddr, _ := startServe(t, &riptide.Server{Handler: riptide.FromHTTP(mux)}, nil)
	qln, err := quic.ListenAddr("127.0.0.1:0", testTLS(t), &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	qs := &qhttp3.Server{Handler: mux, Logger: slog.New(slog.DiscardHandler)}
	go qs.ServeListener(qln)
	t.Cleanup(func() { qs.Close() })
	c := h3Client(t)
	get := func(addr, path string) []string {
		t.Helper()
		resp, err := c.Get("https://" + addr + path)
		if err != nil {
			return []string{"error: " + err.Error()}
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("GET %s from %s: body: %v", path, addr, err)
		}
		return []string{resp.Status, string(body), resp.Header.Get("Content-Length"), resp.Header.Get("Content-Type"), resp.Header.Get("Transfer-Encoding")}
	}
	te := []string{"200 OK", "<html><body>hi</body></html>", "28", "text/html; charset=utf-8", ""}
	if got := get(saddr, "/te"); !slices.Equal(got, te) {
		t.Errorf("/te: got %q, want %q", got, te)
	}
	if q := get(qln.Addr().String(), "/te"); !strings.Contains(q[0], `invalid header field name: "transfer-encoding"`) {
		t.Logf("quic-go's answer to /te changed: %q", q)
	}
	want, got := get(qln.Addr().String(), "/sign"), get(saddr, "/sign")
	if want[0] != "200 OK" {
		t.Fatalf("quic-go answered /sign with %q: the case tests nothing", want)
	}
	if !slices.Equal(got, want) {
		t.Errorf("/sign: got %q, quic-go's http3.Server %q (status, body, Content-Length, Content-Type, Transfer-Encoding)", got, want)
	}
}
