package http3

// Interop tests: independent HTTP/3 clients — quic-go's, aioquic (Python),
// ngtcp2's gtlsclient (C) and headless Chromium, forced onto QUIC and by
// Alt-Svc discovery — against riptide's HTTP/3 server, through the native
// door and the compat door. Every case is checked twice: by the client
// (status, body, trailers) and on the server side, where the application
// records each request with the protocol it arrived over; a case passes
// only if the server saw every one of its requests over HTTP/3.
//
// A client that is not installed skips its test with the command that
// installs it; with CI=true or RIPTIDE_REQUIRE_TOOLS set (.ci/run) it fails
// instead, so that a broken install cannot pass as a skip.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The cases every client runs.
const (
	// interopBodySize is the size of the POST body the server echoes.
	interopBodySize = 200_000
	// interopStreams is the number of requests the concurrency case keeps
	// open at once on one connection.
	interopStreams = 50
	// interopTrailer is the response trailer of /trailers (besides the
	// body's digest), and interopReqTrailer the request trailer clients
	// that can send one send there.
	interopTrailer    = "x-server-trailer"
	interopReqTrailer = "x-client-trailer"
)

// interopBody is the 200 KB body of the POST case: not a repeated byte,
// so a reordering or a lost chunk shows.
var interopBody = func() []byte {
	b := make([]byte, interopBodySize)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}()

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// requireTools reports whether a missing client must fail the test
// instead of skipping it: in CI (CI=true, as .ci/run's runner sets it) or
// with RIPTIDE_REQUIRE_TOOLS set.
func requireTools() bool {
	return os.Getenv("CI") == "true" || os.Getenv("RIPTIDE_REQUIRE_TOOLS") != ""
}

// missing skips t, or fails it where tools are required, because what is
// not available.
func missing(t *testing.T, what, install string) {
	t.Helper()
	msg := fmt.Sprintf("%s not available (install: %s)", what, install)
	if requireTools() {
		t.Fatal(msg + "; CI=true or RIPTIDE_REQUIRE_TOOLS set, so a missing client is a failure")
	}
	t.Skip(msg)
}

// lookTool returns the path of an executable named name, or skips/fails t.
func lookTool(t *testing.T, name, install string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		missing(t, name, install)
	}
	return p
}

// --- the application, written once for both doors ---

// exchange is one request as the application sees it, whichever door it
// came through.
type exchange interface {
	method() string
	path() string
	// http3 reports whether the request came over HTTP/3, as the server
	// (not the client) knows it.
	http3() bool
	body() io.Reader
	// trailers are the request's trailers, once the body is read to EOF.
	trailers() [][2]string
	respond(status int, header [][2]string, body []byte, trailers [][2]string)
}

// interopApp serves the interop routes and records every request:
//
//	GET  /hello          200 "Hello, World!" (text/plain)
//	POST /echo           the body, with x-body-sha256
//	POST /trailers       the request trailers as text; response trailers
//	                     x-body-sha256 and x-server-trailer
//	GET  /c/RUN/I        answers once interopStreams requests of RUN are
//	                     in the handler at once (or 503 after 20 s)
//	GET  /proto          "h3" or "not h3" (the Alt-Svc page polls it)
//	GET  /page           the Chromium test page (testdata/interop_page.html)
//	POST /report         the page's results, handed to the test
type interopApp struct {
	mu       sync.Mutex
	h3       map[string]int // "METHOD /path" → requests that came over HTTP/3
	other    map[string]int // … and over anything else
	trailers map[string][]string
	runs     map[string]*barrier
	reports  chan []byte
	page     []byte
}

type barrier struct {
	n    int
	full chan struct{}
}

func newInteropApp(t *testing.T) *interopApp {
	page, err := os.ReadFile(filepath.Join("testdata", "interop_page.html"))
	if err != nil {
		t.Fatal(err)
	}
	return &interopApp{h3: map[string]int{}, other: map[string]int{}, trailers: map[string][]string{},
		runs: map[string]*barrier{}, reports: make(chan []byte, 4), page: page}
}

