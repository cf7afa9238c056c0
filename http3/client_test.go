package http3

// The HTTP/3 client (client.go, client_stream.go) against riptide's own
// HTTP/3 server through both doors, quic-go's http3.Server and aioquic's:
// GET, a 1 MB POST, trailers both ways and 100 concurrent streams, through
// the native API (client.Request, client.Response) and RoundTrip.

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	qhttp3 "github.com/quic-go/quic-go/http3"
	"github.com/riptide-http/riptide/client"
)

// clientBody is the 1 MB body of the clients' POST case.
var clientBody = func() []byte {
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = byte(i*13 + i/509)
	}
	return b
}()

// h3Peer is an HTTP/3 server the client is checked against.
type h3Peer struct {
	base string // https://127.0.0.1:port
	tls  *tls.Config
	// saw reports, where the server can tell, how many requests for
	// "METHOD /path" it received over HTTP/3 (-1: it cannot tell).
	saw func(key string) int
	// run names a concurrency run of n requests to /c/RUN/I that the
	// server answers only once all n are open at once.
	run func(n int) string
	// runSize is the number of requests one run waits for.
	runSize int
}

// newTestClient returns an HTTP/3-only client for peer and its transport.
func newTestClient(t *testing.T, conf *tls.Config) (*client.Client, *Transport) {
	t.Helper()
	tr := &Transport{TLSConfig: conf}
	t.Cleanup(func() { tr.Close() })
	return NewClient(tr), tr
}

// closeRecorder is a request body that records its Close.
type closeRecorder struct {
	io.Reader
	closed atomic.Bool
}

func (r *closeRecorder) Close() error {
	r.closed.Store(true)
	return nil
}

// checkClientCases runs the interop cases against peer.
func checkClientCases(t *testing.T, p *h3Peer) {
	c, tr := newTestClient(t, p.tls)
	ctx := context.Background()
	var req client.Request
	var resp client.Response

	t.Run("GET", func(t *testing.T) {
		req.Reset()
		req.SetURL(p.base + "/hello")
		if err := c.Do(ctx, &req, &resp); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode() != 200 || string(resp.Body()) != "Hello, World!" || string(resp.Header("Content-Type")) != "text/plain" || resp.ProtoMajor() != 3 {
			for _, h := range resp.Headers() {
				t.Logf("%q: %q", h.Name, h.Value)
			}
			t.Errorf("GET: %d %q %s, HTTP/%d", resp.StatusCode(), resp.Body(), resp.Header("Content-Type"), resp.ProtoMajor())
		}
		if p.saw != nil && p.saw("GET /hello") != 1 {
			t.Errorf("server side: GET /hello seen %d times over HTTP/3", p.saw("GET /hello"))
		}
	})
	t.Run("POST1MB", func(t *testing.T) {
		// Bytes through Do, then a stream of unknown size through RoundTrip.
		req.Reset()
		req.SetMethod("POST")
		req.SetURL(p.base + "/echo")
		req.SetBody(clientBody)
		if err := c.Do(ctx, &req, &resp); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode() != 200 || !bytes.Equal(resp.Body(), clientBody) || string(resp.Header("X-Body-Sha256")) != sha256Hex(clientBody) {
			t.Errorf("Do POST: %d, %d bytes back, x-body-sha256 %q", resp.StatusCode(), len(resp.Body()), resp.Header("X-Body-Sha256"))
		}
		rb := &closeRecorder{Reader: bytes.NewReader(clientBody)}
		hreq, _ := http.NewRequest("POST", p.base+"/echo", rb)
		hresp, err := c.RoundTrip(hreq)
		if err != nil {
			t.Fatal(err)
		}
		if !rb.closed.Load() {
			t.Error("RoundTrip returned without closing the request body")
		}
		body, err := io.ReadAll(hresp.Body)
		hresp.Body.Close()
		if err != nil || hresp.StatusCode != 200 || !bytes.Equal(body, clientBody) || hresp.ProtoMajor != 3 {
			t.Errorf("RoundTrip POST: %v %d %s, %d bytes back", err, hresp.StatusCode, hresp.Proto, len(body))
		}
		if p.saw != nil && p.saw("POST /echo") != 2 {
			t.Errorf("server side: POST /echo seen %d times over HTTP/3", p.saw("POST /echo"))
		}
	})
	t.Run("Trailers", func(t *testing.T) {
		const sent = "a body before trailers"
		hreq, _ := http.NewRequest("POST", p.base+"/trailers", io.NopCloser(strings.NewReader(sent)))
		hreq.Trailer = http.Header{"X-Client-Trailer": {"riptide-client"}}
		hresp, err := c.RoundTrip(hreq)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(hresp.Body)
		hresp.Body.Close()
		if err != nil || hresp.StatusCode != 200 || hresp.Trailer.Get(interopTrailer) != "riptide-h3" ||
			hresp.Trailer.Get("X-Body-Sha256") != sha256Hex([]byte(sent)) || !strings.Contains(string(body), interopReqTrailer+": riptide-client") {
			t.Errorf("trailers: %v %d %q, trailers %v", err, hresp.StatusCode, body, hresp.Trailer)
		}
	})
	t.Run("Concurrent100", func(t *testing.T) {
		runs := make([]string, 100/p.runSize)
		for i := range runs {
			runs[i] = p.run(p.runSize)
		}
		var wg sync.WaitGroup
		for i := range 100 {
			wg.Go(func() {
				var req client.Request
				var resp client.Response
				req.SetURL(fmt.Sprintf("%s/c/%s/%d", p.base, runs[i/p.runSize], i%p.runSize))
				if err := c.Do(ctx, &req, &resp); err != nil {
					t.Error(err)
					return
				}
				if resp.StatusCode() != 200 {
					t.Errorf("stream %d: %d %q", i, resp.StatusCode(), resp.Body())
				}
			})
		}
		wg.Wait()
		t.Logf("100 concurrent requests over %d connection(s)", tr.Conns())
	})
}

