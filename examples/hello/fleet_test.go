package main

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
)

// TestFleetRoutes: with -proxy-from and -metrics, GET /whoami answers the
// address from the PROXY header in both modes, GET /metrics the statistics
// and GET /ready the readiness; a connection without a header is closed.
func TestFleetRoutes(t *testing.T) {
	*proxyFrom, *metricsFlag = "127.0.0.0/8, ::1/128", true
	defer func() { *proxyFrom, *metricsFlag = "", false }()
	compat, err := compatHandler()
	if err != nil {
		t.Fatal(err)
	}
	for mode, h := range map[string]riptide.Handler{"native": newRouter(), "compat": compat} {
		log := slog.New(slog.DiscardHandler)
		srv := &riptide.Server{Handler: h, Logger: log}
		ln, _, err := fleetListen(srv, "127.0.0.1:0", log)
		if err != nil {
			t.Fatal(err)
		}
		go srv.Serve(ln)
		defer srv.Close()
		send := func(header, path string) (int, string) {
			nc, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(10 * time.Second))
			io.WriteString(nc, header+"GET "+path+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
			if err != nil {
				return 0, err.Error()
			}
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		proxy := "PROXY TCP4 203.0.113.7 127.0.0.1 4242 8080\r\n"
		if code, body := send(proxy, "/whoami"); code != 200 || body != "203.0.113.7:4242\n" {
			t.Errorf("%s: /whoami: %d %q", mode, code, body)
		}
		if code, body := send(proxy, "/metrics"); code != 200 || !strings.Contains(body, "riptide_requests_total 1\n") {
			t.Errorf("%s: /metrics: %d %q", mode, code, body)
		}
		if code, body := send(proxy, "/ready"); code != 200 || body != "ready\n" {
			t.Errorf("%s: /ready: %d %q", mode, code, body)
		}
		if code, body := send("", "/whoami"); code != 0 {
			t.Errorf("%s: no PROXY header: %d %q, want the connection closed", mode, code, body)
		}
	}
}
