package middleware

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/netip"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/loopback"
)

func TestRecover(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	h := Recover(logger)(riptide.HandlerFunc(func(c *riptide.Ctx) {
		c.SetHeader("X-Half", "built")
		c.SetHeader("Content-Type", "application/json")
		c.SetHeader("ETag", `"v1"`)
		c.WriteString("partial")
		panic("boom")
	}))
	resp, body := send(t, h, "GET /p?q=1 HTTP/1.1\r\nHost: x\r\n\r\n")
	// Fields that describe the body go with it; others stay (as with chi's
	// Recoverer), so that X-Request-Id and CORS fields reach the client.
	if resp.StatusCode != 500 || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" || resp.Header.Get("ETag") != "" ||
		resp.Header.Get("X-Half") != "built" || body != "Internal Server Error\n" || !resp.Close {
		t.Errorf("got %d %q %v close=%v; want a plain 500 that closes, keeping X-Half only", resp.StatusCode, body, resp.Header, resp.Close)
	}
	for _, want := range []string{"panic serving request", "panic=boom", "target=\"/p?q=1\"", "stack="} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log %q lacks %q", logs.String(), want)
		}
	}
	logs.Reset()
	h = Recover(logger)(riptide.HandlerFunc(func(c *riptide.Ctx) { panic(riptide.ErrAbortHandler) }))
	if resp, _ := send(t, h, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); resp.StatusCode != 500 || logs.Len() != 0 {
		t.Errorf("ErrAbortHandler: %d, log %q; want 500 and no log", resp.StatusCode, logs.String())
	}
}

