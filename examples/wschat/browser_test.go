//go:build unix

package main

import (
	"bytes"
	"crypto/tls"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/testcert"
)

// browserPage opens a WebSocket to the chat's /ws, sends three messages,
// waits for the room to broadcast each back to it, and reports the
// outcome by fetching /result.
const browserPage = `<!doctype html><meta charset="utf-8"><script>
const report = (ok, detail) => fetch("/result?ok=" + ok + "&detail=" + encodeURIComponent(detail));
const sent = ["one", "two", "κόσμε three"];
const got = [];
const ws = new WebSocket("wss://" + location.host + "/ws");
ws.onopen = () => sent.forEach((m) => ws.send(m));
ws.onmessage = (e) => {
  got.push(e.data);
  if (got.length === sent.length) {
    const ok = got.every((m, i) => m === sent[i]);
    ws.close(1000);
    report(ok ? 1 : 0, JSON.stringify(got));
  }
};
ws.onerror = () => report(0, "error event");
ws.onclose = (e) => { if (got.length < sent.length) report(0, "closed " + e.code); };
</script>`

// seen is what the server saw of the /ws request and the page's result.
type seen struct {
	mu     sync.Mutex
	ws     []string // for each /ws request: "HTTP/2 CONNECT websocket" or "HTTP/1.1 GET"
	result chan url.Values
}

// wrap serves the test page and /result around the chat's handler, and
// records how /ws arrived.
func (s *seen) wrap(h riptide.Handler) riptide.Handler {
	return riptide.HandlerFunc(func(x *riptide.Ctx) {
		switch string(x.Path()) {
		case "/test":
			x.SetContentType("text/html; charset=utf-8")
			x.WriteString(browserPage)
			return
		case "/result":
			q, _ := url.ParseQuery(string(x.RawQuery()))
			select {
			case s.result <- q:
			default:
			}
			return
		case "/ws":
			proto := "HTTP/1.1"
			if x.IsHTTP2() {
				proto = "HTTP/2"
			}
			s.mu.Lock()
			s.ws = append(s.ws, proto+" "+string(x.Method())+" "+string(x.ConnectProtocol()))
			s.mu.Unlock()
		}
		h.ServeCtx(x)
	})
}

// browserTimeout bounds one Chromium run: start, page, WebSocket, report.
const browserTimeout = 60 * time.Second

// TestBrowser: headless Chromium loads a page over HTTPS from the chat
// example, opens a WebSocket to /ws, sends three messages and gets each
// back from the room. With -ws-over-h2 (EnableConnectProtocol) the
// WebSocket goes over the page's HTTP/2 connection as an extended CONNECT
// (RFC 8441), which the server's Stats count; without it Chromium opens an
// HTTP/1.1 connection and upgrades with 101. Skips when Chromium is not
// installed (unless CI=true or RIPTIDE_REQUIRE_TOOLS is set).
func TestBrowser(t *testing.T) {
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		msg := "chromium not installed (apt-get install -y chromium)"
		if os.Getenv("CI") == "true" || os.Getenv("RIPTIDE_REQUIRE_TOOLS") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	cert, err := testcert.Cert()
	if err != nil {
		t.Fatal(err)
	}
	for _, overH2 := range []bool{true, false} {
		t.Run("ws-over-h2="+strconv.FormatBool(overH2), func(t *testing.T) {
			s := &seen{result: make(chan url.Values, 1)}
			srv := newServer(s.wrap(newRoom().handler()), riptide.EngineAuto, overH2)
			srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { srv.ServeTLS(ln, "", ""); close(done) }()
			defer func() { srv.Close(); <-done }()

			home := t.TempDir()
			cmd := exec.Command(bin, "--headless=new", "--no-sandbox", "--ignore-certificate-errors",
				"--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
				"--disable-extensions", "--disable-background-networking", "--disable-component-update",
				"--user-data-dir="+filepath.Join(home, "profile"), "https://"+ln.Addr().String()+"/test")
			cmd.Env = append(os.Environ(), "HOME="+home)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			defer func() {
				// The browser and its helpers, by process group.
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-exited
			}()
			var q url.Values
			select {
			case q = <-s.result:
			case err := <-exited:
				t.Fatalf("chromium exited before the page reported: %v\n%s", err, out.Bytes())
			case <-time.After(browserTimeout):
				t.Fatalf("no report from the page within %s\n%s", browserTimeout, out.Bytes())
			}
			if q.Get("ok") != "1" {
				t.Errorf("the page: ok=%s, %s", q.Get("ok"), q.Get("detail"))
			}
			s.mu.Lock()
			ws := s.ws
			s.mu.Unlock()
			var st riptide.Stats
			srv.Stats(&st)
			want := "HTTP/1.1 GET "
			if overH2 {
				want = "HTTP/2 CONNECT websocket"
			}
			if len(ws) != 1 || ws[0] != want {
				t.Errorf("/ws requests %q, want one %q", ws, want)
			}
			switch {
			case overH2 && st.H2ExtendedConnects != 1:
				t.Errorf("Stats.H2ExtendedConnects %d, want 1", st.H2ExtendedConnects)
			case !overH2 && (st.H2ExtendedConnects != 0 || st.Hijacked != 1):
				t.Errorf("Stats: %d extended CONNECTs, %d hijacked; want 0 and the one 101 upgrade", st.H2ExtendedConnects, st.Hijacked)
			}
			t.Logf("/ws: %q; stats: %d HTTP/2 streams, %d extended CONNECTs, %d hijacked", ws, st.H2Streams, st.H2ExtendedConnects, st.Hijacked)
		})
	}
}
