package http3

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	qhttp3 "github.com/quic-go/quic-go/http3"
)

// TestInteropQuicGo: quic-go's HTTP/3 client (http3.Transport): GET, a
// 200 KB POST echoed, trailers both ways and 50 concurrent streams on one
// connection, through each door.
func TestInteropQuicGo(t *testing.T) {
	forDoors(t, func(t *testing.T, d door) {
		s := startInterop(t, d, false, false)
		tr := &qhttp3.Transport{TLSClientConfig: &tls.Config{RootCAs: s.pki.pool(), ServerName: "localhost"}}
		defer tr.Close()
		c := &http.Client{Transport: tr}
		base := "https://" + s.addr()
		do := func(req *http.Request) (*http.Response, []byte) {
			t.Helper()
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.ProtoMajor != 3 {
				t.Errorf("client side: %s", resp.Proto)
			}
			return resp, body
		}

		req, _ := http.NewRequest("GET", base+"/hello", nil)
		if resp, body := do(req); resp.StatusCode != 200 || string(body) != "Hello, World!" || resp.Header.Get("Content-Type") != "text/plain" {
			t.Errorf("GET: %d %q %v", resp.StatusCode, body, resp.Header)
		}
		s.app.wantH3(t, "GET /hello", 1)

		req, _ = http.NewRequest("POST", base+"/echo", bytes.NewReader(interopBody))
		if resp, body := do(req); resp.StatusCode != 200 || !bytes.Equal(body, interopBody) || resp.Header.Get("X-Body-Sha256") != sha256Hex(interopBody) {
			t.Errorf("POST: %d, %d bytes back (equal %v), x-body-sha256 %q", resp.StatusCode, len(body), bytes.Equal(body, interopBody), resp.Header.Get("X-Body-Sha256"))
		}
		s.app.wantH3(t, "POST /echo", 1)

		req, _ = http.NewRequest("POST", base+"/trailers", io.NopCloser(strings.NewReader("a body before trailers")))
		req.Trailer = http.Header{"X-Client-Trailer": {"quic-go"}}
		resp, body := do(req)
		if resp.StatusCode != 200 || resp.Trailer.Get(interopTrailer) != "riptide-h3" || resp.Trailer.Get("X-Body-Sha256") != sha256Hex([]byte("a body before trailers")) ||
			!strings.Contains(string(body), interopReqTrailer+": quic-go") {
			t.Errorf("trailers: %d %q, trailers %v", resp.StatusCode, body, resp.Trailer)
		}
		s.app.wantH3(t, "POST /trailers", 1)
		s.app.wantReqTrailer(t, "quic-go")

		run := newRun("quicgo")
		var wg sync.WaitGroup
		for i := range interopStreams {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := c.Get(fmt.Sprintf("%s/c/%s/%d", base, run, i))
				if err != nil {
					t.Error(err)
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || resp.ProtoMajor != 3 {
					t.Errorf("stream %d: %s %d %q", i, resp.Proto, resp.StatusCode, body)
				}
			}()
		}
		wg.Wait()
		s.app.wantRunH3(t, run)
	})
}

// pyResponse is one response as testdata/aioquic_client.py prints it.
type pyResponse struct {
	Path       string      `json:"path"`
	Status     int         `json:"status"`
	Headers    [][2]string `json:"headers"`
	Trailers   [][2]string `json:"trailers"`
	BodyLen    int         `json:"body_len"`
	BodySHA256 string      `json:"body_sha256"`
	BodyText   string      `json:"body_text"`
}

func field(fs [][2]string, name string) string {
	for _, f := range fs {
		if f[0] == name {
			return f[1]
		}
	}
	return ""
}

