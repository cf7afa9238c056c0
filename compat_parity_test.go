package riptide

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
	"unsafe"
)

// This file is the behaviour-parity harness for the compat door: the same
// handlers are served by net/http and by riptide (FromHTTP), the same raw
// requests are sent to both over TCP, and the responses are compared as
// normalised transcripts (status line, headers except Date, framing, body,
// trailers, and whether the connection stayed open). Any difference that is
// not in parityDifferences fails the test, and so does a listed difference
// that no longer happens, so the list stays exactly what riptide does.

// parityServer serves h on a fresh 127.0.0.1 listener until the test ends
// and returns its address.
type parityServer func(t *testing.T, h http.Handler) string

func serveParityNetHTTP(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// parityRequest is one request sent on the case's connection. Requests are
// sent one after the other, each after the previous response was read.
type parityRequest struct {
	// raw is the request as sent, head and (unless continueBody) body.
	raw string
	// continueBody is sent after a "100 Continue" arrives, or after the
	// final response if that comes first.
	continueBody string
	// responses is how many final responses raw produces (pipelining);
	// 0 means 1.
	responses int
}

// parityCase is one handler and the requests that exercise it.
type parityCase struct {
	name    string
	handler http.HandlerFunc
	reqs    []parityRequest
	// want are substrings the net/http transcript must contain: they prove
	// the case exercises what its name says.
	want []string
}

// parityDiff is a deliberate difference: the exact transcript lines that
// differ in one case, "-" for net/http's and "+" for riptide's (compared as
// a multiset: the diff's interleaving of - and + lines is not meaningful).
type parityDiff struct {
	cas   string
	lines []string
	why   string
}

// Reasons shared by several cases.
const (
	whyVersion = "RFC 9110 §2.5: a server sends the highest minor version it supports " +
		"(HTTP/1.1) even to an HTTP/1.0 client; net/http echoes HTTP/1.0. Framing and " +
		"keep-alive still follow the client's version."
	whyPanic = "a panicking handler that has sent nothing gets a 500 with Connection: close " +
		"(riptide's engine policy, the same on the native API) instead of a connection " +
		"closed with no response; the client learns what happened. Once bytes are on the " +
		"wire the connection is cut, as in net/http."
	whyBuffer = "riptide buffers up to Server.WriteBufferSize (16 KiB) before committing, " +
		"net/http 2 KiB (4 KiB through ReadFrom's sniff read), so a body that fits is sent " +
		"with Content-Length instead of chunked; framing is as valid and cheaper."
)

// parityDifferences lists every deliberate difference between riptide compat
// and net/http, with the reason. A difference not listed here fails the test,
// and so does a listed one that no longer happens.
var parityDifferences = []parityDiff{
	{"unknown status code", []string{"-HTTP/1.1 599 status code 599", "+HTTP/1.1 599 ",
		"-HTTP/1.1 600 status code 600", "+HTTP/1.1 600 ", "-HTTP/1.1 999 status code 999", "+HTTP/1.1 999 "},
		"the reason phrase is optional (RFC 9112 §4) and riptide sends none for an " +
			"unregistered code rather than net/http's invented \"status code N\"."},
	{"trailers on HTTP/1.0 dropped", []string{"-HTTP/1.0 200 OK", "+HTTP/1.1 200 OK"}, whyVersion},
	{"HTTP/1.0 without keep-alive", []string{"-HTTP/1.0 200 OK", "+HTTP/1.1 200 OK"}, whyVersion},
	{"HTTP/1.0 keep-alive", []string{"-HTTP/1.0 200 OK", "+HTTP/1.1 200 OK", "-HTTP/1.0 200 OK", "+HTTP/1.1 200 OK"}, whyVersion},
	{"HTTP/1.0 keep-alive with unknown length", []string{"-HTTP/1.0 200 OK", "+HTTP/1.1 200 OK"}, whyVersion},
	{"request fields", []string{"-HTTP/1.0 200 OK", "+HTTP/1.1 200 OK"}, whyVersion},
	{"panic before writing", []string{
		"+HTTP/1.1 500 Internal Server Error", "+(Connection: close)", "+Content-Length: 26",
		"+Content-Type: text/plain; charset=utf-8", "+body 26 bytes:", `+| "500 Internal Server Error\n"`,
		"-[no response: connection closed]"}, whyPanic},
	{"ErrAbortHandler", []string{
		"+HTTP/1.1 500 Internal Server Error", "+(Connection: close)", "+Content-Length: 26",
		"+Content-Type: text/plain; charset=utf-8", "+body 26 bytes:", `+| "500 Internal Server Error\n"`,
		"-[no response: connection closed]"},
		whyPanic + " http.ErrAbortHandler is not logged, as in net/http."},
	{"Transfer-Encoding identity set by handler", []string{
		"+Content-Length: 11", "-(Connection: close)", "+[open]", "-[closed]"},
		"the engine always frames bodies itself (Transfer-Encoding is managed, as on the native " +
			"API): a whole body that fits the buffer gets a Content-Length and the connection " +
			"stays open, instead of a body delimited by closing the connection."},
	{"echo with io.Copy and declared length", []string{
		"+body 50000 bytes sha256 42a5c91935aac0532e63a028d3fbd1103fcf92ceeaf1edba3b729c1d9437989e",
		"+HTTP/1.1 200 OK", "+Content-Length: 5", "+Content-Type: text/plain; charset=utf-8",
		"+body 5 bytes:", `+| "again"`, "+[open]",
		"-body 512 bytes sha256 1bc50eb148d055b8f1a7249992de187a4c8485f7596efcc71aca938f50eee30e",
		"-body error: unexpected EOF", "-[closed]"},
		"riptide is always full duplex on HTTP/1.1 (EnableFullDuplex is a no-op): the request " +
			"body stays readable after the response has started. net/http discards the unread " +
			"body when it writes the head (unless EnableFullDuplex), so this echo sends 512 of " +
			"50000 bytes and cuts the connection."},
	{"target net/url rejects", []string{
		"+Content-Length: 12", "+body 12 bytes:", `+| "Bad Request\n"`, "-body 15 bytes:", `-| "400 Bad Request"`},
		"a request the parser rejects gets the engine's canned error response, the same for " +
			"both doors (framed with Content-Length), before any handler runs; net/http's is " +
			"close-delimited. Status and Connection: close agree."},
	{"fragment in target", []string{
		"+HTTP/1.1 400 Bad Request", "+(Connection: close)", "+Content-Length: 12",
		"-HTTP/1.1 200 OK", "-Content-Length: 2", "+body 12 bytes:", `+| "Bad Request\n"`,
		"+[closed]", "-body 2 bytes:", `-| "ok"`, "-[open]"},
		"RFC 9112 §3.2: a request-target has no fragment (a client strips it before sending), " +
			"so the codec rejects '#' with 400 (Http11Probe RFC9112-3.2-FRAGMENT-IN-TARGET); " +
			"net/http passes it through into RawQuery or Path."},
	{"invalid Content-Length dropped", []string{
		"+Content-Length: 12", "-Transfer-Encoding: chunked", "+Content-Length: 12", "-Transfer-Encoding: chunked",
		"+HTTP/1.1 200 OK", "+Content-Length: 12", "+Content-Type: text/plain; charset=utf-8", "+body 12 bytes:",
		`+| "hello world!"`, "-[bad response: bad Content-Length \"+5\"]", "+[open]", "-[closed]"},
		"a Content-Length the handler set that is not 1*DIGIT is dropped, on every protocol, and the engine " +
			"frames the body as if none was set (here: a Content-Length for a body that fits the buffer); " +
			"net/http drops one that strconv.ParseInt refuses and sends the body chunked, but takes \"+5\" as 5 " +
			"and sends it as set, which clients refuse (its HTTP/2 server drops \"+5\" too)."},
	{"Transfer-Encoding chunked set by handler", []string{"+Content-Length: 28", "-Transfer-Encoding: chunked"},
		"the engine always frames bodies itself: a body that fits the buffer gets a Content-Length; as in " +
			"net/http's HTTP/1.1 server, the handler's Transfer-Encoding stops Content-Type sniffing."},
	{"io.Copy uses ReadFrom", []string{
		"+Content-Length: 5000", "-Transfer-Encoding: chunked",
		"+Content-Length: 5000", "-Transfer-Encoding: chunked"}, whyBuffer},
}

// get is a GET request head for path with extra header lines.
func get(path string, hdr ...string) parityRequest {
	return parityRequest{raw: "GET " + path + " HTTP/1.1\r\nHost: parity.test\r\n" + joinHeaderLines(hdr) + "\r\n"}
}

func joinHeaderLines(hdr []string) string {
	var b strings.Builder
	for _, h := range hdr {
		b.WriteString(h)
		b.WriteString("\r\n")
	}
	return b.String()
}

func post(path, body string, hdr ...string) parityRequest {
	return parityRequest{raw: "POST " + path + " HTTP/1.1\r\nHost: parity.test\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n" + joinHeaderLines(hdr) + "\r\n" + body}
}

func raw(s string) parityRequest { return parityRequest{raw: s} }

// describeRequest writes what a handler saw of its request, so request
// construction is compared too.
func describeRequest(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	fmt.Fprintf(&b, "Method=%s\nRequestURI=%s\nURL=%s\n", r.Method, r.RequestURI, r.URL)
	fmt.Fprintf(&b, "URL.Scheme=%q Host=%q Path=%q RawPath=%q RawQuery=%q Opaque=%q Fragment=%q\n",
		r.URL.Scheme, r.URL.Host, r.URL.Path, r.URL.RawPath, r.URL.RawQuery, r.URL.Opaque, r.URL.Fragment)
	fmt.Fprintf(&b, "Proto=%s %d.%d Host=%s RemoteIP=%s TLS=%t GetBody=%t\n", r.Proto, r.ProtoMajor, r.ProtoMinor,
		r.Host, host, r.TLS != nil, r.GetBody != nil)
	fmt.Fprintf(&b, "ContentLength=%d TransferEncoding=%q Close=%t Body=%t Pattern=%q\n",
		r.ContentLength, r.TransferEncoding, r.Close, r.Body != nil, r.Pattern)
	keys := make([]string, 0, len(r.Header))
	for k := range r.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "H %s=%q\n", k, r.Header[k])
	}
	fmt.Fprintf(&b, "Trailer before body=%q\n", r.Trailer)
	body, err := io.ReadAll(r.Body)
	fmt.Fprintf(&b, "Body=%q err=%v\n", body, err)
	fmt.Fprintf(&b, "Trailer after body=%q\n", r.Trailer)
	fmt.Fprintf(&b, "Form: %v\n", r.ParseForm() == nil && r.Form != nil)
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, b.String())
}

