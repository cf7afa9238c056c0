package client

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/riptide-http/riptide/h1"
)

// serveLoopback serves each connection of a fresh loopback listener with
// handle, on its own goroutine, until the test ends; it returns the
// listener's address.
func serveLoopback(t *testing.T, handle func(c net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// tunnel answers a CONNECT on c (read through br) with a tunnel to addr,
// or 502 when addr cannot be reached.
func tunnel(c net.Conn, br *bufio.Reader, addr string) {
	up, err := net.Dial("tcp", addr)
	if err != nil {
		c.Write([]byte("HTTP/1.1 502 Bad Gateway\r\n\r\n"))
		return
	}
	defer up.Close()
	c.Write([]byte("HTTP/1.1 200 Connection Established\r\n\r\n"))
	go io.Copy(up, br)
	io.Copy(c, up)
}

// recordingProxy is an HTTP proxy that answers absolute-form requests
// itself ("proxied <target>") and tunnels every CONNECT to tunnelTo,
// whatever it names; it records each request line.
type recordingProxy struct {
	url *url.URL
	mu  sync.Mutex
	saw []string
}

func newRecordingProxy(t *testing.T, tunnelTo string) *recordingProxy {
	p := &recordingProxy{}
	p.url = &url.URL{Scheme: "http", Host: serveLoopback(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			r, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			p.mu.Lock()
			p.saw = append(p.saw, r.Method+" "+r.RequestURI)
			p.mu.Unlock()
			if r.Method == "CONNECT" {
				tunnel(c, br, tunnelTo)
				return
			}
			body := "proxied " + r.RequestURI
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		}
	})}
	return p
}

func (p *recordingProxy) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.saw...)
}

// get runs Do for url on c and returns the body.
func get(t *testing.T, c *Client, url string) (string, error) {
	t.Helper()
	var req Request
	var resp Response
	if err := req.SetURL(url); err != nil {
		t.Fatal(err)
	}
	err := c.Do(context.Background(), &req, &resp)
	return string(resp.Body()), err
}

