package client_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide/client"
)

// The interop tests against third-party HTTP/2 servers: nghttpd
// (nghttp2-server), h2o and nginx (nginx-light), Debian's packages, each
// started by the test on a free port with a configuration generated in
// t.TempDir() and killed after, over TLS (a self-signed certificate the
// client trusts) and h2c with prior knowledge. A peer that is not
// installed skips its subtests with the reason (fails them under
// RIPTIDE_REQUIRE_TOOLS=1, as in CI, where .ci/run installs them).
//
// Every peer serves "hello" at /, echoes a POST body at /echo and, where
// it can, sends the trailer "x-checksum: abc" after the body at
// /trailers. nginx and h2o have no echo of their own: nginx proxies /echo
// (and h2o also /trailers) to a net/http backend over HTTP/1.1, so the
// bytes still cross the peer's HTTP/2 code in both directions.

// extPeer is one third-party server set up for a mode: how to start it.
type extPeer struct {
	name string
	bin  []string // binary names looked up on PATH, /usr/sbin and /sbin
	// trailers says whether the peer can send a response trailer; why
	// not when it cannot.
	trailers string
	// start writes the peer's configuration into dir and returns its
	// command line, listening on addr; backend is a net/http server
	// (HTTP/1.1) echoing at /echo, certFile and keyFile the certificate
	// (empty for h2c).
	start func(bin, dir, addr, backend, certFile, keyFile string) []string
}

var extPeers = []extPeer{
	{
		name: "nghttpd", bin: []string{"nghttpd"}, trailers: "",
		start: func(bin, dir, addr, _, cert, key string) []string {
			_, port, _ := net.SplitHostPort(addr)
			args := []string{bin, "--address=127.0.0.1", "--htdocs=" + dir, "--echo-upload",
				"--trailer=x-checksum: abc", "--max-concurrent-streams=128", port}
			if cert == "" {
				return append(args, "--no-tls")
			}
			return append(args, key, cert)
		},
	},
	{
		name: "h2o", bin: []string{"h2o"},
		trailers: "h2o 2.2 sends no trailers: its mruby handler has no API for them and its proxy drops an HTTP/1.1 upstream's",
		start: func(bin, dir, addr, backend, cert, key string) []string {
			_, port, _ := net.SplitHostPort(addr)
			listen := "listen:\n  host: 127.0.0.1\n  port: " + port + "\n"
			if cert != "" {
				listen += "  ssl:\n    certificate-file: " + cert + "\n    key-file: " + key + "\n"
			}
			cfg := listen + `user: root
pid-file: ` + dir + `/h2o.pid
error-log: ` + dir + `/error.log
http2-max-concurrent-requests-per-connection: 128
hosts:
  default:
    paths:
      /echo:
        proxy.reverse.url: http://` + backend + `/echo
      /:
        file.dir: ` + dir + `
`
			writeFile(dir, "h2o.conf", cfg)
			return []string{bin, "-m", "master", "-c", filepath.Join(dir, "h2o.conf")}
		},
	},
	{
		name: "nginx", bin: []string{"nginx"}, trailers: "",
		start: func(bin, dir, addr, backend, cert, key string) []string {
			listen := "listen " + addr + " http2;"
			if cert != "" {
				listen = "listen " + addr + " ssl http2;\n        ssl_certificate " + cert + ";\n        ssl_certificate_key " + key + ";"
			}
			cfg := fmt.Sprintf(`user root;
daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path %[1]s/body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    http2_max_concurrent_streams 128;
    server {
        %[2]s
        root %[1]s;
        client_max_body_size 4m;
        location /echo {
            proxy_pass http://%[3]s;
            proxy_http_version 1.1;
            proxy_request_buffering off;
            proxy_buffering off;
        }
        location /trailers {
            add_trailer x-checksum abc;
            return 200 "body";
        }
    }
}
`, dir, listen, backend)
			writeFile(dir, "nginx.conf", cfg)
			return []string{bin, "-p", dir, "-c", filepath.Join(dir, "nginx.conf")}
		},
	},
}