var parityCases = []parityCase{
	{
		name:    "implicit 200 with sniffed text",
		handler: func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "Hello, World!") },
		reqs:    []parityRequest{get("/"), get("/again")},
		want:    []string{"HTTP/1.1 200 OK", "Content-Type: text/plain; charset=utf-8", "Content-Length: 13"},
	},
	{
		name:    "no body at all",
		handler: func(w http.ResponseWriter, r *http.Request) {},
		reqs:    []parityRequest{get("/")},
		want:    []string{"Content-Length: 0"},
	},
	{
		name: "explicit status and header",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Custom", "yes")
			w.Header().Add("Set-Cookie", "a=1")
			w.Header().Add("Set-Cookie", "b=2")
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, "created")
		},
		reqs: []parityRequest{get("/")},
		want: []string{"HTTP/1.1 201 Created", "Set-Cookie: a=1", "Set-Cookie: b=2"},
	},
	{
		name: "unknown status code",
		handler: func(w http.ResponseWriter, r *http.Request) {
			// 600..999 are sent too (net/http panics only outside 100..999).
			if code, err := strconv.Atoi(r.URL.Query().Get("code")); err == nil {
				w.WriteHeader(code)
			}
		},
		reqs: []parityRequest{get("/?code=599"), get("/?code=600"), get("/?code=999")},
		want: []string{"HTTP/1.1 599 status code 599", "HTTP/1.1 600 status code 600", "HTTP/1.1 999 status code 999"},
	},
	{
		name: "superfluous WriteHeader ignored",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusAccepted)
			w.WriteHeader(http.StatusTeapot)
			w.Header().Set("X-Too-Late", "1")
			io.WriteString(w, "x")
		},
		reqs: []parityRequest{get("/")},
		want: []string{"HTTP/1.1 202 Accepted"},
	},
	{
		name:    "sniffed html",
		handler: func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<!DOCTYPE html><p>hi</p>") },
		reqs:    []parityRequest{get("/")},
		want:    []string{"Content-Type: text/html; charset=utf-8"},
	},
	{
		name: "content type suppressed by nil",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Content-Type"] = nil
			io.WriteString(w, "<html>")
		},
		reqs: []parityRequest{get("/")},
	},
	{
		name: "no sniffing with Content-Encoding",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			io.WriteString(w, "\x1f\x8b not really")
		},
		reqs: []parityRequest{get("/")},
	},
	{
		name: "small body in many writes gets Content-Length",
		handler: func(w http.ResponseWriter, r *http.Request) {
			for i := 0; i < 10; i++ {
				fmt.Fprintf(w, "line %d\n", i)
			}
		},
		reqs: []parityRequest{get("/"), get("/")},
		want: []string{"Content-Length: 70"},
	},
	{
		name: "large body is chunked",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(make([]byte, 200<<10))
		},
		reqs: []parityRequest{get("/"), get("/")},
		want: []string{"Transfer-Encoding: chunked"},
	},
	{
		name: "large body with explicit Content-Length",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100000")
			w.Write([]byte(strings.Repeat("z", 100000)))
		},
		reqs: []parityRequest{get("/"), get("/")},
		want: []string{"Content-Length: 100000"},
	},
	{
		name: "short body with Content-Length closes",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "10")
			io.WriteString(w, "short")
		},
		reqs: []parityRequest{get("/")},
	},
	{
		name: "write past Content-Length",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "3")
			_, err := io.WriteString(w, "toolong")
			w.Header().Set("X-Never", fmt.Sprint(err))
		},
		reqs: []parityRequest{get("/"), get("/")},
	},
	{
		name: "flush forces chunking",
		handler: func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "part1,")
			w.(http.Flusher).Flush()
			io.WriteString(w, "part2")
		},
		reqs: []parityRequest{get("/"), get("/")},
		want: []string{"Transfer-Encoding: chunked"},
	},
	{
		name: "flush before any write",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.(http.Flusher).Flush()
		},
		reqs: []parityRequest{get("/")},
	},
	{
		name: "ResponseController",
		handler: func(w http.ResponseWriter, r *http.Request) {
			rc := http.NewResponseController(w)
			errs := []error{
				rc.SetWriteDeadline(time.Now().Add(time.Minute)),
				rc.SetReadDeadline(time.Now().Add(time.Minute)),
				rc.EnableFullDuplex(),
			}
			io.WriteString(w, fmt.Sprint(errs))
			errs = append(errs, rc.Flush())
			io.WriteString(w, fmt.Sprint(errs[3]))
		},
		reqs: []parityRequest{get("/"), get("/")},
		want: []string{"[<nil> <nil> <nil>]<nil>"},
	},
	{
		name: "trailers declared with the Trailer header",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Trailer", "X-Sum, X-Count, X-Bad")
			io.WriteString(w, "body")
			w.Header().Set("X-Sum", "abc")
			w.Header().Set("X-Count", "1")
			w.Header().Set("X-Undeclared", "dropped")
			w.Header().Set("X-Bad", "a\r\nInjected: yes") // not a valid field value
		},
		reqs: []parityRequest{get("/"), get("/")},
		want: []string{"Trailer X-Sum: abc", "Trailer X-Count: 1"},
	},
	{
		name: "trailers with TrailerPrefix",
		handler: func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "body")
			w.(http.Flusher).Flush()
			w.Header().Set(http.TrailerPrefix+"X-Late", "late value")
		},
		reqs: []parityRequest{get("/"), get("/")},
		want: []string{"Trailer X-Late: late value"},
	},
	{
		// On HTTP/1.1 a declared length leaves the body unchunked: the
		// trailers are dropped (over HTTP/2 they are sent).
		name: "trailers with a declared Content-Length",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Trailer", "X-T")
			w.Header().Set("Content-Length", "4")
			io.WriteString(w, "body")
			w.Header().Set("X-T", "v")
			w.Header().Set(http.TrailerPrefix+"X-Late", "late value")
		},
		reqs: []parityRequest{get("/"), get("/")},
		want: []string{"Content-Length: 4"},
	},
	{
		// The writer adds a value equal to one it found clean before
		// without the checks (compatWriter.clean): a longer value at
		// the same address, one of the same length elsewhere, and the
		// same bytes rewritten (a string made with unsafe over a reused
		// buffer, as zero-copy code does) must still be mended
		// (HTTP/1.1) or dropped (HTTP/2).
		name: "header values checked again on one connection",
		handler: func(w http.ResponseWriter, r *http.Request) {
			const v = "ok\r\nX-Injected: yes"
			// The handler holds the lock until its head is out (the
			// first Write), so no two requests share reusedValue.
			reusedValue.mu.Lock()
			defer reusedValue.mu.Unlock()
			b := &reusedValue.b
			switch r.URL.RawQuery {
			case "prefix":
				w.Header().Set("X-V", v[:2])
			case "whole":
				w.Header().Set("X-V", v)
			case "copy":
				w.Header().Set("X-V", string([]byte{'o', '\n'}))
			case "bufok", "bufbad":
				copy(b[:], "ok")
				if r.URL.RawQuery == "bufbad" {
					copy(b[:], "o\n")
				}
				w.Header().Set("X-V", unsafe.String(&b[0], len(b)))
			}
			io.WriteString(w, r.URL.RawQuery)
		},
		reqs: []parityRequest{get("/?prefix"), get("/?whole"), get("/?prefix"), get("/?copy"),
			get("/?bufok"), get("/?bufbad")},
		want: []string{"X-V: ok"},
	},
	{
		name: "trailers on HTTP/1.0 dropped",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Trailer", "X-T")
			io.WriteString(w, "body")
			w.Header().Set("X-T", "v")
		},
		reqs: []parityRequest{raw("GET / HTTP/1.0\r\n\r\n")},
	},
	{
		name: "103 Early Hints",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Add("Link", "</style.css>; rel=preload; as=style")
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Add("Link", "</script.js>; rel=preload; as=script")
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Set("X-Final", "1")
			io.WriteString(w, "final")
		},
		reqs: []parityRequest{get("/"), get("/")},
		want: []string{"HTTP/1.1 103 Early Hints", "X-Final: 1"},
	},
	{
		name:    "HEAD with small body written",
		handler: func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "Hello, World!") },
		reqs:    []parityRequest{raw("HEAD / HTTP/1.1\r\nHost: p\r\n\r\n"), get("/")},
		want:    []string{"Content-Length: 13"},
	},
	{
		name:    "HEAD with nothing written",
		handler: func(w http.ResponseWriter, r *http.Request) {},
		reqs:    []parityRequest{raw("HEAD / HTTP/1.1\r\nHost: p\r\n\r\n"), get("/")},
	},
	{
		name: "HEAD with large body written",
		handler: func(w http.ResponseWriter, r *http.Request) {
			_, err := w.Write(make([]byte, 100<<10))
			if err != nil {
				panic(err)
			}
		},
		reqs: []parityRequest{raw("HEAD / HTTP/1.1\r\nHost: p\r\n\r\n"), get("/")},
	},
	{
		name: "HEAD with declared Content-Length",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1000")
			w.Header().Set("Server", "parity")
			if r.Method != "HEAD" {
				w.Write(make([]byte, 1000))
			}
		},
		reqs: []parityRequest{raw("HEAD / HTTP/1.1\r\nHost: p\r\n\r\n"), get("/")},
		want: []string{"Content-Length: 1000", "Server: parity"},
	},
	{
		name: "explicit 100 Continue then body read",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusContinue)
			b, _ := io.ReadAll(r.Body)
			io.WriteString(w, "got "+string(b))
		},
		reqs: []parityRequest{
			{raw: "PUT / HTTP/1.1\r\nHost: p\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n", continueBody: "abc"},
			get("/"),
		},
		want: []string{"HTTP/1.1 100 Continue", "got abc"},
	},
	{
		name: "204 and 304 have no body",
		handler: func(w http.ResponseWriter, r *http.Request) {
			code := http.StatusNoContent
			if r.URL.Path == "/304" {
				code = http.StatusNotModified
			}
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("ETag", `"x"`)
			w.WriteHeader(code)
			_, err := io.WriteString(w, "ignored")
			if err != http.ErrBodyNotAllowed {
				panic(fmt.Sprint("want ErrBodyNotAllowed, got ", err))
			}
		},
		reqs: []parityRequest{get("/204"), get("/304"), get("/204")},
		want: []string{"HTTP/1.1 204 No Content", "HTTP/1.1 304 Not Modified"},
	},
	{
		name:    "client Connection: close",
		handler: func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "bye") },
		reqs:    []parityRequest{get("/", "Connection: close")},
		want:    []string{"(Connection: close)", "[closed]"},
	},
	{
		name: "handler Connection: close",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Connection", "close")
			io.WriteString(w, "bye")
		},
		reqs: []parityRequest{get("/")},
		want: []string{"[closed]"},
	},
	{
		name:    "HTTP/1.0 without keep-alive",
		handler: func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "old") },
		reqs:    []parityRequest{raw("GET / HTTP/1.0\r\n\r\n")},
		want:    []string{"HTTP/1.0 200 OK", "[closed]"},
	},
	{
		name:    "HTTP/1.0 keep-alive",
		handler: func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "old") },
		reqs: []parityRequest{
			raw("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"),
			raw("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"),
		},
		want: []string{"Connection: keep-alive", "[open]"},
	},
	{
		name: "HTTP/1.0 keep-alive with unknown length",
		handler: func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "streamed")
			w.(http.Flusher).Flush()
			io.WriteString(w, " to EOF")
		},
		reqs: []parityRequest{raw("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")},
		want: []string{"[closed]"},
	},
	{
		name: "Expect 100-continue, body read",
		handler: func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			io.WriteString(w, "got "+string(b))
		},
		reqs: []parityRequest{
			{raw: "POST / HTTP/1.1\r\nHost: p\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n", continueBody: "hello"},
			get("/"),
		},
		want: []string{"HTTP/1.1 100 Continue", "got hello"},
	},
	{
		name: "Expect 100-continue, body ignored",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusUnauthorized)
		},
		reqs: []parityRequest{
			{raw: "POST / HTTP/1.1\r\nHost: p\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n", continueBody: "hello"},
		},
		want: []string{"HTTP/1.1 401 Unauthorized"},
	},
	{
		name: "body partially read is drained",
		handler: func(w http.ResponseWriter, r *http.Request) {
			b := make([]byte, 4)
			n, _ := io.ReadFull(r.Body, b)
			io.WriteString(w, "read "+string(b[:n]))
		},
		reqs: []parityRequest{post("/", strings.Repeat("0123456789", 100)), get("/")},
		want: []string{"read 0123", "[open]"},
	},
	{
		name: "chunked body partially read is drained",
		handler: func(w http.ResponseWriter, r *http.Request) {
			b := make([]byte, 3)
			n, _ := io.ReadFull(r.Body, b)
			io.WriteString(w, "read "+string(b[:n]))
		},
		reqs: []parityRequest{
			raw("POST / HTTP/1.1\r\nHost: p\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"),
			get("/"),
		},
		want: []string{"read hel", "[open]"},
	},
	{
		name: "echo with io.Copy and declared length",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.FormatInt(r.ContentLength, 10))
			io.Copy(w, r.Body)
		},
		reqs: []parityRequest{post("/", "short"), post("/", strings.Repeat("\x00e", 25000)), post("/", "again")},
		want: []string{"Content-Length: 50000", "short"},
	},
	{
		name: "echo with io.Copy, chunked",
		handler: func(w http.ResponseWriter, r *http.Request) {
			io.Copy(w, r.Body)
		},
		reqs: []parityRequest{
			raw("POST / HTTP/1.1\r\nHost: p\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"),
			get("/"),
		},
		want: []string{"hello world"},
	},
	{
		name: "body closed by handler",
		handler: func(w http.ResponseWriter, r *http.Request) {
			r.Body.Close()
			_, err := r.Body.Read(make([]byte, 1))
			io.WriteString(w, fmt.Sprint(err))
		},
		reqs: []parityRequest{post("/", "abcdef"), get("/")},
		want: []string{"http: invalid Read on closed Body"},
	},
	{
		name:    "request fields",
		handler: describeRequest,
		reqs: []parityRequest{
			get("/a%2Fb/c%20d?x=1&y=%20z", "x-lower: v", "X-Multi: 1", "X-Multi: 2", "Accept: */*",
				"Cookie: a=1; b=2", "X-Empty:", "User-Agent: parity"),
			raw("POST http://Example.COM:8080/p/q?r=s HTTP/1.1\r\nHost: example.com:8080\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 7\r\n\r\nk=v&l=w"),
			raw("OPTIONS * HTTP/1.1\r\nHost: p\r\n\r\n"),
			raw("PUT /chunked HTTP/1.1\r\nHost: p\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n3\r\nabc\r\n0\r\nX-T: tv\r\n\r\n"),
			raw("GET /old HTTP/1.0\r\nHost: h10\r\nConnection: keep-alive\r\n\r\n"),
			raw("GET //double//slash/../x HTTP/1.1\r\nHost: p\r\n\r\n"),
		},
		want: []string{`RawPath=\"/a%2Fb/c%20d\"`, `Body=\"abc\"`, `Trailer after body=map[\"X-T\":[\"tv\"]]`},
	}, {
		name: "fragment in target",
		handler: func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "ok")
		},
		reqs: []parityRequest{get("/frag?a#b")},
	},

	{
		name:    "target net/url rejects",
		handler: describeRequest,
		reqs:    []parityRequest{raw("GET http://a%41/x HTTP/1.1\r\nHost: a\r\n\r\n")},
		want:    []string{"400 Bad Request"},
	},
	{
		name: "pipelined requests",
		handler: func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, r.URL.Path)
		},
		reqs: []parityRequest{{
			raw:       "GET /1 HTTP/1.1\r\nHost: p\r\n\r\nGET /2 HTTP/1.1\r\nHost: p\r\n\r\nPOST /3 HTTP/1.1\r\nHost: p\r\nContent-Length: 2\r\n\r\nhi",
			responses: 3,
		}},
		want: []string{"/1", "/2", "/3"},
	},
	{
		name: "panic before writing",
		handler: func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/panic" {
				panic("boom")
			}
			io.WriteString(w, "fine")
		},
		reqs: []parityRequest{get("/panic")},
	},
	{
		name: "panic after flushing",
		handler: func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "partial")
			w.(http.Flusher).Flush()
			panic("boom")
		},
		reqs: []parityRequest{get("/")},
	},
	{
		name: "ErrAbortHandler",
		handler: func(w http.ResponseWriter, r *http.Request) {
			panic(http.ErrAbortHandler)
		},
		reqs: []parityRequest{get("/")},
	},
	{
		name: "newline in header value",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Bad", "a\r\nInjected: yes")
			io.WriteString(w, "x")
		},
		reqs: []parityRequest{get("/")},
	},
	{
		name: "invalid header name dropped",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Bad Name", "v")
			w.Header().Set("X-Good", "v")
			io.WriteString(w, "x")
		},
		reqs: []parityRequest{get("/")},
	},
	{
		// A Transfer-Encoding is never sent: over HTTP/2 it has no other
		// effect (the type is sniffed); over HTTP/1.1 it stops sniffing.
		name: "Transfer-Encoding chunked set by handler",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Transfer-Encoding", "chunked")
			io.WriteString(w, "<html><body>hi</body></html>")
		},
		reqs: []parityRequest{get("/")},
		want: []string{"<html>"},
	},
	{
		name: "Transfer-Encoding identity set by handler",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Transfer-Encoding", "identity")
			io.WriteString(w, "until close")
		},
		reqs: []parityRequest{get("/")},
		want: []string{"[closed]"},
	},
	{
		name: "hijack with buffered bytes",
		handler: func(w http.ResponseWriter, r *http.Request) {
			conn, brw, err := w.(http.Hijacker).Hijack()
			if err != nil {
				panic(err)
			}
			defer conn.Close()
			line, _ := brw.ReadString('\n')
			fmt.Fprintf(brw, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(line), line)
			brw.Flush()
		},
		reqs: []parityRequest{{raw: "GET / HTTP/1.1\r\nHost: p\r\n\r\nafter the head\n"}},
		want: []string{"after the head"},
	},
	{
		name: "io.Copy uses ReadFrom",
		handler: func(w http.ResponseWriter, r *http.Request) {
			_, hasRF := w.(io.ReaderFrom)
			w.Header().Set("X-ReaderFrom", strconv.FormatBool(hasRF))
			io.Copy(w, strings.NewReader(strings.Repeat("r", 5000)))
		},
		reqs: []parityRequest{get("/"), get("/")},
	},
	{
		name: "ServeMux routing",
		handler: func() http.HandlerFunc {
			mux := http.NewServeMux()
			mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, "item %s pattern %s", r.PathValue("id"), r.Pattern)
			})
			mux.HandleFunc("/redirect/", func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "/items/1", http.StatusFound)
			})
			return mux.ServeHTTP
		}(),
		reqs: []parityRequest{get("/items/42"), raw("POST /items/42 HTTP/1.1\r\nHost: p\r\nContent-Length: 0\r\n\r\n"),
			get("/redirect"), get("/redirect/x"), get("/nothing")},
		want: []string{"item 42 pattern GET /items/{id}", "405 Method Not Allowed", "Location: /items/1"},
	},
	{
		name: "http.Error and NotFound",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "99")
			http.Error(w, "nope", http.StatusForbidden)
		},
		reqs: []parityRequest{get("/")},
		want: []string{"X-Content-Type-Options: nosniff"},
	},
	{
		// The sniff sees the first 512 bytes even when
		// the write that overflows the buffer brings most of them.
		name: "sniff across an overflowing write",
		handler: func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "<!DOC")
			io.WriteString(w, "TYPE html>"+strings.Repeat("x", 40000))
		},
		reqs: []parityRequest{get("/")},
		want: []string{"Content-Type: text/html; charset=utf-8"},
	},
	{
		// Expect and Trailer are taken out of Header
		// (HTTP/2), Trailer announced without a body.
		name:    "Expect and Trailer fields",
		handler: describeRequest,
		reqs: []parityRequest{
			{raw: "PUT /x HTTP/1.1\r\nHost: p\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n", continueBody: "abc"},
			raw("GET /t HTTP/1.1\r\nHost: p\r\nTrailer: X-T\r\n\r\n"),
		},
		want: []string{`Body=\"abc\"`},
	},
	{
		// An invalid Content-Length is not sent.
		name: "invalid Content-Length dropped",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", r.URL.Query().Get("cl"))
			io.WriteString(w, "hello world!")
		},
		reqs: []parityRequest{get("/?cl=%2012%20"), get("/?cl=x"), get("/?cl=%2B5")},
		want: []string{"hello world!"},
	},
	{
		// ReadFrom of an empty file commits nothing, so
		// the status and header set after it still count.
		name: "ReadFrom of an empty file",
		handler: func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Has("cl") {
				w.Header().Set("Content-Length", "4")
			}
			copyEmptyFile(w)
			w.Header().Set("X-After", "1")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, "gone")
		},
		reqs: []parityRequest{get("/"), get("/?cl")},
		want: []string{"HTTP/1.1 404 Not Found", "X-After: 1"},
	},
	{
		// After a ReadFrom that sent nothing, Hijack
		// finds no head on the wire before its own bytes.
		name: "hijack after ReadFrom of an empty file",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "4")
			copyEmptyFile(w)
			conn, brw, err := w.(http.Hijacker).Hijack()
			if err != nil {
				panic(err)
			}
			defer conn.Close()
			io.WriteString(brw, "HTTP/1.1 202 Accepted\r\nContent-Length: 6\r\nConnection: close\r\n\r\nmine\r\n")
			brw.Flush()
		},
		reqs: []parityRequest{get("/")},
		want: []string{"HTTP/1.1 202 Accepted"},
	},
	{
		// Net/http leaves the query to the application.
		name:    "query with stray percent",
		handler: describeRequest,
		reqs:    []parityRequest{get("/q?%zz"), get("/q?q=100%")},
		want:    []string{`RawQuery=\"q=100%\"`},
	},
}

