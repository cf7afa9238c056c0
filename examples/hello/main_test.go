package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/riptide-http/riptide"
)

// TestNativeRoutes serves the native router and checks every route of the
// example.
func TestNativeRoutes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &riptide.Server{Handler: newRouter()}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	do := func(method, path, body string, hdr map[string]string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	for _, tc := range []struct {
		method, path, body, want, ctype string
		hdr                             map[string]string
	}{
		{"GET", "/", "", "Hello, World!", "text/plain", nil},
		{"HEAD", "/", "", "", "text/plain", nil},
		{"OPTIONS", "/", "", "", "text/plain", nil},
		{"GET", "/json", "", `{"message":"Hello, World!"}`, "application/json", nil},
		{"POST", "/", "echo me", "echo me", "", nil},
		{"GET", "/cookie", "", "a=1\nb=2\n", "text/plain", map[string]string{"Cookie": "a=1; b=2"}},
	} {
		res, body := do(tc.method, tc.path, tc.body, tc.hdr)
		if res.StatusCode != 200 || body != tc.want || tc.ctype != "" && res.Header.Get("Content-Type") != tc.ctype {
			t.Errorf("%s %s: %d %q %q", tc.method, tc.path, res.StatusCode, body, res.Header.Get("Content-Type"))
		}
	}
	if res, body := do("POST", "/echo", "", map[string]string{"X-Test": "yes"}); res.StatusCode != 200 ||
		!strings.Contains(body, "X-Test: yes\n") {
		t.Errorf("POST /echo: %d %q", res.StatusCode, body)
	}
	for _, tc := range []struct{ method, path, allow string }{
		{"DELETE", "/", "GET, HEAD, OPTIONS, POST"},
		{"POST", "/json", "GET, HEAD, OPTIONS"},
		{"PUT", "/echo", "GET, HEAD, OPTIONS, POST"},
	} {
		if res, body := do(tc.method, tc.path, "", nil); res.StatusCode != 405 || res.Header.Get("Allow") != tc.allow || body != "method not allowed\n" {
			t.Errorf("%s %s: %d %q Allow %q, want 405 Allow %q", tc.method, tc.path, res.StatusCode, body, res.Header.Get("Allow"), tc.allow)
		}
	}
	if res, body := do("GET", "/nowhere", "", nil); res.StatusCode != 404 || body != "not found\n" {
		t.Errorf("GET /nowhere: %d %q", res.StatusCode, body)
	}

	res, err := http.Get(base + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream Content-Type %q", res.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(res.Body)
	events := 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			events++
		}
	}
	if events != 5 {
		t.Fatalf("%d events, want 5", events)
	}
}