// aioquicPython returns a Python interpreter that can import aioquic:
// $RIPTIDE_AIOQUIC_PYTHON, the virtual environment .ci/run makes
// (~/.cache/riptide/aioquic-venv), or python3.
func aioquicPython(t *testing.T) string {
	t.Helper()
	var cands []string
	if p := os.Getenv("RIPTIDE_AIOQUIC_PYTHON"); p != "" {
		cands = append(cands, p)
	}
	if dir, err := os.UserCacheDir(); err == nil {
		cands = append(cands, filepath.Join(dir, "riptide", "aioquic-venv", "bin", "python"))
	}
	cands = append(cands, "python3")
	for _, p := range cands {
		if exec.Command(p, "-c", "import aioquic").Run() == nil {
			return p
		}
	}
	missing(t, "Python with aioquic", "python3 -m venv ~/.cache/riptide/aioquic-venv && ~/.cache/riptide/aioquic-venv/bin/pip install aioquic")
	return ""
}

// TestInteropAioquic: aioquic's HTTP/3 client (testdata/aioquic_client.py),
// each case on its own connection.
func TestInteropAioquic(t *testing.T) {
	py := aioquicPython(t)
	forDoors(t, func(t *testing.T, d door) {
		s := startInterop(t, d, false, false)
		client := func(args ...string) []pyResponse {
			t.Helper()
			cmd := exec.Command(py, append([]string{filepath.Join("testdata", "aioquic_client.py"), "127.0.0.1", fmt.Sprint(s.port), s.pki.caFile}, args...)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("aioquic %s: %v\n%s%s", args, err, out, stderr.Bytes())
			}
			var rs []pyResponse
			dec := json.NewDecoder(bytes.NewReader(out))
			for dec.More() {
				var r pyResponse
				if err := dec.Decode(&r); err != nil {
					t.Fatalf("aioquic %s: %v in %s", args, err, out)
				}
				rs = append(rs, r)
			}
			return rs
		}

		if rs := client("get"); len(rs) != 1 || rs[0].Status != 200 || rs[0].BodyText != "Hello, World!" || field(rs[0].Headers, "content-type") != "text/plain" {
			t.Errorf("GET: %+v", rs)
		}
		s.app.wantH3(t, "GET /hello", 1)

		file := filepath.Join(t.TempDir(), "body")
		if err := os.WriteFile(file, interopBody, 0o600); err != nil {
			t.Fatal(err)
		}
		sum := sha256Hex(interopBody)
		if rs := client("post", file); len(rs) != 1 || rs[0].Status != 200 || rs[0].BodyLen != interopBodySize || rs[0].BodySHA256 != sum || field(rs[0].Headers, "x-body-sha256") != sum {
			t.Errorf("POST: %+v", rs)
		}
		s.app.wantH3(t, "POST /echo", 1)

		rs := client("trailers", "aioquic")
		if len(rs) != 1 || rs[0].Status != 200 || field(rs[0].Trailers, interopTrailer) != "riptide-h3" ||
			field(rs[0].Trailers, "x-body-sha256") != sha256Hex([]byte("a body before trailers")) || !strings.Contains(rs[0].BodyText, interopReqTrailer+": aioquic") {
			t.Errorf("trailers: %+v", rs)
		}
		s.app.wantH3(t, "POST /trailers", 1)
		s.app.wantReqTrailer(t, "aioquic")

		run := newRun("aioquic")
		rs = client("concurrent", run)
		if len(rs) != interopStreams {
			t.Errorf("concurrent: %d responses, want %d", len(rs), interopStreams)
		}
		for _, r := range rs {
			if r.Status != 200 {
				t.Errorf("concurrent: %s: %d %q", r.Path, r.Status, r.BodyText)
			}
		}
		s.app.wantRunH3(t, run)
	})
}