func (a *interopApp) serve(e exchange) {
	key := e.method() + " " + e.path()
	a.mu.Lock()
	if e.http3() {
		a.h3[key]++
	} else {
		a.other[key]++
	}
	a.mu.Unlock()
	var hdr [][2]string
	text := [][2]string{{"content-type", "text/plain"}}
	switch p := e.path(); {
	case p == "/hello":
		e.respond(200, text, []byte("Hello, World!"), nil)
	case p == "/proto":
		proto := "not h3"
		if e.http3() {
			proto = "h3"
		}
		e.respond(200, append(text, [2]string{"cache-control", "no-store"}), []byte(proto), nil)
	case p == "/echo" || p == "/report":
		b, err := io.ReadAll(e.body())
		if err != nil {
			e.respond(400, text, []byte(err.Error()), nil)
			return
		}
		if p == "/report" {
			a.reports <- b
			e.respond(204, hdr, nil, nil)
			return
		}
		e.respond(200, append(hdr, [2]string{"content-type", "application/octet-stream"}, [2]string{"x-body-sha256", sha256Hex(b)}), b, nil)
	case p == "/trailers":
		b, err := io.ReadAll(e.body())
		if err != nil {
			e.respond(400, text, []byte(err.Error()), nil)
			return
		}
		var got []string
		for _, f := range e.trailers() {
			got = append(got, f[0]+": "+f[1])
		}
		a.mu.Lock()
		a.trailers[key] = append(a.trailers[key], got...)
		a.mu.Unlock()
		e.respond(200, text, []byte("request trailers: "+strings.Join(got, ", ")),
			[][2]string{{"x-body-sha256", sha256Hex(b)}, {interopTrailer, "riptide-h3"}})
	case strings.HasPrefix(p, "/c/"):
		run, i, _ := strings.Cut(p[3:], "/")
		a.mu.Lock()
		b := a.runs[run]
		if b == nil {
			b = &barrier{full: make(chan struct{})}
			a.runs[run] = b
		}
		if b.n++; b.n == interopStreams {
			close(b.full)
		}
		a.mu.Unlock()
		select {
		case <-b.full:
			e.respond(200, text, []byte(fmt.Sprintf("stream %s: %d open at once", i, interopStreams)), nil)
		case <-time.After(20 * time.Second):
			e.respond(503, text, []byte(fmt.Sprintf("stream %s: fewer than %d open at once", i, interopStreams)), nil)
		}
	case p == "/page":
		e.respond(200, append(hdr, [2]string{"content-type", "text/html; charset=utf-8"}, [2]string{"cache-control", "no-store"}), a.page, nil)
	default:
		e.respond(404, text, []byte("not found"), nil)
	}
}

// counts returns how many requests for "METHOD /path" came over HTTP/3
// and over anything else.
func (a *interopApp) counts(key string) (h3, other int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.h3[key], a.other[key]
}

// wantH3 fails t unless the server saw exactly n requests for key, all
// over HTTP/3.
func (a *interopApp) wantH3(t *testing.T, key string, n int) {
	t.Helper()
	if h3, other := a.counts(key); h3 != n || other != 0 {
		t.Errorf("server side: %q came %d times over HTTP/3 and %d times over another protocol; want %d over HTTP/3", key, h3, other, n)
	}
}

// wantRunH3 checks the concurrency case's requests on the server side:
// interopStreams requests /c/run/0…, each once, over HTTP/3.
func (a *interopApp) wantRunH3(t *testing.T, run string) {
	t.Helper()
	for i := range interopStreams {
		a.wantH3(t, fmt.Sprintf("GET /c/%s/%d", run, i), 1)
	}
}

// wantReqTrailer checks that the server received the request trailer
// interopReqTrailer with value v on /trailers.
func (a *interopApp) wantReqTrailer(t *testing.T, v string) {
	t.Helper()
	a.mu.Lock()
	got := a.trailers["POST /trailers"]
	a.mu.Unlock()
	if !slices.Contains(got, interopReqTrailer+": "+v) {
		t.Errorf("server side: request trailers %q, want %s: %s", got, interopReqTrailer, v)
	}
}

var runSeq atomic.Int64

// newRun names a fresh concurrency run.
func newRun(client string) string {
	return client + strconv.FormatInt(runSeq.Add(1), 10)
}

// --- certificates ---

// interopPKI is a test CA and a server certificate it signed for
// localhost, 127.0.0.1 and ::1, written as PEM files for the clients.
type interopPKI struct {
	dir      string
	caFile   string // the CA certificate (PEM)
	certFile string // the server certificate (PEM)
	keyFile  string // its key (PEM)
	tls      tls.Certificate
	spki     string // base64 SHA-256 of the server key's SubjectPublicKeyInfo (Chromium's pin)
	caDER    []byte
}