// copyEmptyFile is io.CopyN from an empty *os.File into w: a ReadFrom with
// a sendfile source that has nothing to send.
func copyEmptyFile(w http.ResponseWriter) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	io.CopyN(w, f, 10)
}

// reusedValue is the buffer the case "header values checked again on one
// connection" makes a string over and rewrites.
var reusedValue struct {
	mu sync.Mutex
	b  [2]byte
}

func TestCompatParity(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	for i, c := range parityCases {
		mux.Handle(fmt.Sprintf("/case%d/", i), http.StripPrefix(fmt.Sprintf("/case%d", i), c.handler))
	}
	servers := map[string]string{"nethttp": serveParityNetHTTP(t, mux)}
	if parityRiptide != nil {
		servers["riptide"] = parityRiptide(t, mux)
	}
	seen := make(map[string]bool)
	for i, c := range parityCases {
		t.Run(c.name, func(t *testing.T) {
			prefix := fmt.Sprintf("/case%d", i)
			std := transcript(t, servers["nethttp"], prefix, c.reqs)
			for _, w := range c.want {
				if !strings.Contains(std, w) {
					t.Errorf("the net/http transcript lacks %q: the case does not test what it says\n%s", w, std)
				}
			}
			addr, ok := servers["riptide"]
			if !ok {
				t.Skip("riptide compat not plugged in")
			}
			rip := transcript(t, addr, prefix, c.reqs)
			diff := lineDiff(std, rip)
			i := slices.IndexFunc(parityDifferences, func(d parityDiff) bool { return d.cas == c.name })
			switch {
			case i >= 0 && sameLines(diff, parityDifferences[i].lines):
				seen[c.name] = true
			case len(diff) > 0:
				t.Errorf("unlisted differences (- net/http, + riptide):\n%s\n--- net/http:\n%s\n--- riptide:\n%s",
					strings.Join(quoteAll(diff), ", "), std, rip)
			}
		})
	}
	if _, ok := servers["riptide"]; ok {
		for _, d := range parityDifferences {
			if !seen[d.cas] {
				t.Errorf("listed difference for %q no longer happens (or changed): update the list", d.cas)
			}
		}
	}
}