func TestAccessLog(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	h := Chain(riptide.HandlerFunc(func(c *riptide.Ctx) { c.SetStatus(201) }),
		RequestID(), AccessLog(logger, slog.LevelInfo, &RealIP{}))
	send(t, h, "POST /items HTTP/1.1\r\nHost: x\r\nX-Request-Id: req-7\r\nContent-Length: 0\r\n\r\n")
	line := logs.String()
	for _, want := range []string{"msg=request", "method=POST", "target=/items", "status=201", "duration=", "client=127.0.0.1", "request_id=req-7"} {
		if !strings.Contains(line, want) {
			t.Errorf("log %q lacks %q", line, want)
		}
	}
	logs.Reset()
	quiet := AccessLog(logger, slog.LevelDebug, nil)(hello)
	send(t, quiet, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if logs.Len() != 0 {
		t.Errorf("a disabled level logged %q", logs.String())
	}
}

func TestRequestID(t *testing.T) {
	h := RequestID()(riptide.HandlerFunc(func(c *riptide.Ctx) { c.Write(GetRequestID(c)) }))
	addr := loopback.Serve(t, h)
	generated := regexp.MustCompile(`^[0-9a-f]{16}-[0-9a-f]{16}$`)
	seen := map[string]bool{}
	for _, tc := range []struct{ name, header, want string }{
		{"none sent", "", ""},
		{"valid one kept", "X-Request-Id: abc-123\r\n", "abc-123"},
		{"too long replaced", "X-Request-Id: " + strings.Repeat("a", 65) + "\r\n", ""},
		{"none sent again", "", ""},
	} {
		resp, body := sendTo(t, addr, "GET / HTTP/1.1\r\nHost: x\r\n"+tc.header+"\r\n")
		id := resp.Header.Get(RequestIDHeader)
		if body != id {
			t.Errorf("%s: GetRequestID %q, header %q", tc.name, body, id)
		}
		if tc.want != "" && id != tc.want || tc.want == "" && (!generated.MatchString(id) || seen[id]) {
			t.Errorf("%s: ID %q, want %q or a new generated one", tc.name, id, tc.want)
		}
		seen[id] = true
	}
}

// TestHex16 checks the word-at-a-time hex digits of generated IDs
// against fmt's, for every digit value in every position and a few
// edge values.
func TestHex16(t *testing.T) {
	check := func(n uint64) {
		var got [16]byte
		hex16(&got, n)
		if want := fmt.Sprintf("%016x", n); string(got[:]) != want {
			t.Fatalf("hex16(%#x) = %q, want %q", n, got, want)
		}
	}
	for _, n := range []uint64{0, 1, 9, 10, 15, 16, 1<<32 - 1, 1 << 32, 1<<63 + 1, ^uint64(0)} {
		check(n)
	}
	for pos := 0; pos < 64; pos += 4 {
		for d := uint64(0); d < 16; d++ {
			check(d << pos)
			check(^(d << pos))
		}
	}
}

func TestCORS(t *testing.T) {
	called := 0
	h := CORS(CORSOptions{
		AllowedOrigins: []string{"https://a.example"},
		AllowedMethods: []string{"GET", "PUT"},
		AllowedHeaders: []string{"Content-Type", "X-Token"},
		ExposedHeaders: []string{"X-Total"},
		MaxAge:         600,
	})(riptide.HandlerFunc(func(c *riptide.Ctx) { called++; c.WriteString("app") }))
	addr := loopback.Serve(t, h)
	pre := "OPTIONS /r HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nOrigin: https://a.example\r\n"
	for _, tc := range []struct {
		rule, req           string
		code                int
		called              bool
		allowOrigin, others string // others: the preflight's Allow-Methods|Allow-Headers|Max-Age, or Expose-Headers
	}{
		{"no Origin: untouched", "GET /r HTTP/1.1\r\nHost: x\r\n\r\n", 200, true, "", ""},
		{"an origin not allowed gets no CORS headers", "GET /r HTTP/1.1\r\nHost: x\r\nOrigin: https://evil.example\r\n\r\n", 200, true, "", ""},
		{"simple request from an allowed origin", "GET /r HTTP/1.1\r\nHost: x\r\nOrigin: https://a.example\r\n\r\n", 200, true, "https://a.example", "X-Total"},
		{"preflight granted, handler not called", pre + "Access-Control-Request-Method: PUT\r\nAccess-Control-Request-Headers: content-type, x-token\r\n\r\n", 204, false, "https://a.example", "GET, PUT|content-type, x-token|600"},
		{"preflight for a method not allowed", pre + "Access-Control-Request-Method: DELETE\r\n\r\n", 200, true, "", ""},
		{"preflight for a header not allowed", pre + "Access-Control-Request-Method: GET\r\nAccess-Control-Request-Headers: X-Other\r\n\r\n", 200, true, "", ""},
		{"plain OPTIONS is not a preflight", pre + "\r\n", 200, true, "https://a.example", "X-Total"},
	} {
		before := called
		resp, _ := sendTo(t, addr, tc.req)
		h := resp.Header
		others := h.Get("Access-Control-Expose-Headers")
		if tc.code == 204 {
			others = h.Get("Access-Control-Allow-Methods") + "|" + h.Get("Access-Control-Allow-Headers") + "|" + h.Get("Access-Control-Max-Age")
		}
		vary := strings.Join(h.Values("Vary"), ",")
		if resp.StatusCode != tc.code || (called > before) != tc.called || h.Get("Access-Control-Allow-Origin") != tc.allowOrigin ||
			others != tc.others || tc.allowOrigin != "" && !strings.Contains(vary, "Origin") {
			t.Errorf("%s: %d called=%v Allow-Origin %q others %q Vary %q; want %d %v %q %q",
				tc.rule, resp.StatusCode, called > before, h.Get("Access-Control-Allow-Origin"), others, vary, tc.code, tc.called, tc.allowOrigin, tc.others)
		}
	}
	anyOrigin := CORS(CORSOptions{AllowedOrigins: []string{"*"}})(hello)
	if resp, _ := send(t, anyOrigin, "GET / HTTP/1.1\r\nHost: x\r\nOrigin: https://b.example\r\n\r\n"); resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("\"*\" without credentials: Allow-Origin %q, want *", resp.Header.Get("Access-Control-Allow-Origin"))
	}
}

