package riptide_test

// The "Upgrade: h2c" dance (HTTP2Config.H2CUpgrade): what the server does
// with the connections it takes over and with upgrade requests it cannot
// buffer.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"golang.org/x/net/http2"
)

// upgradeHead is an HTTP/1.1 request head asking for h2c; the
// HTTP2-Settings value is an empty SETTINGS payload.
func upgradeHead(method, framing string) string {
	return method + " /upgrade HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\n" +
		"Upgrade: h2c\r\nHTTP2-Settings: \r\n" + framing + "\r\n"
}

// startUpgrade dials addr and sends an upgrade request for GET /upgrade;
// after a 101 it completes the switch with the client preface and SETTINGS,
// so the connection stays open as HTTP/2.
func startUpgrade(t *testing.T, addr string) (net.Conn, *http.Response) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(c, upgradeHead("GET", "")); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode == http.StatusSwitchingProtocols {
		if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
			t.Fatal(err)
		}
		if err := http2.NewFramer(c, nil).WriteSettings(); err != nil {
			t.Fatal(err)
		}
	}
	return c, res
}

// MaxConns counts the connections the server took over for an h2c upgrade
// (issue 14.8: they left the count with the hijack, so 50 upgraded
// connections got past MaxConns=5).
func TestH2CUpgradeCountsTowardMaxConns(t *testing.T) {
	t.Parallel()
	in, _ := startRiptideH2(t, riptide.HandlerFunc(func(c *riptide.Ctx) { c.WriteString("ok") }), func(s *riptide.Server) {
		s.MaxConns = 2
		s.HTTP2.H2CUpgrade = true
	})
	var upgraded []net.Conn
	for i := 0; i < 2; i++ {
		c, res := startUpgrade(t, in.addr)
		if res.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("upgrade %d: got %d, want 101", i, res.StatusCode)
		}
		upgraded = append(upgraded, c)
	}
	plainGet := func() int {
		c, err := net.Dial("tcp", in.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if code := plainGet(); code != 503 {
		t.Fatalf("with 2 upgraded connections open and MaxConns=2: got %d, want 503", code)
	}
	for _, c := range upgraded {
		c.Close()
	}
	// Once they are gone they leave the count: new connections are served.
	for i := 0; plainGet() != 200; i++ {
		if i == 200 {
			t.Fatal("still refused after the upgraded connections closed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An upgrade request whose body the server would have to buffer beyond
// 1 MiB, or whose length is unknown, is served over HTTP/1.1 without the
// upgrade (RFC 9113 §3.2 lets a server ignore Upgrade), not refused with
// 413 (issue 18.4). Both doors.
func TestH2CUpgradeLargeBodyServedOverHTTP1(t *testing.T) {
	t.Parallel()
	const size = 1<<20 + 1
	handlers := h2BothDoors(func(c *riptide.Ctx) {
		n, err := io.Copy(io.Discard, c.Body())
		fmt.Fprintf(c, "%d %v h2=%v", n, err, c.IsHTTP2())
	}, func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "%d %v h2=%v", n, err, r.ProtoMajor == 2)
	})
	body := strings.Repeat("x", size)
	chunked := strconv.FormatInt(size, 16) + "\r\n" + body + "\r\n0\r\n\r\n"
	for name, h := range handlers {
		in, _ := startRiptideH2(t, h, func(s *riptide.Server) { s.HTTP2.H2CUpgrade = true })
		for _, tc := range []struct{ framing, body string }{
			{"Content-Length: " + strconv.Itoa(size) + "\r\n", body},
			{"Transfer-Encoding: chunked\r\n", chunked},
		} {
			c, err := net.Dial("tcp", in.addr)
			if err != nil {
				t.Fatal(err)
			}
			_ = c.SetDeadline(time.Now().Add(30 * time.Second))
			go io.WriteString(c, upgradeHead("POST", tc.framing)+tc.body)
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("%s, %q: %v", name, tc.framing, err)
			}
			got, _ := io.ReadAll(res.Body)
			c.Close()
			want := fmt.Sprintf("%d <nil> h2=false", size)
			if res.StatusCode != 200 || res.ProtoMajor != 1 || string(got) != want {
				t.Errorf("%s, upgrade with %q and a %d-byte body: got %s %d %q, want HTTP/1.1 200 %q",
					name, strings.TrimSpace(tc.framing), size, res.Proto, res.StatusCode, got, want)
			}
		}
	}
}

// Only the full RFC 7540 §3.2 form upgrades to h2c: Upgrade lists h2c,
// Connection lists both Upgrade and HTTP2-Settings, and exactly one
// HTTP2-Settings field holds base64url of whole SETTINGS entries. Anything
// else is served over HTTP/1.1 by the handler (issue 23.4): in particular
// what nginx's WebSocket pass-through forwards ("Connection: upgrade" set by
// the proxy, Upgrade and HTTP2-Settings passed through), which upgraded the
// connection behind nginx and let later requests on it past nginx's path
// rules. Both doors; run under both engines.
func TestH2CUpgradeRequiresFullForm(t *testing.T) {
	t.Parallel()
	handlers := h2BothDoors(func(c *riptide.Ctx) {
		fmt.Fprintf(c, "h2=%v %s", c.IsHTTP2(), c.Path())
	}, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "h2=%v %s", r.ProtoMajor == 2, r.URL.Path)
	})
	// AAMAAABkAAQAAP__: SETTINGS_MAX_CONCURRENT_STREAMS 100,
	// SETTINGS_INITIAL_WINDOW_SIZE 65535, as curl sends.
	const settings = "HTTP2-Settings: AAMAAABkAAQAAP__\r\n"
	for _, tc := range []struct {
		name, fields string
		upgrade      bool
	}{
		// What nginx sends upstream with proxy_set_header Upgrade
		// $http_upgrade and Connection "upgrade" (its WebSocket recipe).
		{"nginx pass-through", "Upgrade: h2c\r\n" + settings + "Connection: upgrade\r\n", false},
		{"Connection without HTTP2-Settings", "Connection: Upgrade\r\nUpgrade: h2c\r\n" + settings, false},
		{"no HTTP2-Settings field", "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n", false},
		{"two HTTP2-Settings fields", "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n" + settings + settings, false},
		{"HTTP2-Settings not base64url", "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMA+AB/\r\n", false},
		{"HTTP2-Settings not whole settings", "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAA\r\n", false},
		{"Upgrade not h2c", "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: websocket\r\n" + settings, false},
		// The full form upgrades, however the lists are spelled.
		{"full form", "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n" + settings, true},
		{"full form, split Connection", "Connection: http2-settings\r\nUpgrade: H2C\r\nConnection: upgrade\r\n" + settings, true},
		{"full form, empty settings", "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: \r\n", true},
	} {
		for door, h := range handlers {
			in, _ := startRiptideH2(t, h, func(s *riptide.Server) { s.HTTP2.H2CUpgrade = true })
			c, err := net.Dial("tcp", in.addr)
			if err != nil {
				t.Fatal(err)
			}
			_ = c.SetDeadline(time.Now().Add(30 * time.Second))
			_, _ = io.WriteString(c, "GET /admin HTTP/1.1\r\nHost: x\r\n"+tc.fields+"\r\n")
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				c.Close()
				t.Fatalf("%s, %s: %v", door, tc.name, err)
			}
			got, _ := io.ReadAll(res.Body)
			c.Close()
			if tc.upgrade {
				if res.StatusCode != http.StatusSwitchingProtocols {
					t.Errorf("%s, %s: got %d, want 101", door, tc.name, res.StatusCode)
				}
				continue
			}
			if res.StatusCode != 200 || string(got) != "h2=false /admin" {
				t.Errorf("%s, %s: got %d %q, want 200 \"h2=false /admin\" over HTTP/1.1 (no upgrade)", door, tc.name, res.StatusCode, got)
			}
		}
	}
}

// curl's "--http2" on a cleartext URL asks for the upgrade in the full
// form, and is still upgraded (the check TestH2CUpgradeRequiresFullForm
// makes does not turn away a real client). Both doors.
func TestH2CUpgradeCurl(t *testing.T) {
	t.Parallel()
	curl := curlHTTP2(t)
	handlers := h2BothDoors(func(c *riptide.Ctx) {
		fmt.Fprintf(c, "h2=%v", c.IsHTTP2())
	}, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "h2=%v", r.ProtoMajor == 2)
	})
	for door, h := range handlers {
		in, _ := startRiptideH2(t, h, func(s *riptide.Server) { s.HTTP2.H2CUpgrade = true })
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		out, err := exec.CommandContext(ctx, curl, "-sS", "--http2", "-w", " %{http_version} %{http_code}", in.url("/")).CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("%s: curl: %v\n%s", door, err, out)
		}
		if got := string(out); got != "h2=true 2 200" {
			t.Errorf("%s: curl --http2 (Upgrade: h2c): got %q, want \"h2=true 2 200\"", door, got)
		}
	}
}