// parityRiptide serves the riptide side of the parity test; nil until the
// compat door is plugged in.
var parityRiptide parityServer

// transcript sends reqs on one connection to addr (each request's target
// prefixed with prefix), then a probe request, and renders what came back.
func transcript(t *testing.T, addr, prefix string, reqs []parityRequest) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(conn)
	var out strings.Builder
	closed := false
	for _, r := range reqs {
		rawReq := addPrefix(r.raw, prefix)
		if !send(conn, rawReq) {
			out.WriteString("[write failed]\n")
			closed = true
			break
		}
		n := max(r.responses, 1)
		methods := requestMethods(rawReq)
		for k := 0; k < n && !closed; k++ {
			method := "GET"
			if k < len(methods) {
				method = methods[k]
			}
			bodySent := r.continueBody == ""
			for {
				res, err := readOne(br, method, &out)
				if err != nil {
					closed = true
					break
				}
				if res.StatusCode == http.StatusContinue && !bodySent {
					send(conn, r.continueBody)
					bodySent = true
				}
				if res.StatusCode >= 200 || res.StatusCode == http.StatusSwitchingProtocols {
					if !bodySent {
						// A final response came first. Send the body anyway,
						// as curl and browsers do once their wait for 100
						// times out: the server must not take it for a
						// request.
						send(conn, r.continueBody)
					}
					if res.Close {
						closed = true
					}
					break
				}
			}
		}
		if closed {
			break
		}
	}
	// Probe: whether the connection is still usable for another request.
	if !closed {
		send(conn, "GET "+prefix+"/__probe HTTP/1.1\r\nHost: p\r\nConnection: close\r\n\r\n")
		if _, err := http.ReadResponse(br, nil); err == nil {
			out.WriteString("[open]\n")
		} else {
			out.WriteString("[closed]\n")
		}
	} else {
		// Whatever the server sends after a response it said was the last
		// would be a bug; make sure the server really closes.
		rest, err := io.ReadAll(br)
		if len(rest) > 0 {
			fmt.Fprintf(&out, "[garbage after close: %q]\n", rest)
		}
		if err != nil && !isReset(err) {
			fmt.Fprintf(&out, "[not closed: %v]\n", err)
		}
		out.WriteString("[closed]\n")
	}
	return out.String()
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}

