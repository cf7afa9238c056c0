package riptide

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// RFC 9110 §9.3.2: HEAD gets the headers GET would get (Content-Length
// included) and no body; the connection stays usable.
func TestHEAD(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, nil, hello)
	rc := dial(t, addr)
	rc.send("HEAD / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n")
	res, body := rc.resp("HEAD")
	if res.StatusCode != 200 || res.ContentLength != 13 || body != "" {
		t.Fatalf("HEAD: %d len=%d %q", res.StatusCode, res.ContentLength, body)
	}
	if _, body := rc.resp("GET"); body != "Hello, World!" {
		t.Fatalf("GET after HEAD: %q", body)
	}
}

// Connection: close both ways, HTTP/1.0 keep-alive rules (RFC 9112 §9.3).
func TestConnectionClose(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, nil, func(c *Ctx) {
		if string(c.Path()) == "/close" {
			c.SetHeader("Connection", "close")
		}
		c.WriteString("ok")
	})
	for _, tc := range []struct {
		name, req string
		close     bool
		header    string
	}{
		{"client Connection: close", "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", true, "close"},
		{"handler Connection: close", "GET /close HTTP/1.1\r\nHost: x\r\n\r\n", true, "close"},
		{"HTTP/1.1 default keep-alive", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", false, ""},
		{"HTTP/1.0 default close", "GET / HTTP/1.0\r\n\r\n", true, "close"},
		{"HTTP/1.0 keep-alive", "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", false, "keep-alive"},
	} {
		rc := dial(t, addr)
		rc.send(tc.req)
		res, body := rc.resp("GET")
		// net/http's reader removes "Connection: close" and reports it as Close.
		if body != "ok" || res.Close != tc.close || tc.header == "keep-alive" && res.Header.Get("Connection") != tc.header {
			t.Errorf("%s: body %q Close=%v Connection %q, want %q", tc.name, body, res.Close, res.Header.Get("Connection"), tc.header)
		}
		if !tc.close {
			rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			if _, body := rc.resp("GET"); body != "ok" {
				t.Errorf("%s: second request got %q", tc.name, body)
			}
		} else if !rc.closed() {
			t.Errorf("%s: connection not closed", tc.name)
		}
	}
}

// Streaming: each Flush reaches the client while the handler is still
// running (server-sent events), on the handler's own goroutine.
func TestStreamingFlush(t *testing.T) {
	t.Parallel()
	step := make(chan struct{})
	_, addr := startServer(t, nil, func(c *Ctx) {
		c.SetHeader("Content-Type", "text/event-stream")
		for i := 0; i < 3; i++ {
			c.WriteString("data: tick\n\n")
			if err := c.Flush(); err != nil {
				t.Error(err)
			}
			<-step // the client must have seen the event for us to go on
		}
	})
	rc := dial(t, addr)
	rc.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
	res, err := http.ReadResponse(rc.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.TransferEncoding) != 1 || res.TransferEncoding[0] != "chunked" {
		t.Fatalf("streamed response framing %v, want chunked", res.TransferEncoding)
	}
	br := bufio.NewReader(res.Body)
	for i := 0; i < 3; i++ {
		line, err := br.ReadString('\n')
		if err != nil || line != "data: tick\n" {
			t.Fatalf("event %d: %q %v", i, line, err)
		}
		br.ReadString('\n')
		step <- struct{}{}
	}
	if rest, _ := io.ReadAll(br); len(rest) != 0 {
		t.Fatalf("trailing %q", rest)
	}
}

