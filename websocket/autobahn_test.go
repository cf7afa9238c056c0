package websocket

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/ws"
)

// autobahnSubset is the part of the Autobahn TestSuite CI runs (about a
// minute for the three doors): framing, pings, reserved bits, opcodes,
// fragmentation, UTF-8, close codes, the first limits cases, and
// permessage-deflate with each test data set and each offer (context
// takeover, window bits) on small and auto-fragmented messages. The whole suite's report is
// in bench/results/2026-12-07-autobahn/.
var autobahnSubset = []string{"1.*", "2.*", "3.*", "4.*", "5.*", "6.*", "7.*", "9.1.1", "9.2.1", "10.*", "12.1.1", "12.1.4", "12.1.11", "12.2.1", "12.3.1", "12.4.1", "12.5.1", "13.1.1", "13.2.1", "13.3.1", "13.4.1", "13.5.1", "13.6.1", "13.7.1", "13.7.11"}

// kosoku finds the kosoku command (PyPI kosoku 0.1.0, the Autobahn case
// files as a fuzzing client): $RIPTIDE_KOSOKU, the virtual environment
// .ci/run installs (os.UserCacheDir()/riptide/kosoku-venv), or PATH.
func kosoku(t *testing.T) string {
	if p := os.Getenv("RIPTIDE_KOSOKU"); p != "" {
		return p
	}
	if cache, err := os.UserCacheDir(); err == nil {
		p := filepath.Join(cache, "riptide", "kosoku-venv", "bin", "kosoku")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("kosoku"); err == nil {
		return p
	}
	msg := "kosoku (Autobahn fuzzing client) not installed: python3 -m venv ~/.cache/riptide/kosoku-venv && ~/.cache/riptide/kosoku-venv/bin/pip install kosoku==0.1.0"
	if os.Getenv("RIPTIDE_REQUIRE_TOOLS") != "" {
		t.Fatal(msg + " (RIPTIDE_REQUIRE_TOOLS is set)")
	}
	t.Skip(msg)
	return ""
}

// autobahnEcho is examples/wsecho's server: whole-message echo,
// permessage-deflate with context takeover, a 64 MiB limit.
var autobahnOpts = &Options{
	Compression: true,
	Deflate:     ws.DeflateConfig{ServerContextTakeover: true, ClientContextTakeover: true},
	ReadLimit:   64 << 20,
	CheckOrigin: func(string, string) bool { return true },
}

func wholeEcho(c *Conn) {
	defer c.Close()
	for {
		mt, msg, err := c.ReadMessage()
		if err != nil || c.WriteMessage(mt, msg) != nil {
			return
		}
	}
}

// Autobahn cases (subset) against the native door on the event-loop and
// goroutine engines, the compat door, and the event-driven mode (Serve) on
// both engines and over TLS: every case OK, NON-STRICT or INFORMATIONAL,
// in behaviour and in closing. With RIPTIDE_AUTOBAHN_FULL set to a
// directory each door runs the whole suite and its report's index.json is
// copied there as DOOR.json. kosoku 0.1.0 speaks no TLS ("invalid url
// scheme wss"), so the TLS door is reached through tlsRelay, which hands
// kosoku's bytes to the server over TLS unchanged and each side's close to
// the other.
func TestAutobahn(t *testing.T) {
	if testing.Short() {
		t.Skip("Autobahn run skipped in -short mode")
	}
	bin := kosoku(t)
	native := riptide.HandlerFunc(func(x *riptide.Ctx) {
		if c, err := Upgrade(x, autobahnOpts); err == nil {
			wholeEcho(c)
		}
	})
	// On the event loop over TLS the Peer must be event-driven.
	eventTLS := &Handler{OnMessage: func(p *Peer, mt MessageType, msg []byte) { p.WriteMessage(mt, msg) }}
	eventTLSDoor := riptide.HandlerFunc(func(x *riptide.Ctx) {
		if p, err := Serve(x, autobahnOpts, eventTLS); err == nil && p.EventDriven() != (runtime.GOOS == "linux") {
			t.Errorf("EventDriven() = %v over TLS on %s", p.EventDriven(), runtime.GOOS)
		}
	})
	for _, door := range []struct {
		name   string
		e      riptide.Engine
		h      riptide.Handler
		secure bool
	}{
		{"native-eventloop", riptide.EngineAuto, native, false},
		{"native-goroutine", riptide.EngineGoroutine, native, false},
		{"compat", riptide.EngineAuto, riptide.FromHTTP(compatHandler(autobahnOpts, wholeEcho)), false},
		// The event-driven mode (Serve): parked on the loop, and on a
		// goroutine per connection on the goroutine engine.
		{"event-eventloop", riptide.EngineAuto, eventEcho(autobahnOpts, nil, nil), false},
		{"event-goroutine", riptide.EngineGoroutine, eventEcho(autobahnOpts, nil, nil), false},
		// wss://, parked on the loop with its tls.Conn.
		{"event-eventloop-tls", riptide.EngineAuto, eventTLSDoor, true},
	} {
		t.Run(door.name, func(t *testing.T) {
			var addr string
			if door.secure {
				url, tc := serveWSS(t, &riptide.Server{Handler: door.h, Engine: door.e})
				addr = tlsRelay(t, strings.TrimSuffix(strings.TrimPrefix(url, "wss://"), "/"), tc)
			} else {
				url := serve(t, door.e, door.h)
				addr = strings.TrimSuffix(strings.TrimPrefix(url, "ws://"), "/")
			}
			out := t.TempDir()
			args := []string{"-m", "fuzzingclient", "-p", "2", "-o", out}
			limit := 5 * time.Minute
			full := os.Getenv("RIPTIDE_AUTOBAHN_FULL")
			if full == "" {
				for _, c := range autobahnSubset {
					args = append(args, "-i", c)
				}
			} else {
				limit = 30 * time.Minute
			}
			ctx, cancel := context.WithTimeout(context.Background(), limit)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, append(args, addr)...)
			cmd.Dir = out
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Logf("kosoku: %v\n%s", err, b)
			}
			checkAutobahnReport(t, filepath.Join(out, "index.json"), addr)
			if full != "" {
				copyReport(t, out, filepath.Join(full, door.name+".json"))
			}
		})
	}
}