func send(conn net.Conn, s string) bool {
	// Written from a goroutine so that a server answering before reading a
	// large body cannot deadlock the test; the result is not needed.
	done := make(chan error, 1)
	go func() {
		_, err := io.WriteString(conn, s)
		done <- err
	}()
	select {
	case err := <-done:
		return err == nil
	case <-time.After(100 * time.Millisecond):
		return true
	}
}

// addPrefix inserts prefix before every origin-form target in raw.
func addPrefix(raw, prefix string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(raw, "\r\n") {
		for _, m := range []string{"GET", "HEAD", "POST", "PUT", "OPTIONS", "DELETE"} {
			if strings.HasPrefix(line, m+" /") && strings.HasSuffix(line, "\r\n") && strings.Contains(line, " HTTP/1.") {
				line = m + " " + prefix + line[len(m)+1:]
				break
			}
			if strings.HasPrefix(line, m+" http://") {
				i := strings.Index(line[len(m)+8:], "/") + len(m) + 8
				line = line[:i] + prefix + line[i:]
				break
			}
		}
		b.WriteString(line)
	}
	return b.String()
}

// requestMethods returns the method of every request line in raw.
func requestMethods(raw string) []string {
	var ms []string
	for _, line := range strings.Split(raw, "\r\n") {
		i := strings.IndexByte(line, ' ')
		if i > 0 && (strings.HasSuffix(line, " HTTP/1.1") || strings.HasSuffix(line, " HTTP/1.0")) {
			ms = append(ms, line[:i])
		}
	}
	return ms
}