// Automatic framing: a small body gets Content-Length, a large one is
// chunked, a declared length streams raw; HTTP/1.0 streams until close.
func TestResponseFraming(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("b", 3*DefaultWriteBufferSize)
	_, addr := startServer(t, nil, func(c *Ctx) {
		switch string(c.Path()) {
		case "/small":
			c.WriteString("small")
		case "/big":
			for i := 0; i < len(big); i += 1000 {
				c.WriteString(big[i:min(i+1000, len(big))])
			}
		case "/declared":
			c.SetContentLength(int64(len(big)))
			c.WriteString(big)
		case "/bigwrite":
			c.Write([]byte(big))
		case "/empty":
		}
	})
	for _, tc := range []struct {
		path, proto string
		cl          int64
		te          string
		body        string
	}{
		{"/small", "1.1", 5, "", "small"},
		{"/big", "1.1", -1, "chunked", big},
		{"/bigwrite", "1.1", -1, "chunked", big},
		{"/declared", "1.1", int64(len(big)), "", big},
		{"/empty", "1.1", 0, "", ""},
		{"/big", "1.0", -1, "", big},
	} {
		rc := dial(t, addr)
		rc.send("GET " + tc.path + " HTTP/" + tc.proto + "\r\nHost: x\r\n\r\n")
		res, body := rc.resp("GET")
		te := strings.Join(res.TransferEncoding, ",")
		if res.ContentLength != tc.cl || te != tc.te || body != tc.body {
			t.Errorf("%s HTTP/%s: len=%d te=%q body %d bytes; want len=%d te=%q %d bytes",
				tc.path, tc.proto, res.ContentLength, te, len(body), tc.cl, tc.te, len(tc.body))
		}
	}
}

// RFC 9110 §6.5: trailers after a chunked body, with the Trailer header.
func TestResponseTrailers(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, nil, func(c *Ctx) {
		c.AddHeader("Trailer", "X-Checksum")
		c.WriteString("body")
		c.SetTrailer("X-Checksum", "abc")
	})
	res, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(b) != "body" || res.Trailer.Get("X-Checksum") != "abc" {
		t.Fatalf("body %q trailer %v", b, res.Trailer)
	}
}

// RFC 9110 §6.5.1: fields that frame, route, authenticate or control a
// message (net/http's list, and If-* conditionals) are never sent as
// trailers, by either door, whether announced in Trailer or not. The rest
// of the trailers still go out.
func TestForbiddenTrailersDropped(t *testing.T) {
	t.Parallel()
	forbidden := []string{"Content-Length", "transfer-encoding", "Host", "Authorization", "Trailer", "If-Match", "Content-Type"}
	native := func(c *Ctx) {
		c.AddHeader("Trailer", "X-Ok, Content-Length")
		c.WriteString("body")
		for _, name := range forbidden {
			c.SetTrailer(name, "7")
		}
		c.SetTrailer("X-Ok", "1")
	}
	compat := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Ok, Content-Length, Host")
		w.Write([]byte("body"))
		for _, name := range forbidden {
			if name != "Trailer" { // that would replace the declaration
				w.Header().Set(name, "7") // for the declared ones
			}
			w.Header().Set(http.TrailerPrefix+name, "7")
		}
		w.Header().Set("X-Ok", "1")
	})
	_, nativeAddr := startServer(t, nil, native)
	for door, addr := range map[string]string{"native": nativeAddr, "compat": serveCompat(t, compat)} {
		rc := dial(t, addr)
		rc.send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		raw, _ := io.ReadAll(rc.br)
		_, trailers, ok := strings.Cut(string(raw), "\r\n0\r\n")
		if !ok {
			t.Fatalf("%s: no chunked body in %q", door, raw)
		}
		if trailers != "X-Ok: 1\r\n\r\n" {
			t.Errorf("%s: trailer section %q, want only X-Ok", door, trailers)
		}
	}
}

// Response header injection (CR, LF, NUL in a value; a bad name) is refused
// with a 500, not sent.
func TestHeaderInjection(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, nil, func(c *Ctx) {
		switch string(c.Path()) {
		case "/value":
			c.SetHeader("X-Evil", "a\r\nSet-Cookie: pwned=1")
		case "/nul":
			c.SetHeaderBytes("X-Evil", []byte("a\x00b"))
		case "/name":
			c.AddHeader("X Evil", "v")
		}
		c.WriteString("handler body")
	})
	rc := dial(t, addr)
	for _, p := range []string{"/value", "/nul", "/name"} {
		rc.send("GET " + p + " HTTP/1.1\r\nHost: x\r\n\r\n")
		res, body := rc.resp("GET")
		if res.StatusCode != 500 || res.Header.Get("Set-Cookie") != "" || strings.Contains(body, "handler body") {
			t.Errorf("%s: got %d %v %q", p, res.StatusCode, res.Header, body)
		}
	}
}