// TestClientInteropRiptide: the client against riptide's HTTP/3 server,
// through the native and the compat door.
func TestClientInteropRiptide(t *testing.T) {
	forDoors(t, func(t *testing.T, d door) {
		s := startInterop(t, d, false, false)
		checkClientCases(t, &h3Peer{
			base: "https://" + s.addr(),
			tls:  &tls.Config{RootCAs: s.pki.pool(), ServerName: "localhost"},
			saw: func(key string) int {
				h3, other := s.app.counts(key)
				if other != 0 {
					return -other
				}
				return h3
			},
			run:     func(int) string { return newRun("h3client") },
			runSize: interopStreams,
		})
	})
}

// barriers answers the /c/RUN/I requests of each run once n of them are
// open at once.
type barriers struct {
	mu   sync.Mutex
	runs map[string]*barrier
}

func (b *barriers) wait(run string, n int) bool {
	b.mu.Lock()
	if b.runs == nil {
		b.runs = map[string]*barrier{}
	}
	r := b.runs[run]
	if r == nil {
		r = &barrier{full: make(chan struct{})}
		b.runs[run] = r
	}
	if r.n++; r.n == n {
		close(r.full)
	}
	b.mu.Unlock()
	select {
	case <-r.full:
		return true
	case <-time.After(20 * time.Second):
		return false
	}
}

// peerHandler is the interop application as a net/http handler, for
// quic-go's http3.Server; its runs wait for 100 requests.
func peerHandler(seen *sync.Map) http.Handler {
	var bs barriers
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 3 {
			n, _ := seen.LoadOrStore(r.Method+" "+r.URL.Path, new(atomic.Int64))
			n.(*atomic.Int64).Add(1)
		}
		switch p := r.URL.Path; {
		case p == "/hello":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "Hello, World!")
		case p == "/echo":
			b, _ := io.ReadAll(r.Body)
			w.Header().Set("X-Body-Sha256", sha256Hex(b))
			w.Write(b)
		case p == "/trailers":
			b, _ := io.ReadAll(r.Body)
			var got []string
			for name, vs := range r.Trailer {
				got = append(got, strings.ToLower(name)+": "+strings.Join(vs, ","))
			}
			w.Header().Set("Trailer", "X-Body-Sha256, "+interopTrailer)
			io.WriteString(w, "request trailers: "+strings.Join(got, ", "))
			w.Header().Set("X-Body-Sha256", sha256Hex(b))
			w.Header().Set(interopTrailer, "riptide-h3")
		case strings.HasPrefix(p, "/c/"):
			run, _, _ := strings.Cut(p[3:], "/")
			if !bs.wait(run, 100) {
				w.WriteHeader(503)
			}
		default:
			w.WriteHeader(404)
		}
	})
}