// readOne reads one response and appends its normalised form to out.
func readOne(br *bufio.Reader, method string, out *strings.Builder) (*http.Response, error) {
	res, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		if err == io.EOF || isReset(err) || errors.Is(err, io.ErrUnexpectedEOF) {
			out.WriteString("[no response: connection closed]\n")
		} else {
			fmt.Fprintf(out, "[bad response: %v]\n", err)
		}
		return nil, err
	}
	fmt.Fprintf(out, "%s %s\n", res.Proto, res.Status)
	if res.Close {
		// ReadResponse removes "Connection: close" from the header.
		out.WriteString("(Connection: close)\n")
	}
	var lines []string
	for k, vs := range res.Header {
		if k == "Date" {
			continue
		}
		for _, v := range vs {
			lines = append(lines, k+": "+v)
		}
	}
	for _, te := range res.TransferEncoding {
		lines = append(lines, "Transfer-Encoding: "+te)
	}
	sort.Strings(lines)
	for _, l := range lines {
		out.WriteString(l + "\n")
	}
	body, berr := io.ReadAll(res.Body)
	switch {
	case len(body) <= 4000 && utf8.Valid(body) && !bytes.ContainsAny(body, "\r\x00"):
		// Line by line, so that differences show up as single lines.
		fmt.Fprintf(out, "body %d bytes:\n", len(body))
		for _, l := range strings.SplitAfter(string(body), "\n") {
			if l != "" {
				fmt.Fprintf(out, "| %q\n", l)
			}
		}
	case len(body) <= 300:
		fmt.Fprintf(out, "body %q\n", body)
	default:
		fmt.Fprintf(out, "body %d bytes sha256 %x\n", len(body), sha256.Sum256(body))
	}
	if berr != nil {
		fmt.Fprintf(out, "body error: %v\n", berr)
		res.Close = true
	}
	var tl []string
	for k, vs := range res.Trailer {
		for _, v := range vs {
			tl = append(tl, "Trailer "+k+": "+v)
		}
	}
	sort.Strings(tl)
	for _, l := range tl {
		out.WriteString(l + "\n")
	}
	return res, nil
}