func writeFile(dir, name, content string) {
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		panic(err)
	}
}

// lookTool finds one of names on PATH or in the sbin directories, where
// Debian puts nghttpd and nginx.
func lookTool(names []string) (string, error) {
	var err error
	for _, name := range names {
		var p string
		if p, err = exec.LookPath(name); err == nil {
			return p, nil
		}
		for _, dir := range []string{"/usr/sbin", "/sbin"} {
			if p := filepath.Join(dir, name); fileExecutable(p) {
				return p, nil
			}
		}
	}
	return "", err
}

func fileExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// TestH2ExternalPeers: GET, a 1 MB POST (echoed), response trailers where
// the peer can send them, a RoundTrip, and 100 concurrent streams on one
// connection, against nghttpd, h2o and nginx over TLS and h2c.
func TestH2ExternalPeers(t *testing.T) {
	cert, pool := testCert(t)
	for _, ep := range extPeers {
		t.Run(ep.name, func(t *testing.T) {
			bin, err := lookTool(ep.bin)
			if err != nil {
				if os.Getenv("RIPTIDE_REQUIRE_TOOLS") != "" {
					t.Fatalf("%s not installed (RIPTIDE_REQUIRE_TOOLS is set): %v", ep.name, err)
				}
				t.Skipf("%s not installed (apt-get install -y nghttp2-server h2o nginx-light): %v", ep.name, err)
			}
			for _, useTLS := range []bool{true, false} {
				mode := map[bool]string{true: "tls", false: "h2c"}[useTLS]
				t.Run(mode, func(t *testing.T) {
					p := startExtPeer(t, ep, bin, useTLS, cert, pool)
					runExtInterop(t, ep, p)
				})
			}
		})
	}
}