// TestCORSWildcardCredentials: "*" with AllowCredentials is refused at
// construction (issue 23 item 6: it used to echo every Origin, "null"
// included, with Allow-Credentials), and "null" is echoed only when listed.
func TestCORSWildcardCredentials(t *testing.T) {
	var h riptide.Handler
	func() {
		defer func() {
			if v := recover(); v != errCORSWildcardCredentials {
				t.Errorf("CORS(\"*\", AllowCredentials) panicked with %v, want %q", v, errCORSWildcardCredentials)
			}
		}()
		h = CORS(CORSOptions{AllowedOrigins: []string{"https://a.example", "*"}, AllowCredentials: true})(hello)
	}()
	if h != nil {
		for _, origin := range []string{"null", "https://evil.example"} {
			resp, _ := send(t, h, "GET / HTTP/1.1\r\nHost: x\r\nOrigin: "+origin+"\r\n\r\n")
			t.Errorf("Origin %s: Allow-Origin %q Allow-Credentials %q", origin,
				resp.Header.Get("Access-Control-Allow-Origin"), resp.Header.Get("Access-Control-Allow-Credentials"))
		}
	}
	for _, tc := range []struct {
		rule    string
		o       CORSOptions
		want    string // Access-Control-Allow-Origin for Origin: null
		wantCre string
	}{
		{"listed origins with credentials do not match null",
			CORSOptions{AllowedOrigins: []string{"https://a.example"}, AllowCredentials: true}, "", ""},
		{"null listed explicitly is echoed",
			CORSOptions{AllowedOrigins: []string{"null"}, AllowCredentials: true}, "null", "true"},
		{"* without credentials answers *, never echoes",
			CORSOptions{AllowedOrigins: []string{"*"}}, "*", ""},
	} {
		for _, pre := range []bool{false, true} {
			req := "GET / HTTP/1.1\r\nHost: x\r\nOrigin: null\r\n\r\n"
			if pre {
				req = "OPTIONS / HTTP/1.1\r\nHost: x\r\nOrigin: null\r\nAccess-Control-Request-Method: GET\r\n\r\n"
			}
			resp, _ := send(t, CORS(tc.o)(hello), req)
			if got, cre := resp.Header.Get("Access-Control-Allow-Origin"), resp.Header.Get("Access-Control-Allow-Credentials"); got != tc.want || cre != tc.wantCre {
				t.Errorf("%s (preflight %v): Allow-Origin %q Allow-Credentials %q, want %q %q", tc.rule, pre, got, cre, tc.want, tc.wantCre)
			}
		}
	}
}

func TestTimeout(t *testing.T) {
	h := Timeout(30 * time.Millisecond)(riptide.HandlerFunc(func(c *riptide.Ctx) {
		if string(c.Path()) == "/slow" {
			select {
			case <-c.Done():
				fmt.Fprint(c, c.Err())
				return
			case <-time.After(10 * time.Second):
			}
		}
		c.WriteString("done")
	}))
	addr := loopback.Serve(t, h)
	if resp, body := sendTo(t, addr, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"); resp.StatusCode != 503 || body != "Service Unavailable\n" {
		t.Errorf("slow: %d %q, want 503 after Done fired with DeadlineExceeded", resp.StatusCode, body)
	}
	if resp, body := sendTo(t, addr, "GET /fast HTTP/1.1\r\nHost: x\r\n\r\n"); resp.StatusCode != 200 || body != "done" {
		t.Errorf("fast: %d %q", resp.StatusCode, body)
	}
}