// TestInteropNgtcp2: ngtcp2's example client gtlsclient (Debian's
// ngtcp2-client, GnuTLS), which downloads each response body into a
// directory and logs the response fields it decodes, trailers included.
// It cannot send request trailers, so its trailers case checks the
// response's.
func TestInteropNgtcp2(t *testing.T) {
	bin := lookTool(t, "gtlsclient", "apt-get install -y ngtcp2-client")
	forDoors(t, func(t *testing.T, d door) {
		s := startInterop(t, d, false, false)
		client := func(dir string, extra []string, paths ...string) string {
			t.Helper()
			args := append([]string{"--exit-on-all-streams-close", "--no-quic-dump", "--no-http-dump", "--timeout=30s", "--download=" + dir}, extra...)
			args = append(args, "127.0.0.1", fmt.Sprint(s.port))
			for _, p := range paths {
				args = append(args, "https://localhost:"+fmt.Sprint(s.port)+p)
			}
			out, err := exec.Command(bin, args...).CombinedOutput()
			if err != nil {
				t.Fatalf("gtlsclient %s: %v\n%s", args, err, out)
			}
			return string(out)
		}
		read := func(dir, name string) []byte {
			t.Helper()
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Error(err)
			}
			return b
		}

		dir := t.TempDir()
		out := client(dir, nil, "/hello")
		if got := read(dir, "hello"); string(got) != "Hello, World!" || !strings.Contains(out, "[:status: 200]") || !strings.Contains(out, "Negotiated ALPN is h3") {
			t.Errorf("GET: body %q\n%s", got, out)
		}
		s.app.wantH3(t, "GET /hello", 1)

		dir = t.TempDir()
		file := filepath.Join(t.TempDir(), "body")
		if err := os.WriteFile(file, interopBody, 0o600); err != nil {
			t.Fatal(err)
		}
		out = client(dir, []string{"-m", "POST", "-d", file}, "/echo")
		if got := read(dir, "echo"); !bytes.Equal(got, interopBody) {
			t.Errorf("POST: %d bytes back, equal %v\n%s", len(got), bytes.Equal(got, interopBody), out)
		}
		s.app.wantH3(t, "POST /echo", 1)

		dir = t.TempDir()
		file = filepath.Join(t.TempDir(), "short")
		if err := os.WriteFile(file, []byte("a body before trailers"), 0o600); err != nil {
			t.Fatal(err)
		}
		out = client(dir, []string{"-m", "POST", "-d", file}, "/trailers")
		_, trailers, _ := strings.Cut(out, "trailers started")
		if !strings.Contains(trailers, "["+interopTrailer+": riptide-h3]") || !strings.Contains(trailers, "[x-body-sha256: "+sha256Hex([]byte("a body before trailers"))+"]") {
			t.Errorf("trailers: the client logged no response trailers:\n%s", out)
		}
		s.app.wantH3(t, "POST /trailers", 1)

		run := newRun("ngtcp2")
		var paths []string
		for i := range interopStreams {
			paths = append(paths, fmt.Sprintf("/c/%s/%d", run, i))
		}
		dir = t.TempDir()
		out = client(dir, nil, paths...)
		for i := range interopStreams {
			if got := read(dir, fmt.Sprint(i)); string(got) != fmt.Sprintf("stream %d: %d open at once", i, interopStreams) {
				t.Errorf("concurrent: stream %d: %q", i, got)
			}
		}
		s.app.wantRunH3(t, run)
		if t.Failed() {
			t.Logf("gtlsclient's log:\n%s", out)
		}
	})
}

// chromiumReport is what testdata/interop_page.html POSTs to /report.
type chromiumReport struct {
	UserAgent string   `json:"userAgent"`
	Page      string   `json:"page"` // the page's nextHopProtocol
	Errors    []string `json:"errors"`
	Switched  *bool    `json:"switched"`
	Get       struct {
		Status int    `json:"status"`
		Body   string `json:"body"`
		Type   string `json:"type"`
	} `json:"get"`
	Post struct {
		Status int    `json:"status"`
		Length int    `json:"length"`
		Equal  bool   `json:"equal"`
		SHA256 string `json:"sha256"`
	} `json:"post"`
	Trailers struct {
		Status int    `json:"status"`
		Body   string `json:"body"`
	} `json:"trailers"`
	Concurrent []struct {
		Status int    `json:"status"`
		Body   string `json:"body"`
	} `json:"concurrent"`
	Protocols map[string]string `json:"protocols"`
}

// chromiumTimeout bounds one Chromium run: start, the page's requests and
// its report.
const chromiumTimeout = 90 * time.Second