// 1xx interim responses (RFC 9110 §15.2), e.g. 103 Early Hints.
func TestInformational(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, nil, func(c *Ctx) {
		c.SetHeader("Link", "</style.css>; rel=preload")
		if err := c.WriteInformational(103); err != nil {
			t.Error(err)
		}
		c.WriteString("final")
	})
	rc := dial(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	head, _ := rc.br.ReadString('\n')
	if head != "HTTP/1.1 103 Early Hints\r\n" {
		t.Fatalf("first line %q", head)
	}
	for {
		l, _ := rc.br.ReadString('\n')
		if l == "\r\n" {
			break
		}
	}
	if res, body := rc.resp("GET"); res.StatusCode != 200 || body != "final" {
		t.Fatalf("final: %d %q", res.StatusCode, body)
	}
}

// The Date header is present, well formed, and the Server header is sent
// when configured.
func TestDateAndServerHeaders(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, &Server{Name: "riptide-test"}, hello)
	rc := dial(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	res, _ := rc.resp("GET")
	d, err := http.ParseTime(res.Header.Get("Date"))
	if err != nil || time.Since(d) > time.Hour || time.Until(d) > time.Hour {
		t.Fatalf("Date %q: %v", res.Header.Get("Date"), err)
	}
	if res.Header.Get("Server") != "riptide-test" {
		t.Fatalf("Server %q", res.Header.Get("Server"))
	}
}

// The handler may replace Date and Server, and SetHeader replaces while
// AddHeader appends.
func TestHeaderSetAddDel(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, &Server{Name: "default"}, func(c *Ctx) {
		c.SetHeader("Server", "mine")
		c.SetHeader("X-A", "1")
		c.SetHeader("x-a", "2")
		c.AddHeader("Set-Cookie", "a=1")
		c.AddHeader("Set-Cookie", "b=2")
		c.AddHeader("X-Gone", "1")
		c.DelHeader("X-GONE")
	})
	rc := dial(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	res, _ := rc.resp("GET")
	h := res.Header
	if h.Get("Server") != "mine" || len(h["Server"]) != 1 || h.Get("X-A") != "2" || len(h["X-A"]) != 1 ||
		len(h["Set-Cookie"]) != 2 || h.Get("X-Gone") != "" {
		t.Fatalf("headers %v", h)
	}
}

// DelHeader and SetContentType remove the fields of that exact name only:
// not one whose name the name is a prefix of or extends, nor one whose
// value holds the name and a colon; a name with a colon matches nothing.
func TestDelHeaderExact(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, nil, func(c *Ctx) {
		c.SetHeader("X-A", "1")
		c.SetHeader("X-AB", "2")
		c.SetHeader("X", "A: 3")
		c.SetHeader("X-A-B", "4")
		c.AddHeader("x-a", "5")
		c.SetHeader("content-type", "text/html")
		c.AddHeader("Content-Type", "text/css")
		c.DelHeader("X-A")
		c.DelHeader("X: A")
		c.DelHeader("X-AB:")
		c.SetContentType("text/plain")
		var b strings.Builder
		for k, v := range c.ResponseHeaders {
			b.WriteString(string(k) + "=" + string(v) + ";")
		}
		c.WriteString(b.String())
	})
	rc := dial(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	res, body := rc.resp("GET")
	if want := "X-AB=2;X=A: 3;X-A-B=4;Content-Type=text/plain;"; body != want || res.Header.Get("Content-Type") != "text/plain" {
		t.Fatalf("headers %q (Content-Type %q), want %q", body, res.Header["Content-Type"], want)
	}
}