// TestClientInteropQuicGo: the client against quic-go's http3.Server.
func TestClientInteropQuicGo(t *testing.T) {
	pki := newInteropPKI(t)
	ln, err := quic.ListenAddr("127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pki.tls}, NextProtos: []string{"h3"}}, &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var seen sync.Map
	qs := &qhttp3.Server{Handler: peerHandler(&seen)}
	go qs.ServeListener(ln)
	t.Cleanup(func() { qs.Close() })
	var runs atomic.Int64
	checkClientCases(t, &h3Peer{
		base: "https://" + ln.Addr().String(),
		tls:  &tls.Config{RootCAs: pki.pool(), ServerName: "localhost"},
		saw: func(key string) int {
			if n, ok := seen.Load(key); ok {
				return int(n.(*atomic.Int64).Load())
			}
			return 0
		},
		run:     func(int) string { return fmt.Sprint("run", runs.Add(1)) },
		runSize: 100,
	})
}

// TestClientInteropAioquic: the client against an aioquic server
// (testdata/aioquic_server.py), run by the Python that has aioquic (the
// virtual environment .ci/run makes).
func TestClientInteropAioquic(t *testing.T) {
	py := aioquicPython(t)
	pki := newInteropPKI(t)
	cmd := exec.Command(py, filepath.Join("testdata", "aioquic_server.py"), pki.certFile, pki.keyFile, "100")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
		if t.Failed() {
			t.Logf("aioquic server stderr:\n%s", stderr.Bytes())
		}
	})
	var port int
	if _, err := fmt.Fscanf(stdout, "PORT %d\n", &port); err != nil {
		t.Fatalf("aioquic server: %v\n%s", err, stderr.Bytes())
	}
	var runs atomic.Int64
	checkClientCases(t, &h3Peer{
		base:    fmt.Sprintf("https://127.0.0.1:%d", port),
		tls:     &tls.Config{RootCAs: pki.pool(), ServerName: "localhost"},
		run:     func(int) string { return fmt.Sprint("run", runs.Add(1)) },
		runSize: 100,
	})
}

// TestClientAltSvcRiptide: a client.Client with an Alt-Svc cache meets
// riptide's server over TLS, which advertises HTTP/3 on the same port: the
// first request goes over TCP, the next over HTTP/3 (through both doors).
// An alternative that does not answer falls back to TCP at once and is
// not tried again.
func TestClientAltSvcRiptide(t *testing.T) {
	forDoors(t, func(t *testing.T, d door) {
		s := startInterop(t, d, false, true)
		conf := &tls.Config{RootCAs: s.pki.pool(), ServerName: "localhost"}
		tr := &Transport{TLSConfig: conf}
		defer tr.Close()
		c := &client.Client{TLSConfig: conf, HTTP3: &client.HTTP3{Transport: tr}}
		var req client.Request
		var resp client.Response
		get := func() (string, int) {
			t.Helper()
			req.SetURL("https://" + s.addr() + "/proto")
			if err := c.Do(context.Background(), &req, &resp); err != nil {
				t.Fatal(err)
			}
			return string(resp.Body()), resp.ProtoMajor()
		}
		if body, major := get(); body != "not h3" || major == 3 || len(resp.Header("Alt-Svc")) == 0 {
			t.Fatalf("first request: %q over HTTP/%d, Alt-Svc %q; want TCP and an offer", body, major, resp.Header("Alt-Svc"))
		}
		if body, major := get(); body != "h3" || major != 3 {
			t.Fatalf("second request: %q over HTTP/%d, want HTTP/3", body, major)
		}
		if h3, other := s.app.counts("GET /proto"); h3 != 1 || other != 1 {
			t.Fatalf("server side: /proto %d times over HTTP/3, %d over TCP; want 1 and 1", h3, other)
		}
		if n := tr.Conns(); n != 1 {
			t.Fatalf("%d HTTP/3 connections, want 1", n)
		}
		c.CloseIdleConnections()
		if n := tr.Conns(); n != 0 {
			t.Fatalf("%d HTTP/3 connections after CloseIdleConnections, want 0", n)
		}
	})
	t.Run("fallback", func(t *testing.T) {
		// A TLS server offering an alternative on a UDP port nobody
		// answers on.
		dead, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer dead.Close()
		_, port, _ := net.SplitHostPort(dead.LocalAddr().String())
		ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Alt-Svc", `h3=":`+port+`"`)
			io.WriteString(w, "tcp")
		}))
		defer ts.Close()
		conf := ts.Client().Transport.(*http.Transport).TLSClientConfig
		tr := &Transport{TLSConfig: conf, HandshakeTimeout: 200 * time.Millisecond}
		defer tr.Close()
		c := &client.Client{TLSConfig: conf, HTTP3: &client.HTTP3{Transport: tr}}
		var req client.Request
		var resp client.Response
		var tried int64
		for i := range 4 {
			// 0: the offer; 1: the attempt and the fallback; 2, 3: broken.
			if i == 2 {
				tried = tr.dials.Load()
				if tried != 1 {
					t.Fatalf("%d HTTP/3 dials after the offer, want 1", tried)
				}
			}
			req.SetURL(ts.URL + "/")
			if err := c.Do(context.Background(), &req, &resp); err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			if string(resp.Body()) != "tcp" || resp.ProtoMajor() == 3 {
				t.Fatalf("request %d: %q over HTTP/%d", i, resp.Body(), resp.ProtoMajor())
			}
		}
		if n := tr.Conns(); n != 0 {
			t.Fatalf("%d HTTP/3 connections open, want 0", n)
		}
		if n := tr.dials.Load(); n != tried {
			t.Fatalf("%d dials of the broken alternative after the first attempt, want 0", n-tried)
		}
	})
}