func newInteropPKI(t *testing.T) *interopPKI {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "riptide interop test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	p := &interopPKI{dir: dir, caFile: filepath.Join(dir, "ca.pem"), certFile: filepath.Join(dir, "cert.pem"), keyFile: filepath.Join(dir, "key.pem"),
		tls: tls.Certificate{Certificate: [][]byte{der, caDER}, PrivateKey: key, Leaf: leaf}, caDER: caDER}
	spki := sha256.Sum256(leaf.RawSubjectPublicKeyInfo)
	p.spki = base64.StdEncoding.EncodeToString(spki[:])
	for _, f := range []struct {
		name, typ string
		der       []byte
	}{{p.caFile, "CERTIFICATE", caDER}, {p.certFile, "CERTIFICATE", der}, {p.keyFile, "EC PRIVATE KEY", keyDER}} {
		if err := os.WriteFile(f.name, pem.EncodeToMemory(&pem.Block{Type: f.typ, Bytes: f.der}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// pool returns a certificate pool holding the test CA.
func (p *interopPKI) pool() *x509.CertPool {
	pool := x509.NewCertPool()
	ca, _ := x509.ParseCertificate(p.caDER)
	pool.AddCert(ca)
	return pool
}

// --- listeners ---

// listenPair opens UDP sockets on 127.0.0.1 and, when six is set, on ::1,
// both on one port, with TCP listeners on the same port when tcp is set
// (Chromium's Alt-Svc case: it resolves localhost to both addresses and
// its alternative service names only a port). It retries with another
// port when one of the later sockets finds the port taken.
func listenPair(t *testing.T, six, tcp bool) (udp []net.PacketConn, tcpLns []net.Listener, port int) {
	t.Helper()
	hosts := []string{"127.0.0.1"}
	if six {
		hosts = append(hosts, "::1")
	}
	var lastErr error
	for range 50 {
		udp, tcpLns = nil, nil
		closeAll := func() {
			for _, c := range udp {
				c.Close()
			}
			for _, l := range tcpLns {
				l.Close()
			}
		}
		first, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		udp = append(udp, first)
		port = first.LocalAddr().(*net.UDPAddr).Port
		ok := true
		for _, h := range hosts {
			addr := net.JoinHostPort(h, strconv.Itoa(port))
			if h != "127.0.0.1" {
				c, err := net.ListenPacket("udp", addr)
				if err != nil {
					lastErr, ok = err, false
					break
				}
				udp = append(udp, c)
			}
			if tcp {
				l, err := net.Listen("tcp", addr)
				if err != nil {
					lastErr, ok = err, false
					break
				}
				tcpLns = append(tcpLns, l)
			}
		}
		if ok {
			t.Cleanup(closeAll)
			return udp, tcpLns, port
		}
		closeAll()
	}
	t.Fatalf("no port free on both 127.0.0.1 and ::1: %v", lastErr)
	return nil, nil, 0
}

// --- the two doors ---

// door is how the application is attached to riptide's HTTP/3 server.
type door string

const (
	doorNative door = "native"
	doorCompat door = "compat"
)

var doors = []door{doorNative, doorCompat}

// forDoors runs f as a subtest for each door.
func forDoors(t *testing.T, f func(t *testing.T, d door)) {
	for _, d := range doors {
		t.Run(string(d), func(t *testing.T) { f(t, d) })
	}
}

// interopServer is the application served over HTTP/3 through one door.
type interopServer struct {
	app  *interopApp
	pki  *interopPKI
	port int
}

// addr is the server's IPv4 UDP address.
func (s *interopServer) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// startInterop serves a fresh application through d over HTTP/3 on
// 127.0.0.1 (and ::1 with six), and with tcp over TLS (HTTP/2, HTTP/1.1)
// on the same port(s), where the server advertises HTTP/3 with Alt-Svc by
// itself.
func startInterop(t *testing.T, d door, six, tcp bool) *interopServer {
	t.Helper()
	s := &interopServer{app: newInteropApp(t), pki: newInteropPKI(t)}
	udp, tcpLns, port := listenPair(t, six, tcp)
	s.port = port
	serveDoor(t, newDoorServer(d, s.app, s.pki), udp, tcpLns)
	return s
}