// TestProxyFromEnvironment: with ProxyFunc: ProxyFromEnvironment, http
// origins go through HTTP_PROXY in absolute form, https ones through a
// CONNECT tunnel to HTTPS_PROXY, and the hosts NO_PROXY names are reached
// directly, as net/http's ProxyFromEnvironment does (the client had no way
// to read the environment).
func TestProxyFromEnvironment(t *testing.T) {
	ts, cfg, _ := tlsServer(t)
	p := newRecordingProxy(t, ts.Listener.Addr().String())
	direct := newRawServer(t, fixed(helloResp))
	t.Setenv("HTTP_PROXY", p.url.String())
	t.Setenv("HTTPS_PROXY", p.url.String())
	t.Setenv("NO_PROXY", "direct.test")
	for _, k := range []string{"http_proxy", "https_proxy", "no_proxy", "REQUEST_METHOD"} {
		t.Setenv(k, "")
	}
	c := &Client{
		ProxyFunc: ProxyFromEnvironment,
		TLSConfig: &tls.Config{RootCAs: cfg.RootCAs, ServerName: "example.com"},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == "direct.test:80" { // NO_PROXY: dialed directly
				addr = direct.addr
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
	if body, err := get(t, c, "http://origin.test/a?b=c"); err != nil || body != "proxied http://origin.test/a?b=c" {
		t.Fatalf("http://origin.test through HTTP_PROXY: %q, %v", body, err)
	}
	if body, err := get(t, c, "https://origin.test/tls"); err != nil || !strings.HasPrefix(body, "host=origin.test sni=example.com") {
		t.Fatalf("https://origin.test through HTTPS_PROXY: %q, %v", body, err)
	}
	if body, err := get(t, c, "http://direct.test/"); err != nil || body != "Hello, World!" {
		t.Fatalf("http://direct.test (NO_PROXY): %q, %v", body, err)
	}
	want := []string{"GET http://origin.test/a?b=c", "CONNECT origin.test:443"}
	if got := p.seen(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("proxy saw %q, want %q", got, want)
	}
}

// TestProxyFunc: ProxyFunc picks the proxy per origin (nil: direct) and is
// asked once per origin; its error fails that origin's requests; a scheme
// the client cannot use is refused by name.
func TestProxyFunc(t *testing.T) {
	p := newRecordingProxy(t, "")
	direct := newRawServer(t, fixed(helloResp))
	var mu sync.Mutex
	asked := map[string]int{}
	errNo := errors.New("no route for this origin")
	c := &Client{ProxyFunc: func(origin *url.URL) (*url.URL, error) {
		mu.Lock()
		asked[origin.String()]++
		mu.Unlock()
		switch origin.Hostname() {
		case "via.test":
			return p.url, nil
		case "bad.test":
			return nil, errNo
		case "ftp.test":
			return &url.URL{Scheme: "ftp", Host: "127.0.0.1:21"}, nil
		}
		return nil, nil
	}}
	for range 2 {
		if body, err := get(t, c, "http://via.test/x"); err != nil || body != "proxied http://via.test/x" {
			t.Fatalf("via.test: %q, %v", body, err)
		}
		if body, err := get(t, c, direct.url("/")); err != nil || body != "Hello, World!" {
			t.Fatalf("direct: %q, %v", body, err)
		}
	}
	if _, err := get(t, c, "http://bad.test/"); !errors.Is(err, errNo) {
		t.Fatalf("bad.test: %v, want ProxyFunc's error", err)
	}
	if _, err := get(t, c, "http://ftp.test/"); err == nil || !strings.Contains(err.Error(), "proxy scheme") {
		t.Fatalf("ftp proxy: %v, want an unsupported-scheme error", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked["http://via.test"] != 1 || asked["http://"+direct.addr] != 1 {
		t.Fatalf("ProxyFunc asked %v, want once per origin", asked)
	}
}

// socks5Server is a minimal SOCKS5 proxy (RFC 1928, CONNECT only; with
// user and pass set it requires them, RFC 1929) that connects every
// request to to, recording the address asked for.
func socks5Server(t *testing.T, user, pass, to string, asked chan<- string) string {
	return serveLoopback(t, func(c net.Conn) {
		buf := make([]byte, 512)
		if _, err := io.ReadFull(c, buf[:2]); err != nil || buf[0] != 5 {
			return
		}
		methods := buf[2 : 2+int(buf[1])]
		if _, err := io.ReadFull(c, methods); err != nil {
			return
		}
		method := byte(0)
		if user != "" {
			method = 2
		}
		if bytes.IndexByte(methods, method) < 0 {
			c.Write([]byte{5, 0xff})
			return
		}
		c.Write([]byte{5, method})
		if method == 2 {
			io.ReadFull(c, buf[:2])
			u := make([]byte, buf[1])
			io.ReadFull(c, u)
			io.ReadFull(c, buf[:1])
			pw := make([]byte, buf[0])
			io.ReadFull(c, pw)
			if string(u) != user || string(pw) != pass {
				c.Write([]byte{1, 1})
				return
			}
			c.Write([]byte{1, 0})
		}
		if _, err := io.ReadFull(c, buf[:4]); err != nil || buf[1] != 1 {
			return
		}
		var host string
		switch buf[3] {
		case 1:
			io.ReadFull(c, buf[:4])
			host = net.IP(buf[:4]).String()
		case 3:
			io.ReadFull(c, buf[:1])
			n := int(buf[0])
			io.ReadFull(c, buf[:n])
			host = string(buf[:n])
		default:
			return
		}
		io.ReadFull(c, buf[:2])
		asked <- net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(buf[:2]))))
		up, err := net.Dial("tcp", to)
		if err != nil {
			c.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0})
			return
		}
		defer up.Close()
		c.Write([]byte{5, 0, 0, 1, 127, 0, 0, 1, 0, 0})
		go io.Copy(up, c)
		io.Copy(c, up)
	})
}