// startExtPeer starts ep on a free port and returns the peer, with a
// client trusting its certificate (TLS) or listing it in H2CHosts, whose
// dials are counted.
func startExtPeer(t *testing.T, ep extPeer, bin string, useTLS bool, cert tls.Certificate, pool *x509.CertPool) *extRun {
	dir := t.TempDir()
	writeFile(dir, "index.html", "hello")
	writeFile(dir, "trailers", "body")
	var certFile, keyFile string
	if useTLS {
		certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
		der, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(dir, "cert.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})))
		writeFile(dir, "key.pem", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})))
	}
	backend := httptest.NewServer(http.HandlerFunc(interopHandler))
	t.Cleanup(backend.Close)
	addr := freeAddr(t)
	args := ep.start(bin, dir, addr, backend.Listener.Addr().String(), certFile, keyFile)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = peerProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		killPeer(cmd) // the peer and its workers
		<-exited
		if t.Failed() {
			logs, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Logf("%s output:\n%.4000s\nerror.log:\n%.4000s", ep.name, out.String(), logs)
		}
	})
	// Wait for the port to accept connections (or the peer to exit).
	for {
		nc, err := net.Dial("tcp", addr)
		if err == nil {
			nc.Close()
			break
		}
		select {
		case <-exited:
			t.Fatalf("%s exited: %s", ep.name, out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	r := &extRun{base: "http://" + addr}
	r.c = &client.Client{Dial: func(ctx context.Context, network, a string) (net.Conn, error) {
		r.dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, a)
	}}
	if useTLS {
		r.base = "https://" + addr
		r.c.TLSConfig = &tls.Config{RootCAs: pool}
	} else {
		r.c.H2CHosts = []string{addr}
	}
	t.Cleanup(r.c.CloseIdleConnections)
	return r
}

// extRun is a started peer: its base URL, the client and its dials.
type extRun struct {
	base  string
	c     *client.Client
	dials atomic.Int32
}

// freeAddr returns a 127.0.0.1 address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// syncBuffer is a bytes.Buffer safe for a process's stdout and stderr.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func runExtInterop(t *testing.T, ep extPeer, p *extRun) {
	ctx := context.Background()
	var req client.Request
	var resp client.Response
	// GET.
	req.SetURL(p.base + "/index.html")
	if err := p.c.Do(ctx, &req, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode() != 200 || string(resp.Body()) != "hello" || resp.ProtoMajor() != 2 {
		t.Fatalf("GET: %d %q HTTP/%d", resp.StatusCode(), resp.Body(), resp.ProtoMajor())
	}
	// 1 MB POST, echoed, with a known length and streamed.
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16)
	req.SetURL(p.base + "/echo")
	req.SetMethod("POST")
	req.SetBody(big)
	if err := p.c.Do(ctx, &req, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode() != 200 || !bytes.Equal(resp.Body(), big) {
		t.Fatalf("POST: %d, body %d bytes, equal %v", resp.StatusCode(), len(resp.Body()), bytes.Equal(resp.Body(), big))
	}
	req.SetBodyStream(bytes.NewReader(big), -1)
	if err := p.c.Do(ctx, &req, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode() != 200 || !bytes.Equal(resp.Body(), big) {
		t.Fatalf("streamed POST: %d, body %d bytes", resp.StatusCode(), len(resp.Body()))
	}
	// Response trailers.
	if ep.trailers != "" {
		t.Logf("trailers not checked: %s", ep.trailers)
	} else {
		h2Trailers(t, p.c, p.base)
	}
	// RoundTrip through http.Client.
	hc := &http.Client{Transport: p.c}
	hresp, err := hc.Post(p.base+"/echo", "text/plain", strings.NewReader("round trip"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(hresp.Body)
	hresp.Body.Close()
	if hresp.ProtoMajor != 2 || string(b) != "round trip" {
		t.Fatalf("RoundTrip: %s %q", hresp.Proto, b)
	}
	// 100 concurrent streams, on one new connection.
	p.c.CloseIdleConnections()
	p.dials.Store(0)
	h2Concurrent(t, p.c, p.base, &p.dials)
}

// h2Trailers checks the response trailer of base/trailers: "body", then
// x-checksum: abc.
func h2Trailers(t *testing.T, c *client.Client, base string) {
	t.Helper()
	var req client.Request
	var resp client.Response
	req.SetURL(base + "/trailers")
	if err := c.Do(context.Background(), &req, &resp); err != nil {
		t.Fatal(err)
	}
	if string(resp.Body()) != "body" || string(resp.Trailer("x-checksum")) != "abc" {
		t.Fatalf("trailers: body %q trailer %q", resp.Body(), resp.Trailer("x-checksum"))
	}
}

// h2Concurrent sends 100 concurrent POSTs to base/echo, each checked
// against its echo, and checks that they took one connection (dials
// counts them).
func h2Concurrent(t *testing.T, c *client.Client, base string, dials *atomic.Int32) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 100 {
		wg.Go(func() {
			var req client.Request
			var resp client.Response
			req.SetURL(fmt.Sprintf("%s/echo?i=%d", base, i))
			req.SetMethod("POST")
			req.SetBodyString(fmt.Sprint(i))
			if err := c.Do(context.Background(), &req, &resp); err != nil {
				errs <- err
				return
			}
			if string(resp.Body()) != fmt.Sprint(i) || resp.ProtoMajor() != 2 {
				errs <- fmt.Errorf("stream %d: HTTP/%d body %q", i, resp.ProtoMajor(), resp.Body())
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// One connection serves them all: every peer takes 100+ streams
	// (TestH2PickNoDialRace: a second one was dialed when the first one's
	// SETTINGS arrived during a pick).
	if n := dials.Load(); n != 1 {
		t.Errorf("100 concurrent requests took %d connections, want 1", n)
	}
}