func TestBodyLimit(t *testing.T) {
	called := false
	h := BodyLimit(8)(riptide.HandlerFunc(func(c *riptide.Ctx) {
		called = true
		b, err := c.ReadBody()
		if err == nil {
			c.Write(b)
		}
	}))
	addr := loopback.Serve(t, h)
	for _, tc := range []struct {
		rule, req, body string
		code            int
		called          bool
	}{
		{"declared within", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\n\r\n12345678", "12345678", 200, true},
		{"declared over: refused before the handler", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\n123456789", "Request Entity Too Large\n", 413, false},
		{"chunked over: the read fails", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n12345\r\n5\r\n67890\r\n0\r\n\r\n", "", 413, true},
	} {
		called = false
		resp, body := sendTo(t, addr, tc.req)
		if resp.StatusCode != tc.code || body != tc.body || called != tc.called {
			t.Errorf("%s: %d %q called=%v, want %d %q %v", tc.rule, resp.StatusCode, body, called, tc.code, tc.body, tc.called)
		}
	}
}

func TestBasicAuth(t *testing.T) {
	h := BasicAuth("admin area", Users(map[string]string{"ann": "s3cret:x"}))(hello)
	addr := loopback.Serve(t, h)
	auth := func(s string) string {
		return "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(s)) + "\r\n"
	}
	for _, tc := range []struct {
		rule, header string
		code         int
	}{
		{"no credentials", "", 401},
		{"right user and password (with a colon)", auth("ann:s3cret:x"), 200},
		{"scheme is case-insensitive", strings.Replace(auth("ann:s3cret:x"), "Basic", "bAsIc", 1), 200},
		{"wrong password", auth("ann:nope"), 401},
		{"unknown user", auth("bob:s3cret:x"), 401},
		{"no colon", auth("ann"), 401},
		{"bad base64", "Authorization: Basic !!!\r\n", 401},
		{"too long", auth("ann:" + strings.Repeat("x", 300)), 401},
		{"another scheme", "Authorization: Bearer abc\r\n", 401},
	} {
		resp, _ := sendTo(t, addr, "GET / HTTP/1.1\r\nHost: x\r\n"+tc.header+"\r\n")
		challenge := resp.Header.Get("WWW-Authenticate")
		if resp.StatusCode != tc.code || tc.code == 401 && challenge != `Basic realm="admin area", charset="UTF-8"` {
			t.Errorf("%s: %d challenge %q, want %d", tc.rule, resp.StatusCode, challenge, tc.code)
		}
	}
}

func TestRealIP(t *testing.T) {
	loop := netip.MustParsePrefix("127.0.0.0/8")
	inner := netip.MustParsePrefix("10.0.0.0/8")
	for _, tc := range []struct {
		rule    string
		trusted []netip.Prefix
		headers string
		want    string
	}{
		{"an untrusted peer is the client, whatever it sends", nil, "X-Forwarded-For: 1.2.3.4\r\n", "127.0.0.1"},
		{"a trusted proxy without the header", []netip.Prefix{loop}, "", "127.0.0.1"},
		{"the last address a trusted proxy added", []netip.Prefix{loop}, "X-Forwarded-For: 6.6.6.6, 1.2.3.4\r\n", "1.2.3.4"},
		{"trusted hops are skipped", []netip.Prefix{loop, inner}, "X-Forwarded-For: 6.6.6.6, 1.2.3.4, 10.0.0.2\r\n", "1.2.3.4"},
		{"across header fields", []netip.Prefix{loop, inner}, "X-Forwarded-For: 1.2.3.4\r\nX-Forwarded-For: 10.1.1.1\r\n", "1.2.3.4"},
		{"IPv6", []netip.Prefix{loop}, "X-Forwarded-For: 2001:db8::1\r\n", "2001:db8::1"},
		{"malformed stops the walk", []netip.Prefix{loop, inner}, "X-Forwarded-For: 1.2.3.4, junk, 10.0.0.2\r\n", "10.0.0.2"},
	} {
		ri := &RealIP{Trusted: tc.trusted}
		h := riptide.HandlerFunc(func(c *riptide.Ctx) { c.WriteString(ri.ClientIP(c).String()) })
		if _, body := send(t, h, "GET / HTTP/1.1\r\nHost: x\r\n"+tc.headers+"\r\n"); body != tc.want {
			t.Errorf("%s: %q, want %q", tc.rule, body, tc.want)
		}
	}
}

// TestBasicAuthUser (issue 28, item 4): the handler behind BasicAuth learns
// who logged in; without BasicAuth an Authorization header names nobody.
func TestBasicAuthUser(t *testing.T) {
	who := riptide.HandlerFunc(func(c *riptide.Ctx) { c.WriteString("[" + BasicAuthUser(c) + "]") })
	hdr := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("ann:pw")) + "\r\n"
	req := "GET / HTTP/1.1\r\nHost: x\r\n" + hdr + "\r\n"
	if _, body := send(t, BasicAuth("r", Users(map[string]string{"ann": "pw"}))(who), req); body != "[ann]" {
		t.Errorf("behind BasicAuth: %q, want [ann]", body)
	}
	if _, body := send(t, who, req); body != "[]" {
		t.Errorf("without BasicAuth: %q, want []", body)
	}
}