// TestSOCKS5Proxy: a socks5:// Proxy (or ProxyFunc's choice) carries the
// connection through a SOCKS5 proxy, which is asked for the origin by
// name, with the URL's user info as credentials; https goes through it
// too. (A socks5 URL was taken for an HTTP proxy.)
func TestSOCKS5Proxy(t *testing.T) {
	origin := newRawServer(t, fixed(helloResp))
	asked := make(chan string, 8)
	addr := socks5Server(t, "u", "p", origin.addr, asked)
	c := &Client{Proxy: &url.URL{Scheme: "socks5", Host: addr, User: url.UserPassword("u", "p")}}
	if body, err := get(t, c, "http://origin.test:8080/"); err != nil || body != "Hello, World!" {
		t.Fatalf("through SOCKS5: %q, %v", body, err)
	}
	if got := <-asked; got != "origin.test:8080" {
		t.Fatalf("SOCKS5 proxy asked for %q, want origin.test:8080", got)
	}

	ts, cfg, _ := tlsServer(t)
	addr = socks5Server(t, "", "", ts.Listener.Addr().String(), asked)
	c = &Client{
		ProxyFunc: func(*url.URL) (*url.URL, error) { return &url.URL{Scheme: "socks5h", Host: addr}, nil },
		TLSConfig: &tls.Config{RootCAs: cfg.RootCAs, ServerName: "example.com"},
	}
	if body, err := get(t, c, "https://origin.test/"); err != nil || !strings.HasPrefix(body, "host=origin.test sni=example.com") {
		t.Fatalf("https through SOCKS5: %q, %v", body, err)
	}
	if got := <-asked; got != "origin.test:443" {
		t.Fatalf("SOCKS5 proxy asked for %q, want origin.test:443", got)
	}
}

// TestCookieJar: with a Jar, Do stores the Set-Cookie fields of responses
// (redirects followed included) and sends the jar's cookies for the URL in
// the request's one Cookie field, after a Cookie the caller set; the
// caller's Request is unchanged. (Client had no Jar.)
func TestCookieJar(t *testing.T) {
	s := newRawServer(t, func(c net.Conn, req *h1.Request, body []byte) bool {
		switch string(req.Path) {
		case "/set":
			c.Write([]byte("HTTP/1.1 200 OK\r\nSet-Cookie: a=1; Path=/\r\nSet-Cookie: b=2\r\nContent-Length: 0\r\n\r\n"))
		case "/redirect":
			c.Write([]byte("HTTP/1.1 302 Found\r\nSet-Cookie: r=3; Path=/\r\nLocation: /echo\r\nContent-Length: 0\r\n\r\n"))
		default:
			var cookies []string
			for _, h := range req.Headers {
				if h1.EqualFold(h.Name, "Cookie") {
					cookies = append(cookies, string(h.Value))
				}
			}
			v := strings.Join(cookies, " | ")
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(v), v)
		}
		return true
	})
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{Jar: jar, MaxRedirects: 3}
	if _, err := get(t, c, s.url("/set")); err != nil {
		t.Fatal(err)
	}
	var req Request
	var resp Response
	req.SetURL(s.url("/echo"))
	req.AddHeader("Cookie", "mine=0")
	hdrs := string(req.hdrs)
	if err := c.Do(context.Background(), &req, &resp); err != nil {
		t.Fatal(err)
	}
	if got := string(resp.Body()); got != "mine=0; a=1; b=2" {
		t.Fatalf("Cookie sent %q, want %q", got, "mine=0; a=1; b=2")
	}
	if string(req.hdrs) != hdrs {
		t.Fatalf("the caller's request changed: %q, was %q", req.hdrs, hdrs)
	}
	if body, err := get(t, c, s.url("/redirect")); err != nil || body != "a=1; b=2; r=3" {
		t.Fatalf("after a redirect that set r=3: Cookie %q (%v), want %q", body, err, "a=1; b=2; r=3")
	}
	if body, err := get(t, &Client{}, s.url("/echo")); err != nil || body != "" {
		t.Fatalf("without a Jar: Cookie %q (%v)", body, err)
	}
}

