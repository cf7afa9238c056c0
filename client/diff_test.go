package client

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"testing"

	"github.com/riptide-http/riptide/h1"
)

// The differential test sends the same scripted responses to net/http's
// Transport and to riptide's RoundTripper and compares what each returns.
// Every difference must be listed in knownDifferences with its
// justification: a new difference fails the test, and so does a listed one
// that no longer occurs.

type diffCase struct {
	name   string
	method string
	resp   string // raw bytes the server writes; it then closes
}

func gzipped(s string) string {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.String()
}

var diffCases = []diffCase{
	// Framing (RFC 9112 §6.3).
	{"content-length", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello"},
	{"chunked", "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"},
	{"chunked-extensions", "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n0;x\r\n\r\n"},
	{"chunked-uppercase-hex", "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n"},
	{"close-delimited", "GET", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the server closes"},
	{"http10-close-delimited", "GET", "HTTP/1.0 200 OK\r\n\r\nold school"},
	{"http10-keep-alive", "GET", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok"},
	{"connection-close", "GET", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"},
	{"cl-and-te", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"},
	{"duplicate-cl-equal", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok"},
	{"zero-length", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"},
	// Interim responses (RFC 9110 §15.2).
	{"1xx-early-hints", "GET", "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"},
	{"1xx-unsolicited-100", "GET", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"},
	{"1xx-two", "GET", "HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 103 Early Hints\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n"},
	// Responses without a body (RFC 9110 §6.4.1).
	{"head", "HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\nContent-Type: text/html\r\n\r\n"},
	{"head-chunked", "HEAD", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"},
	{"head-no-length", "HEAD", "HTTP/1.1 200 OK\r\n\r\n"},
	{"204", "GET", "HTTP/1.1 204 No Content\r\nX-A: b\r\n\r\n"},
	{"204-with-length", "GET", "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"},
	{"304", "GET", "HTTP/1.1 304 Not Modified\r\nContent-Length: 100\r\nEtag: \"x\"\r\n\r\n"},
	// Trailers (RFC 9112 §7.1.2).
	{"trailers-declared", "GET", "HTTP/1.1 200 OK\r\nTrailer: X-Checksum, x-other\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-Checksum: abc\r\nX-Other: 1\r\n\r\n"},
	{"trailers-undeclared", "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nx-late: yes\r\n\r\n"},
	{"trailer-header-without-chunked", "GET", "HTTP/1.1 200 OK\r\nTrailer: X-A\r\nContent-Length: 2\r\n\r\nok"},
	// Header fields.
	{"repeated-fields", "GET", "HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nx-custom-HEADER: v\r\nContent-Length: 0\r\n\r\n"},
	{"field-whitespace", "GET", "HTTP/1.1 200 OK\r\nX-A:   padded  \r\nX-B:\r\nContent-Length: 0\r\n\r\n"},
	{"obs-text-value", "GET", "HTTP/1.1 200 OK\r\nX-A: caf\xe9\r\nContent-Length: 0\r\n\r\n"},
	{"no-reason", "GET", "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n"},
	{"custom-reason", "GET", "HTTP/1.1 200 Fine Thanks\r\nContent-Length: 0\r\n\r\n"},
	{"unregistered-status", "GET", "HTTP/1.1 599 Whatever\r\nContent-Length: 0\r\n\r\n"},
	{"gzip", "GET", "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: " + fmt.Sprint(len(gzipped("compressed body"))) + "\r\n\r\n" + gzipped("compressed body")},
	{"leading-crlf", "GET", "\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"},
	// Malformed responses.
	{"empty-response", "GET", ""},
	{"garbage", "GET", "garbage\r\n\r\n"},
	{"bad-status-code", "GET", "HTTP/1.1 abc OK\r\nContent-Length: 0\r\n\r\n"},
	{"http2-version", "GET", "HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n"},
	{"bare-lf", "GET", "HTTP/1.1 200 OK\nContent-Length: 2\n\nok"},
	{"space-before-colon", "GET", "HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nok"},
	{"obs-fold", "GET", "HTTP/1.1 200 OK\r\nX-A: one\r\n two\r\nContent-Length: 0\r\n\r\n"},
	{"invalid-field-name", "GET", "HTTP/1.1 200 OK\r\nX(A): 1\r\nContent-Length: 0\r\n\r\n"},
	{"nul-in-value", "GET", "HTTP/1.1 200 OK\r\nX-A: a\x00b\r\nContent-Length: 0\r\n\r\n"},
	{"header-without-colon", "GET", "HTTP/1.1 200 OK\r\nNoColon\r\nContent-Length: 0\r\n\r\n"},
	{"duplicate-cl-conflict", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok"},
	{"bad-content-length", "GET", "HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\nok"},
	{"negative-content-length", "GET", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nok"},
	{"te-unknown", "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nraw"},
	{"te-gzip-chunked", "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"},
	{"truncated-head", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"},
	{"truncated-body", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort"},
	{"truncated-chunked", "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel"},
	{"bad-chunk-size", "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n"},
	{"chunk-missing-crlf", "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokXX0\r\n\r\n"},
	{"bad-trailer", "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nbad trailer\r\n\r\n"},
}

// knownDifferences lists, per case, how riptide deliberately differs from
// net/http and why.
var knownDifferences = map[string]string{
	"bare-lf": "riptide's h1 codec requires CRLF line endings (RFC 9112 §2.2 lets a recipient " +
		"accept bare LF, but lenient line endings are a response-splitting vector); net/http accepts bare LF.",
	"obs-fold": "obsolete line folding (RFC 9112 §5.2): a user agent may replace it with SP; riptide's " +
		"strict codec rejects it as it does in requests, net/http unfolds it.",
	"cl-and-te": "both Content-Length and Transfer-Encoding: both clients let chunked win, but riptide " +
		"reports Close and does not reuse the connection, as RFC 9112 §6.3 requires (\"a client MUST close " +
		"the connection after processing the response\"); net/http keeps it.",
	"http2-version": "an HTTP/1.1 connection answered with \"HTTP/2.0\": riptide rejects a status line whose " +
		"major version is not 1 (RFC 9112 §2.3); net/http accepts any version number.",
	"space-before-colon": "whitespace between field name and colon: RFC 9112 §5.1 forbids it and makes proxies " +
		"strip it; riptide rejects the response (a classic response-splitting vector), net/http keeps a " +
		"\"Content-Length \" field and reads the body until close.",
	"leading-crlf": "riptide skips empty lines before the status line (RFC 9112 §2.2 robustness); net/http " +
		"rejects the response as malformed.",
}

type diffOutcome struct {
	Err              bool
	Status           string
	StatusCode       int
	Proto            string
	Header           http.Header
	ContentLength    int64
	TransferEncoding []string
	Close            bool
	Uncompressed     bool
	Body             string
	BodyErr          bool
	Trailer          http.Header
}

func runDiffCase(t *testing.T, rt http.RoundTripper, url, method string) diffOutcome {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return diffOutcome{Err: true}
	}
	defer resp.Body.Close()
	body, berr := io.ReadAll(resp.Body)
	return diffOutcome{
		Status: resp.Status, StatusCode: resp.StatusCode, Proto: resp.Proto,
		Header: resp.Header, ContentLength: resp.ContentLength,
		TransferEncoding: resp.TransferEncoding, Close: resp.Close, Uncompressed: resp.Uncompressed,
		Body: string(body), BodyErr: berr != nil, Trailer: resp.Trailer,
	}
}

func TestDifferentialNetHTTP(t *testing.T) {
	byPath := map[string]string{}
	for _, c := range diffCases {
		byPath["/"+c.name] = c.resp
	}
	s := newRawServer(t, func(c net.Conn, req *h1.Request, body []byte) bool {
		c.Write([]byte(byPath[string(req.Path)]))
		return false
	})
	seen := map[string]bool{}
	for _, c := range diffCases {
		t.Run(c.name, func(t *testing.T) {
			std := &http.Transport{}
			defer std.CloseIdleConnections()
			ours := &Client{}
			defer ours.CloseIdleConnections()
			want := runDiffCase(t, std, s.url("/"+c.name), c.method)
			got := runDiffCase(t, ours, s.url("/"+c.name), c.method)
			why, listed := knownDifferences[c.name]
			if reflect.DeepEqual(want, got) {
				if listed {
					t.Errorf("listed as a known difference, but riptide and net/http now agree; remove it from knownDifferences")
				}
				return
			}
			seen[c.name] = true
			if !listed {
				t.Errorf("riptide differs from net/http:\nnet/http: %+v\nriptide:  %+v", want, got)
				return
			}
			t.Logf("known difference (%s)\nnet/http: %+v\nriptide:  %+v", why, want, got)
		})
	}
	for name := range knownDifferences {
		found := false
		for _, c := range diffCases {
			found = found || c.name == name
		}
		if !found {
			t.Errorf("knownDifferences lists %q, which is not a case", name)
		}
	}
}