// runChromium loads url in headless Chromium with a scratch HOME and
// profile (home, made by the caller so it can hold an NSS database) and
// extra flags, waits for the page's report on s, stops the browser and
// returns the report and the browser's NetLog (every event, headers
// included: how the test sees the response trailers, which fetch does
// not expose), once it holds them.
func runChromium(t *testing.T, s *interopServer, home, url string, extra ...string) (chromiumReport, string) {
	t.Helper()
	bin := chromiumPath(t)
	netlog := filepath.Join(home, "netlog.json")
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
		"--no-default-browser-check", "--disable-extensions", "--disable-background-networking", "--disable-component-update",
		"--user-data-dir=" + filepath.Join(home, "profile"), "--enable-quic",
		"--log-net-log=" + netlog, "--net-log-capture-mode=Everything"}, extra...)
	args = append(args, url)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+home)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = chromiumSysProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var rep chromiumReport
	select {
	case b := <-s.app.reports:
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Errorf("report %q: %v", b, err)
		}
	case err := <-exited:
		t.Fatalf("chromium exited before the page reported: %v\n%s", err, log.Bytes())
	case <-time.After(chromiumTimeout):
		stopChromium(cmd, exited)
		t.Fatalf("no report from the page within %s\n%s", chromiumTimeout, log.Bytes())
	}
	// The browser writes its NetLog as it goes; wait (bounded) for the
	// response trailers to be in it rather than rely on a final flush at
	// exit, which a browser slow to stop and then killed never makes.
	var b []byte
	for wait := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		b, _ = os.ReadFile(netlog)
		if bytes.Contains(b, []byte(interopTrailer+": riptide-h3")) || time.Now().After(wait) {
			break
		}
	}
	stopChromium(cmd, exited)
	if after, err := os.ReadFile(netlog); err != nil {
		t.Errorf("netlog: %v", err)
	} else if len(after) > len(b) {
		b = after
	}
	if t.Failed() {
		t.Logf("chromium's output:\n%s", log.Bytes())
	}
	return rep, string(b)
}

// chromiumPath returns the Chromium executable, or skips/fails t.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	missing(t, "chromium", "apt-get install -y chromium")
	return ""
}

// checkChromium checks a report's cases from the browser's side and the
// server's, and the response trailers in the NetLog.
func checkChromium(t *testing.T, s *interopServer, run string, rep chromiumReport, netlog string) {
	t.Helper()
	if len(rep.Errors) > 0 {
		t.Errorf("the page failed: %q", rep.Errors)
	}
	if rep.Get.Status != 200 || rep.Get.Body != "Hello, World!" || rep.Get.Type != "text/plain" {
		t.Errorf("GET: %+v", rep.Get)
	}
	if rep.Post.Status != 200 || rep.Post.Length != interopBodySize || !rep.Post.Equal || rep.Post.SHA256 != sha256Hex(interopBody) {
		t.Errorf("POST: %+v", rep.Post)
	}
	if rep.Trailers.Status != 200 {
		t.Errorf("trailers: %+v", rep.Trailers)
	}
	if !strings.Contains(netlog, interopTrailer+": riptide-h3") {
		t.Errorf("trailers: the NetLog (%d bytes) has no %s: riptide-h3 received", len(netlog), interopTrailer)
	}
	if len(rep.Concurrent) != interopStreams {
		t.Errorf("concurrent: %d responses, want %d", len(rep.Concurrent), interopStreams)
	}
	for i, r := range rep.Concurrent {
		if want := fmt.Sprintf("stream %d: %d open at once", i, interopStreams); r.Status != 200 || r.Body != want {
			t.Errorf("concurrent: stream %d: %d %q", i, r.Status, r.Body)
		}
	}
	for _, p := range []string{"/hello", "/echo", "/trailers"} {
		if rep.Protocols[p] != "h3" {
			t.Errorf("browser side: %s went over %q, want h3 (%v)", p, rep.Protocols[p], rep.Protocols)
		}
	}
	s.app.wantH3(t, "GET /hello", 1)
	s.app.wantH3(t, "POST /echo", 1)
	s.app.wantH3(t, "POST /trailers", 1)
	s.app.wantRunH3(t, run)
	s.app.wantH3(t, "POST /report", 1)
}