// TestGzipDropsEncodingFields: a body Do decoded (Gzip) comes without the
// Content-Encoding and Content-Length that described the encoded bytes,
// and ContentLength is -1, as net/http's decoded responses; the other
// fields stay and are found as before. (Content-Encoding: gzip was kept.)
func TestGzipDropsEncodingFields(t *testing.T) {
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write([]byte("decompressed!"))
	zw.Close()
	s := newRawServer(t, fixed(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Encoding: gzip\r\nX-Before: 1\r\nContent-Length: %d\r\nVary: Accept-Encoding\r\n\r\n%s", zb.Len(), zb.Bytes())))
	c := &Client{Gzip: true}
	var req Request
	var resp Response
	req.SetURL(s.url("/"))
	for range 2 {
		if err := c.Do(context.Background(), &req, &resp); err != nil {
			t.Fatal(err)
		}
		if string(resp.Body()) != "decompressed!" {
			t.Fatalf("body %q", resp.Body())
		}
		if ce, cl := resp.Header("Content-Encoding"), resp.Header("Content-Length"); ce != nil || cl != nil || resp.ContentLength() != -1 {
			t.Fatalf("decoded response: Content-Encoding %q, Content-Length %q, ContentLength() %d; want none, none, -1", ce, cl, resp.ContentLength())
		}
		var names []string
		for _, h := range resp.Headers() {
			names = append(names, string(h.Name))
		}
		if fmt.Sprint(names) != "[Content-Type X-Before Vary]" || string(resp.Header("Vary")) != "Accept-Encoding" || string(resp.head.Known(h1.HeaderContentType)) != "text/plain" {
			t.Fatalf("fields left %v", names)
		}
	}
	// DoStream does not decode: the fields stay.
	if err := c.DoStream(context.Background(), &req, &resp); err != nil {
		t.Fatal(err)
	}
	if string(resp.Header("Content-Encoding")) != "gzip" || resp.ContentLength() != int64(zb.Len()) {
		t.Fatalf("DoStream: Content-Encoding %q, ContentLength %d", resp.Header("Content-Encoding"), resp.ContentLength())
	}
	resp.BodyStream().Close()
}

// TestHTTP2OnlyServer: against a server that speaks only HTTP/2 (h2c with
// prior knowledge) and answers an HTTP/1.1 request with HTTP/2 frames (its
// SETTINGS, the server preface, and a GOAWAY; or a GOAWAY alone), Do and
// RoundTrip fail with ErrHTTP2Only, which says so, not with "server closed
// connection before responding". (A server that resets the connection
// without reading the request, as x/net/http2's does, can destroy its
// SETTINGS in the client's receive queue before they are read: the client
// then sees only the reset.)
func TestHTTP2OnlyServer(t *testing.T) {
	settings := "\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\xfa"
	goaway := "\x00\x00\x08\x07\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"
	closeAfter := func(b string) func(net.Conn, *h1.Request, []byte) bool {
		return func(c net.Conn, _ *h1.Request, _ []byte) bool {
			c.Write([]byte(b))
			return false
		}
	}
	for _, s := range []*rawServer{newRawServer(t, closeAfter(settings+goaway)), newRawServer(t, closeAfter(goaway))} {
		u := s.url("/")
		_, err := get(t, &Client{}, u)
		if !errors.Is(err, ErrHTTP2Only) || !strings.Contains(err.Error(), "HTTP/2 only") {
			t.Fatalf("Do %s: %v, want ErrHTTP2Only", u, err)
		}
		_, err = (&http.Client{Transport: &Client{}}).Get(u)
		if !errors.Is(err, ErrHTTP2Only) {
			t.Fatalf("RoundTrip %s: %v, want ErrHTTP2Only", u, err)
		}
	}
	// What is not an HTTP/2 frame is not taken for one.
	for _, b := range []string{"HTTP/1.1 200 OK\r\n", "\x00\x00\x06\x04\x00\x00\x00\x00\x01", "\x00\x00\x05\x04\x00\x00\x00\x00\x00", "\x00\x00\x06\x01\x00\x00\x00\x00\x00", "\x00\x00\x06\x04"} {
		if http2Frame([]byte(b)) {
			t.Errorf("http2Frame(%q) = true", b)
		}
	}
}