// SetContentType refuses a value with a control byte as SetHeader does:
// the response becomes a 500.
func TestSetContentTypeInvalid(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, nil, func(c *Ctx) {
		c.SetContentType("text/plain\r\nX-Injected: 1")
		c.WriteString("body")
	})
	rc := dial(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	res, _ := rc.resp("GET")
	if res.StatusCode != 500 || res.Header.Get("X-Injected") != "" {
		t.Fatalf("status %d, headers %v", res.StatusCode, res.Header)
	}
}

// Query arguments and cookies are parsed without copying unless decoding
// is needed.
func TestQueryAndCookies(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, nil, func(c *Ctx) {
		c.Write(c.QueryArg("a"))
		c.WriteString("|")
		c.Write(c.QueryArg("b c"))
		c.WriteString("|")
		c.Write(c.Cookie("sid"))
		for k, v := range c.Cookies() {
			c.WriteString("|")
			c.Write(k)
			c.WriteString("=")
			c.Write(v)
		}
	})
	rc := dial(t, addr)
	rc.send("GET /?a=1&b+c=x%20y%2B&a=2 HTTP/1.1\r\nHost: x\r\nCookie: sid=\"42\"; theme=dark\r\nCookie: z=9\r\n\r\n")
	if _, body := rc.resp("GET"); body != `1|x y+|42|sid=42|theme=dark|z=9` {
		t.Fatalf("got %q", body)
	}
}

// An invalid trailer cannot become a 500 any more (the head is out), so
// the body is cut: the client must not see a complete response.
func TestBadTrailerCutsBody(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, nil, func(c *Ctx) {
		c.WriteString("body")
		c.Flush()
		c.SetTrailer("X-Evil", "a\r\nInjected: 1")
	})
	rc := dial(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if res, err := readHTTP(rc); err == nil {
		t.Fatalf("complete response %d despite an invalid trailer", res.StatusCode)
	}
}

// On a body framed by Content-Length no trailer is sent, so an invalid
// one is dropped with the rest: the response is complete and the
// connection stays for the next request.
func TestBadTrailerDroppedWithLength(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, nil, func(c *Ctx) {
		c.SetContentLength(4)
		c.WriteString("body")
		c.Flush()
		c.SetTrailer("X-Evil", "a\r\nInjected: 1")
	})
	rc := dial(t, addr)
	for i := range 2 {
		rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		if res, body := rc.resp("GET"); res.StatusCode != 200 || body != "body" || res.Close {
			t.Fatalf("request %d: %d %q close=%v, want 200 \"body\" kept alive", i, res.StatusCode, body, res.Close)
		}
	}
}

// TestHeaderFieldsDel checks the field store under the header methods:
// deleting a name removes each of its fields, whatever the case, keeps the
// others in order and leaves the buffer holding only live fields, so that
// setting one field again and again does not grow it.
func TestHeaderFieldsDel(t *testing.T) {
	t.Parallel()
	var h headerFields
	addField(&h, "Set-Cookie", "a=1")
	addField(&h, "X-A", "1")
	addField(&h, "set-cookie", []byte("b=2"))
	addField(&h, "X-B", "")
	h.del("SET-COOKIE")
	if got, want := string(h.appendLines(nil)), "X-A: 1\r\nX-B: \r\n"; got != want {
		t.Fatalf("after del: %q, want %q", got, want)
	}
	if got, want := len(h.buf), len("X-A1X-B"); got != want {
		t.Fatalf("buffer holds %d bytes, want %d (live fields only)", got, want)
	}
	if h.len() != 2 || string(h.name(1)) != "X-B" || string(h.value(0)) != "1" {
		t.Fatalf("fields: %d, name(1) %q, value(0) %q", h.len(), h.name(1), h.value(0))
	}
	for range 1000 {
		h.del("X-A")
		addField(&h, "X-A", "again")
	}
	if got, want := string(h.appendLines(nil)), "X-B: \r\nX-A: again\r\n"; got != want {
		t.Fatalf("after re-setting: %q, want %q", got, want)
	}
	if len(h.buf) != len("X-BX-Aagain") {
		t.Fatalf("buffer grew to %d bytes re-setting one field", len(h.buf))
	}
}
