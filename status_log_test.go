package riptide

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// TestSuperfluousStatusLogged: a status set after the first write is
// ignored and logged once per response on the Server's Logger, naming the
// handler's line, on both doors and over HTTP/1.1 and HTTP/2 (h2c); it was
// dropped without a word. Setting the status already sent logs nothing on
// the native door.
func TestSuperfluousStatusLogged(t *testing.T) {
	t.Parallel()
	native := HandlerFunc(func(c *Ctx) {
		c.WriteString("body")
		c.SetStatus(200) // the status sent: not logged
		c.SetStatus(500)
		c.SetStatus(502)
	})
	compat := FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("body"))
		w.WriteHeader(500)
		w.WriteHeader(502)
	}))
	for _, door := range []struct {
		name, api string
		h         Handler
	}{{"native", "Ctx.SetStatus", native}, {"compat", "ResponseWriter.WriteHeader", compat}} {
		for _, h2 := range []bool{false, true} {
			t.Run(door.name+map[bool]string{false: "/http1", true: "/h2c"}[h2], func(t *testing.T) {
				logs := new(syncBuffer)
				srv := &Server{Handler: door.h, Logger: slog.New(slog.NewTextHandler(logs, nil)), HTTP2: &HTTP2Config{H2C: true}}
				ts := serveTest(t, srv, testServeOptions{})
				tr := &http.Transport{}
				if h2 {
					tr.Protocols = new(http.Protocols)
					tr.Protocols.SetUnencryptedHTTP2(true)
				}
				defer tr.CloseIdleConnections()
				for range 2 {
					res, err := (&http.Client{Transport: tr}).Get("http://" + ts.Addr + "/")
					if err != nil {
						t.Fatal(err)
					}
					body, _ := io.ReadAll(res.Body)
					res.Body.Close()
					if res.StatusCode != 200 || string(body) != "body" || res.ProtoMajor != map[bool]int{false: 1, true: 2}[h2] {
						t.Fatalf("%s %d %q, want 200 body", res.Proto, res.StatusCode, body)
					}
				}
				ts.Stop(t)
				out := logs.String()
				lines := strings.Count(out, "superfluous status")
				if lines != 2 {
					t.Fatalf("%d superfluous-status lines for 2 responses, want 2:\n%s", lines, out)
				}
				for _, want := range []string{"api=" + door.api, "status=200", "ignored=500", "TestSuperfluousStatusLogged", "status_log_test.go:"} {
					if !strings.Contains(out, want) {
						t.Errorf("log lacks %q:\n%s", want, out)
					}
				}
			})
		}
	}
}