// lineDiff returns the lines only in a (prefixed "-") and only in b ("+"),
// from a longest-common-subsequence alignment.
func lineDiff(a, b string) []string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var d []string
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			i, j = i+1, j+1
		case j < len(y) && (i == len(x) || lcs[i][j+1] >= lcs[i+1][j]):
			d = append(d, "+"+y[j])
			j++
		default:
			d = append(d, "-"+x[i])
			i++
		}
	}
	return d
}

func init() {
	parityRiptide = func(t *testing.T, h http.Handler) string {
		t.Helper()
		srv := &Server{Handler: parityFromHTTP(h), Logger: slog.New(slog.DiscardHandler)}
		return serveTest(t, srv, testServeOptions{}).Addr
	}
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// sameLines reports whether a and b hold the same lines, in any order.
func sameLines(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

// TestCompatDocListsDifferences keeps docs/compat.md, the user's list of
// compat differences, in step with parityDifferences: every listed case is
// named there.
func TestCompatDocListsDifferences(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("docs/compat.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range slices.Concat(parityDifferences, parityDifferencesH2) {
		if !strings.Contains(string(doc), d.cas) {
			t.Errorf("docs/compat.md does not describe the difference %q", d.cas)
		}
	}
}

// The same cases over HTTP/2: each raw HTTP/1.1 request is parsed and sent
// with Go's HTTP/2 client (h2c with prior knowledge, or TLS with ALPN h2)
// to net/http and to riptide over the same protocol, and what the client
// sees is compared: interim responses, status, header fields (but Date),
// body, trailers, and the error that ended the stream, if any. Cases about
// HTTP/1.1 connection management (pipelining, HTTP/1.0, Connection,
// hijacking, framing) are skipped where HTTP/2 has no such thing.

// parityH2Skip names the cases that cannot be expressed over HTTP/2, and why.
var parityH2Skip = map[string]string{
	"trailers on HTTP/1.0 dropped":              "HTTP/1.0 only",
	"HTTP/1.0 without keep-alive":               "HTTP/1.0 only",
	"HTTP/1.0 keep-alive":                       "HTTP/1.0 only",
	"HTTP/1.0 keep-alive with unknown length":   "HTTP/1.0 only",
	"client Connection: close":                  "Connection is not an HTTP/2 field",
	"pipelined requests":                        "no pipelining in HTTP/2",
	"hijack with buffered bytes":                "no Hijack on HTTP/2",
	"hijack after ReadFrom of an empty file":    "no Hijack on HTTP/2",
	"fragment in target":                        "the client strips a fragment",
	"target net/url rejects":                    "the client cannot send an invalid authority",
	"Transfer-Encoding identity set by handler": "Transfer-Encoding is not an HTTP/2 field",
}

// parityDifferencesH2 are the deliberate differences over HTTP/2 (the same
// for h2c and TLS), as parityDifferences for HTTP/1.1.
var parityDifferencesH2 = []parityDiff{
	{"short body with Content-Length closes", []string{
		"+body error: stream error: stream ID N; INTERNAL_ERROR; received from peer", "-body error: unexpected EOF"},
		"the stream is reset with INTERNAL_ERROR (net/http ends it early); the client sees a failed body either way."},
	{"write past Content-Length", []string{
		"+body 0 bytes:", "+body error: stream error: stream ID N; INTERNAL_ERROR; received from peer",
		"-Content-Type: text/plain; charset=utf-8", "-body 3 bytes:", "-| \"too\"",
		"-body error: net/http: server replied with more than declared Content-Length; truncated",
		"+body 0 bytes:", "+body error: stream error: stream ID N; INTERNAL_ERROR; received from peer",
		"-Content-Type: text/plain; charset=utf-8", "-body 3 bytes:", "-| \"too\"",
		"-body error: net/http: server replied with more than declared Content-Length; truncated"},
		"the write that passes the declared length fails with http.ErrContentLength, as on HTTP/1.1, and the " +
			"stream is reset; net/http's HTTP/2 sends all of it, more than it declared, and leaves the client to cut it."},
	{"body closed by handler", []string{
		"+Content-Length: 33", "-Content-Length: 22", "+body 33 bytes:", `+| "http: invalid Read on closed Body"`,
		"-body 22 bytes:", `-| "body closed by handler"`},
		"a read after Close fails with http.ErrBodyReadAfterClose on both protocols; net/http's HTTP/2 returns " +
			"its own \"body closed by handler\"."},
	{"io.Copy uses ReadFrom", []string{
		"+Content-Length: 5000", "+X-Readerfrom: true", "-X-Readerfrom: false",
		"+Content-Length: 5000", "+X-Readerfrom: true", "-X-Readerfrom: false"},
		"one ResponseWriter serves both protocols: it is an io.ReaderFrom over HTTP/2 too (copying through Write " +
			"there, as a stream has no socket to sendfile to), where net/http's HTTP/2 writer is not; " + whyBuffer},
}

// parityProto is one HTTP/2 flavour of the parity test.
type parityProto struct {
	name   string
	scheme string
	// serve starts net/http (std) or riptide on h and returns the address.
	serve  func(t *testing.T, h http.Handler, std bool) string
	client func(t *testing.T) *http.Client
}

// parityH2Protos returns h2c and TLS h2. The TLS servers share httptest's
// certificate, which the TLS client trusts.
func parityH2Protos(t *testing.T) []parityProto {
	certSrv := httptest.NewUnstartedServer(http.NotFoundHandler())
	certSrv.EnableHTTP2 = true
	certSrv.StartTLS()
	t.Cleanup(certSrv.Close)
	certs := certSrv.TLS.Certificates
	pool := certSrv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	client := func(t *testing.T, tlsOn bool) *http.Client {
		tr := &http.Transport{ExpectContinueTimeout: 10 * time.Second}
		var p http.Protocols
		if tlsOn {
			p.SetHTTP2(true)
			tr.TLSClientConfig = &tls.Config{RootCAs: pool}
		} else {
			p.SetUnencryptedHTTP2(true)
		}
		tr.Protocols = &p
		t.Cleanup(tr.CloseIdleConnections)
		return &http.Client{Transport: tr, Timeout: 20 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	serve := func(t *testing.T, h http.Handler, std, tlsOn bool) string {
		tc := &tls.Config{Certificates: certs}
		if std {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			var p http.Protocols
			p.SetHTTP1(true)
			srv := &http.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0), Protocols: &p}
			if tlsOn {
				p.SetHTTP2(true)
				srv.TLSConfig = tc
				go srv.ServeTLS(ln, "", "")
			} else {
				p.SetUnencryptedHTTP2(true)
				go srv.Serve(ln)
			}
			t.Cleanup(func() { srv.Close() })
			return ln.Addr().String()
		}
		srv := &Server{Handler: parityFromHTTP(h), Logger: slog.New(slog.DiscardHandler), HTTP2: &HTTP2Config{H2C: true}}
		if tlsOn {
			srv.TLSConfig = tc
		}
		return serveTest(t, srv, testServeOptions{TLS: tlsOn}).Addr
	}
	return []parityProto{
		{"h2c", "http", func(t *testing.T, h http.Handler, std bool) string { return serve(t, h, std, false) },
			func(t *testing.T) *http.Client { return client(t, false) }},
		{"tls", "https", func(t *testing.T, h http.Handler, std bool) string { return serve(t, h, std, true) },
			func(t *testing.T) *http.Client { return client(t, true) }},
	}
}

func TestCompatParityH2(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	for i, c := range parityCases {
		mux.Handle(fmt.Sprintf("/case%d/", i), http.StripPrefix(fmt.Sprintf("/case%d", i), c.handler))
	}
	for _, p := range parityH2Protos(t) {
		t.Run(p.name, func(t *testing.T) {
			std, rip := p.serve(t, mux, true), p.serve(t, mux, false)
			c := p.client(t)
			seen := make(map[string]bool)
			for i, cs := range parityCases {
				t.Run(cs.name, func(t *testing.T) {
					if why, ok := parityH2Skip[cs.name]; ok {
						t.Skip(why)
					}
					prefix := fmt.Sprintf("/case%d", i)
					a := transcriptH2(t, c, p.scheme, std, prefix, cs.reqs)
					b := transcriptH2(t, c, p.scheme, rip, prefix, cs.reqs)
					if !strings.Contains(a, "HTTP/2.0 ") && !strings.Contains(a, "stream error") {
						t.Errorf("net/http sent no HTTP/2 response: the case tests nothing\n%s", a)
					}
					if os.Getenv("PARITY_DEBUG") != "" {
						t.Log(a, "\n=====\n", b)
					}
					diff := lineDiff(a, b)
					k := slices.IndexFunc(parityDifferencesH2, func(d parityDiff) bool { return d.cas == cs.name })
					switch {
					case k >= 0 && sameLines(diff, parityDifferencesH2[k].lines):
						seen[cs.name] = true
					case len(diff) > 0:
						t.Errorf("unlisted differences over %s (- net/http, + riptide):\n%s\n--- net/http:\n%s\n--- riptide:\n%s",
							p.name, strings.Join(quoteAll(diff), ", "), a, b)
					}
				})
			}
			for _, d := range parityDifferencesH2 {
				if !seen[d.cas] {
					t.Errorf("listed HTTP/2 difference for %q no longer happens (or changed): update the list", d.cas)
				}
			}
		})
	}
}

// transcriptH2 sends each raw request of reqs (target prefixed) to addr
// over HTTP/2 and renders what the client saw.
func transcriptH2(t *testing.T, c *http.Client, scheme, addr, prefix string, reqs []parityRequest) string {
	t.Helper()
	var out strings.Builder
	for _, pr := range reqs {
		br := bufio.NewReader(strings.NewReader(addPrefix(pr.raw, prefix)))
		for {
			in, err := http.ReadRequest(br)
			if err != nil {
				break
			}
			body, _ := io.ReadAll(in.Body)
			if pr.continueBody != "" {
				body = []byte(pr.continueBody)
			}
			renderH2(t, c, scheme, addr, in, body, &out)
		}
	}
	return out.String()
}

// renderH2 sends one request parsed from the raw form and appends the
// normalised response to out.
func renderH2(t *testing.T, c *http.Client, scheme, addr string, in *http.Request, body []byte, out *strings.Builder) {
	host := in.Host
	if host == "" {
		host = addr
	}
	u := &url.URL{Scheme: scheme, Host: addr, Opaque: "*"}
	if in.RequestURI != "*" {
		// The :path as sent, escapes and all (http2 takes it from Opaque
		// after "//" and the request's Host).
		u.Opaque = "//" + host + in.URL.RequestURI()
	}
	var rd io.Reader = bytes.NewReader(body)
	if len(in.TransferEncoding) > 0 {
		rd = io.MultiReader(rd) // length unknown, as sent chunked
	}
	req, err := http.NewRequest(in.Method, u.String(), rd)
	if err != nil {
		t.Fatal(err)
	}
	req.URL = u
	req.Host = host
	for k, vs := range in.Header {
		switch k {
		case "Host", "Connection", "Keep-Alive", "Transfer-Encoding", "Content-Length", "Trailer", "Te", "Upgrade":
			continue
		}
		req.Header[k] = vs
	}
	if len(in.TransferEncoding) == 0 {
		req.ContentLength = int64(len(body))
	}
	if len(in.Trailer) > 0 {
		req.Trailer = in.Trailer
	}
	fmt.Fprintf(out, "> %s %s\n", in.Method, in.RequestURI)
	trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
		fmt.Fprintf(out, "interim %d %v\n", code, h)
		return nil
	}}
	req = req.WithContext(httptrace.WithClientTrace(t.Context(), trace))
	res, err := c.Do(req)
	if err != nil {
		fmt.Fprintf(out, "[error: %v]\n", streamID.ReplaceAllString(err.Error(), "stream ID N"))
		return
	}
	defer res.Body.Close()
	fmt.Fprintf(out, "%s %s\n", res.Proto, res.Status)
	var lines []string
	for k, vs := range res.Header {
		if k == "Date" {
			continue
		}
		for _, v := range vs {
			lines = append(lines, k+": "+v)
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		out.WriteString(l + "\n")
	}
	b, berr := io.ReadAll(res.Body)
	if len(b) <= 4000 && utf8.Valid(b) && !bytes.ContainsAny(b, "\r\x00") {
		fmt.Fprintf(out, "body %d bytes:\n", len(b))
		for _, l := range strings.SplitAfter(string(b), "\n") {
			if l != "" {
				fmt.Fprintf(out, "| %q\n", strings.ReplaceAll(l, addr, "ADDR"))
			}
		}
	} else {
		fmt.Fprintf(out, "body %d bytes sha256 %x\n", len(b), sha256.Sum256(b))
	}
	if berr != nil {
		fmt.Fprintf(out, "body error: %v\n", streamID.ReplaceAllString(berr.Error(), "stream ID N"))
	}
	var tl []string
	for k, vs := range res.Trailer {
		for _, v := range vs {
			tl = append(tl, "Trailer "+k+": "+v)
		}
	}
	sort.Strings(tl)
	for _, l := range tl {
		out.WriteString(l + "\n")
	}
}

// streamID matches the stream number in an HTTP/2 error, which depends on
// how many streams the connection carried before.
var streamID = regexp.MustCompile(`stream ID [0-9]+`)
