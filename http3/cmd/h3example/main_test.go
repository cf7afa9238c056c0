package main

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	qhttp3 "github.com/quic-go/quic-go/http3"
)

// TestExample runs the example in both modes and asks /proto over
// HTTP/1.1, HTTP/2 and HTTP/3 on the one port: each answers with its
// protocol, and the TCP responses advertise HTTP/3 on that port.
func TestExample(t *testing.T) {
	for _, mode := range []string{"native", "compat"} {
		t.Run(mode, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			addrc := make(chan string, 1)
			done := make(chan error, 1)
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			go func() {
				done <- run(ctx, "127.0.0.1:0", mode, "", "", false, log, func(a string) { addrc <- a })
			}()
			var addr string
			select {
			case addr = <-addrc:
			case err := <-done:
				t.Fatalf("run: %v", err)
			}
			_, port, _ := net.SplitHostPort(addr)
			insecure := &tls.Config{InsecureSkipVerify: true}
			h1 := &http.Transport{TLSClientConfig: insecure}
			h2 := &http.Transport{TLSClientConfig: insecure, ForceAttemptHTTP2: true}
			h3 := &qhttp3.Transport{TLSClientConfig: insecure}
			defer h1.CloseIdleConnections()
			defer h2.CloseIdleConnections()
			defer h3.Close()
			for _, c := range []struct {
				name string
				rt   http.RoundTripper
				want string
			}{{"HTTP/1.1", h1, "HTTP/1.1\n"}, {"HTTP/2", h2, "HTTP/2\n"}, {"HTTP/3", h3, "HTTP/3\n"}} {
				if c.name == "HTTP/1.1" {
					h1.TLSClientConfig.NextProtos = []string{"http/1.1"}
				}
				req, _ := http.NewRequest("GET", "https://"+addr+"/proto", nil)
				resp, err := c.rt.RoundTrip(req)
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(body) != c.want {
					t.Errorf("%s: /proto says %q, want %q", c.name, body, c.want)
				}
				alt := resp.Header.Get("Alt-Svc")
				if c.name != "HTTP/3" && alt != `h3=":`+port+`"; ma=86400` {
					t.Errorf("%s: Alt-Svc %q, want h3 on port %s", c.name, alt, port)
				}
			}
			req, _ := http.NewRequest("POST", "https://"+addr+"/", strings.NewReader("echo me"))
			resp, err := h3.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) != "echo me" {
				t.Errorf("POST / over HTTP/3: %q", body)
			}
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("run returned %v after shutdown", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("run did not return after shutdown")
			}
		})
	}
}