// TestInteropChromium: headless Chromium forced onto QUIC for the
// server's origin (--origin-to-force-quic-on), trusting its certificate
// by its key's hash (--ignore-certificate-errors-spki-list): the page and
// every fetch it makes go over HTTP/3.
func TestInteropChromium(t *testing.T) {
	chromiumPath(t)
	forDoors(t, func(t *testing.T, d door) {
		s := startInterop(t, d, false, false)
		run := newRun("chromium")
		rep, netlog := runChromium(t, s, t.TempDir(), "https://"+s.addr()+"/page?run="+run,
			"--origin-to-force-quic-on="+s.addr(), "--ignore-certificate-errors-spki-list="+s.pki.spki)
		if rep.Page != "h3" {
			t.Errorf("browser side: the page came over %q, want h3", rep.Page)
		}
		s.app.wantH3(t, "GET /page", 1)
		checkChromium(t, s, run, rep, netlog)
	})
}

// TestInteropChromiumAltSvc: headless Chromium discovers HTTP/3 by
// itself. The test CA is installed in an NSS database under a scratch
// HOME (certutil), the page is loaded from https://localhost:PORT over
// TCP (HTTP/2), whose responses carry alt-svc: h3=":PORT"; the page polls
// /proto until the browser has moved the origin to HTTP/3, then runs the
// cases, all of which must come over HTTP/3. localhost resolves to ::1
// and 127.0.0.1, so the server listens on both, TCP and UDP, on one port.
//
// Chromium's QUIC refuses a certificate that chains to a locally
// installed root ("not issued by known root": CERTIFICATE_VERIFY_FAILED
// in the NetLog, then the alternative service marked broken) unless the
// host is among those of --origin-to-force-quic-on. The test names
// localhost:1, a port nothing listens on: that allows localhost's local
// root without forcing QUIC on the server's origin, which is still
// reached over TCP first and moved to HTTP/3 by Alt-Svc alone.
func TestInteropChromiumAltSvc(t *testing.T) {
	chromiumPath(t)
	certutil := lookTool(t, "certutil", "apt-get install -y libnss3-tools")
	if c, err := net.ListenPacket("udp", "[::1]:0"); err != nil {
		missing(t, "the IPv6 loopback address ::1", "enable IPv6 on lo")
	} else {
		c.Close()
	}
	forDoors(t, func(t *testing.T, d door) {
		s := startInterop(t, d, true, true)
		home := t.TempDir()
		db := "sql:" + filepath.Join(home, ".pki", "nssdb")
		if err := os.MkdirAll(filepath.Join(home, ".pki", "nssdb"), 0o700); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"-d", db, "-N", "--empty-password"},
			{"-d", db, "-A", "-t", "C,,", "-n", "riptide interop CA", "-i", s.pki.caFile},
		} {
			if out, err := exec.Command(certutil, args...).CombinedOutput(); err != nil {
				t.Fatalf("certutil %s: %v\n%s", args, err, out)
			}
		}
		run := newRun("altsvc")
		rep, netlog := runChromium(t, s, home, fmt.Sprintf("https://localhost:%d/page?altsvc=1&run=%s", s.port, run), "--origin-to-force-quic-on=localhost:1")
		if rep.Page != "h2" {
			t.Errorf("browser side: the page came over %q, want h2 (then Alt-Svc)", rep.Page)
		}
		if h3, other := s.app.counts("GET /page"); h3 != 0 || other != 1 {
			t.Errorf("server side: the page came %d times over HTTP/3, %d over TCP; want once over TCP", h3, other)
		}
		if rep.Switched == nil || !*rep.Switched {
			t.Fatalf("the browser never moved to HTTP/3: %+v", rep)
		}
		checkChromium(t, s, run, rep, netlog)
	})
}