// tlsRelay listens on loopback for kosoku's cleartext connections and
// relays each to the server at addr over TLS (trusting tc): the bytes
// either way unchanged, and when one side ends (the server's close after
// the closing handshake, or kosoku's) the other is closed. It returns the
// relay's address; it stops with the test.
func tlsRelay(t *testing.T, addr string, tc *tls.Config) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	cfg := tc.Clone()
	cfg.NextProtos = []string{"http/1.1"}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				s, err := tls.Dial("tcp", addr, cfg)
				if err != nil {
					c.Close()
					return
				}
				done := make(chan struct{}, 2)
				pipe := func(dst, src net.Conn) {
					io.Copy(dst, src)
					dst.Close()
					src.Close()
					done <- struct{}{}
				}
				go pipe(c, s)
				go pipe(s, c)
				<-done
				<-done
			}()
		}
	}()
	return ln.Addr().String()
}

// checkAutobahnReport fails the test for each case in the report whose
// behaviour or closing behaviour is not OK, NON-STRICT or INFORMATIONAL,
// and returns the number of cases.
func checkAutobahnReport(t *testing.T, path, agent string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no report: %v", err)
	}
	var idx map[string]map[string]struct {
		Behavior      string `json:"behavior"`
		BehaviorClose string `json:"behaviorClose"`
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatalf("report: %v", err)
	}
	cases := idx[agent]
	if len(cases) == 0 {
		t.Fatalf("report has no cases for %s", agent)
	}
	good := func(s string) bool { return s == "OK" || s == "NON-STRICT" || s == "INFORMATIONAL" }
	ids := make([]string, 0, len(cases))
	for id := range cases {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if c := cases[id]; !good(c.Behavior) || !good(c.BehaviorClose) {
			t.Errorf("case %s: behavior %s, close %s", id, c.Behavior, c.BehaviorClose)
		}
	}
	t.Logf("%d cases", len(cases))
	return len(cases)
}

// The client (Dial) against kosoku's fuzzing server, the same subset:
// every case OK, NON-STRICT or INFORMATIONAL. With RIPTIDE_AUTOBAHN_FULL
// set to a directory it runs the whole suite and copies the report's
// index.json there (how bench/results/2026-12-07-autobahn/client.json was
// made).
func TestAutobahnClient(t *testing.T) {
	if testing.Short() {
		t.Skip("Autobahn run skipped in -short mode")
	}
	bin := kosoku(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	out := t.TempDir()
	args := []string{"-m", "fuzzingserver", "-o", out}
	full := os.Getenv("RIPTIDE_AUTOBAHN_FULL")
	if full == "" {
		for _, c := range autobahnSubset {
			args = append(args, "-i", c)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(args, addr)...)
	cmd.Dir = out
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	for lines.Scan() && !strings.Contains(lines.Text(), "listening") {
	}
	go io.Copy(io.Discard, stdout)
	base := "ws://" + addr
	c, _, err := Dial(ctx, base+"/getCaseCount", nil)
	if err != nil {
		t.Fatalf("getCaseCount: %v", err)
	}
	_, msg, err := c.ReadMessage()
	c.Close()
	n, _ := strconv.Atoi(string(msg))
	if err != nil || n == 0 {
		t.Fatalf("getCaseCount: %q, %v", msg, err)
	}
	// The default offer: no context takeover asked either way (Autobahn's
	// 13.2, 13.5 and 13.6 need the client to offer client_no_context_takeover).
	o := &Options{Compression: true, ReadLimit: 64 << 20}
	for i := 1; i <= n; i++ {
		c, _, err := Dial(ctx, base+"/runCase?case="+strconv.Itoa(i)+"&agent=riptide", o)
		if err != nil {
			t.Errorf("case %d: %v", i, err)
			continue
		}
		wholeEcho(c)
	}
	if c, _, err := Dial(ctx, base+"/updateReports?agent=riptide", nil); err == nil {
		c.Close()
	}
	// kosoku writes the reports and exits.
	if err := cmd.Wait(); err != nil {
		t.Logf("kosoku: %v", err)
	}
	checkAutobahnReport(t, filepath.Join(out, "index.json"), "riptide")
	if full != "" {
		copyReport(t, out, filepath.Join(full, "client.json"))
	}
}

// copyReport copies kosoku's index.json from its output directory to
// path (RIPTIDE_AUTOBAHN_FULL).
func copyReport(t *testing.T, out, path string) {
	b, err := os.ReadFile(filepath.Join(out, "index.json"))
	if err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		t.Error(err)
	}
}
