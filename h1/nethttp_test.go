package h1

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
)

// This file compares the parsers with net/http.ReadRequest and
// http.ReadResponse. net/http is the reference most Go code was written
// against; where riptide answers differently it must be on purpose, and every
// such purpose is written down below. The same comparison runs in the fuzz
// targets, so an input the fuzzer finds that disagrees for an unlisted reason
// fails there too.

// reqView is what both request parsers are compared on.
type reqView struct {
	ok             bool
	err            error
	method, target string
	host           string
	contentLength  int64
	chunked, close bool
}

func (v reqView) String() string {
	if !v.ok {
		return fmt.Sprintf("reject(%v)", v.err)
	}
	return fmt.Sprintf("%s %q host=%q cl=%d chunked=%v close=%v", v.method, v.target, v.host, v.contentLength, v.chunked, v.close)
}

// h1RequestView parses in as one complete buffer; an incomplete head counts
// as a rejection, as it does for net/http (unexpected EOF).
func h1RequestView(in []byte) (reqView, *Request) {
	r := new(Request)
	_, err := r.Parse(in, nil)
	if err != nil {
		return reqView{err: err}, r
	}
	v := reqView{ok: true, method: string(r.Method), target: string(r.Target),
		host: string(r.Host), contentLength: r.ContentLength, chunked: r.Chunked, close: r.Close}
	switch r.Form {
	case AbsoluteForm:
		// net/http's Request.Host is the target's authority here
		// (RFC 9112 §3.2.2 says the same).
		v.host = string(targetAuthority(r.Target))
	case AuthorityForm:
		v.host = string(r.Target)
	}
	return v, r
}

// targetAuthority returns the authority of an absolute-form target.
func targetAuthority(t []byte) []byte {
	i := bytes.Index(t, []byte("://"))
	a := t[i+3:]
	if j := bytes.IndexAny(a, "/?"); j >= 0 {
		a = a[:j]
	}
	return a
}

func netRequestView(in []byte) reqView {
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(in)))
	if err != nil {
		return reqView{err: err}
	}
	v := reqView{ok: true, method: req.Method, target: req.RequestURI, host: req.Host,
		contentLength: req.ContentLength, close: req.Close}
	for _, te := range req.TransferEncoding {
		if te == "chunked" {
			v.chunked = true
		}
	}
	return v
}

// Deliberate request disagreements where riptide rejects and net/http's
// ReadRequest accepts, keyed by the error riptide returns. ReadRequest is
// only the first half of net/http's validation (its server checks Host and
// versions afterwards), and riptide is strict where lenient parsing is what
// request smuggling exploits.
var stricterRequest = map[*Error]string{
	ErrBadLineEnding:       "RFC 9112 §2.2: bare LF as a line terminator; net/http accepts it, riptide requires CRLF so that no two hops split lines differently",
	ErrObsFold:             "RFC 9112 §5.2: obs-fold; net/http unfolds it into the value, riptide rejects it (the RFC's other permitted choice) since folding is a smuggling vector",
	ErrSpaceBeforeColon:    "RFC 9112 §5.1: whitespace between field name and colon MUST be rejected with 400; net/http tolerates it",
	ErrMissingHost:         "RFC 9112 §3.2: HTTP/1.1 requires Host; net/http checks this in its server, not in ReadRequest",
	ErrBadHost:             "RFC 9112 §3.2 / RFC 3986 §3.2.2: Host must be uri-host [:port] (no userinfo, path or spaces); net/http checks this in its server, not in ReadRequest",
	ErrBadTarget:           "RFC 9112 §3.2: target form must match the method (authority-form only for CONNECT, * only for OPTIONS) and use RFC 3986 characters; net/http passes through '|', '{', '\"', raw '*' for GET, CONNECT with a path",
	ErrVersionNotSupp:      "RFC 9110 §6.2 / §15.6.6: only HTTP/1.0 and HTTP/1.1 are spoken; ReadRequest accepts any HTTP/x.y and leaves the 505 to the server",
	ErrTEOnHTTP10:          "RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 message means faulty framing; net/http silently ignores the field",
	ErrTEWithCL:            "RFC 9112 §6.1: a server MAY reject Transfer-Encoding with Content-Length and MUST close after it; riptide rejects, net/http drops Content-Length",
	ErrBadRequestLine:      "RFC 9112 §3: request-line is method SP request-target SP version with a non-empty target; net/http accepts an empty target for CONNECT (\"CONNECT  HTTP/1.1\")",
	ErrHeaderTooLarge:      "limits: ReadRequest has no head-size limit of its own (the server applies MaxHeaderBytes)",
	ErrHeaderLineLarge:     "limits: ReadRequest has no per-field limit",
	ErrTooManyHeaders:      "limits: ReadRequest has no field-count limit",
	ErrURITooLong:          "limits: ReadRequest has no request-line limit",
	ErrBadHeaderName:       "RFC 9110 §5.1: field names are tokens; net/http accepts a name with spaces inside (\"X  Y: z\")",
	ErrBadTransferEncoding: "RFC 9112 §6.1 / RFC 9110 §5.6.1: riptide refuses empty list elements and parameters in Transfer-Encoding (a TE.TE smuggling vector); net/http ignores Transfer-Encoding on HTTP/1.0 entirely",
}

// laxerRequest lists the inputs riptide accepts and net/http rejects. This is
// the dangerous direction, so each entry is a predicate over the input that
// must hold for the disagreement to be allowed.
var laxerRequest = []struct {
	why   string
	match func(in []byte, r *Request) bool
}{
	{"RFC 9112 §2.2: a server SHOULD ignore at least one empty line (CRLF) before the request-line; ReadRequest fails on it",
		func(in []byte, r *Request) bool { return bytes.HasPrefix(in, []byte("\r\n")) }},
}

// fieldDiffRequest lists the accepted inputs whose fields differ.
var fieldDiffRequest = []struct {
	why   string
	match func(in []byte, r *Request, h1, nh reqView) bool
}{
	{"RFC 3986 §2.1: the host of an absolute-form target is reported as received; net/http percent-decodes URL.Host (\"%C3%A9\" becomes \"\xc3\xa9\")",
		func(in []byte, r *Request, h1, nh reqView) bool {
			if r.Form != AbsoluteForm || !strings.Contains(h1.host, "%") {
				return false
			}
			dec, err := url.PathUnescape(h1.host)
			h1.host = dec
			return err == nil && h1 == nh
		}},
}

// compareRequest returns "" when riptide and net/http agree on in (or differ
// for a listed reason) and a description of the disagreement otherwise.
func compareRequest(in []byte) string {
	h, r := h1RequestView(in)
	n := netRequestView(in)
	switch {
	case !h.ok && !n.ok:
		return ""
	case !h.ok && n.ok:
		if errors.Is(h.err, ErrNeedMore) {
			return "" // cannot happen for complete input; see below
		}
		var e *Error
		if errors.As(h.err, &e) {
			if _, ok := stricterRequest[e]; ok {
				return ""
			}
		}
		return fmt.Sprintf("riptide rejects (%v), net/http accepts (%v)", h.err, n)
	case h.ok && !n.ok:
		for _, l := range laxerRequest {
			if l.match(in, r) {
				return ""
			}
		}
		return fmt.Sprintf("riptide accepts (%v), net/http rejects (%v)", h, n.err)
	}
	if h == n {
		return ""
	}
	for _, f := range fieldDiffRequest {
		if f.match(in, r, h, n) {
			return ""
		}
	}
	return fmt.Sprintf("fields differ: riptide %v, net/http %v", h, n)
}

// respView is what both response parsers are compared on. contentLength is
// normalised to net/http's meaning: the body length when known, else -1.
type respView struct {
	ok             bool
	err            error
	status         int
	contentLength  int64
	chunked, close bool
}

func (v respView) String() string {
	if !v.ok {
		return fmt.Sprintf("reject(%v)", v.err)
	}
	return fmt.Sprintf("%d cl=%d chunked=%v close=%v", v.status, v.contentLength, v.chunked, v.close)
}

func h1ResponseView(in []byte, head bool) (respView, *Response) {
	r := new(Response)
	_, err := r.Parse(in, nil)
	if err != nil {
		return respView{err: err}, r
	}
	v := respView{ok: true, status: r.Status, close: r.Close}
	switch r.BodyMode(head) {
	case BodyNone:
		v.contentLength = 0
		if head {
			// net/http reports the framing fields of a HEAD response as sent.
			v.contentLength, v.chunked = r.ContentLength, r.Chunked
		}
	case BodyLength:
		v.contentLength = r.ContentLength
	case BodyChunked:
		v.contentLength, v.chunked = -1, true
	case BodyUntilClose:
		v.contentLength, v.close = -1, true
	}
	return v, r
}

func netResponseView(in []byte, head bool) respView {
	var req *http.Request
	if head {
		req = &http.Request{Method: "HEAD"}
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(in)), req)
	if err != nil {
		return respView{err: err}
	}
	v := respView{ok: true, status: resp.StatusCode, contentLength: resp.ContentLength, close: resp.Close}
	for _, te := range resp.TransferEncoding {
		if te == "chunked" {
			v.chunked = true
		}
	}
	return v
}

// Deliberate response disagreements where riptide rejects, keyed by error.
var stricterResponse = map[*Error]string{
	ErrBadLineEnding:       stricterRequest[ErrBadLineEnding],
	ErrObsFold:             "RFC 9112 §5.2: a user agent MUST replace obs-fold or reject; riptide rejects",
	ErrSpaceBeforeColon:    "RFC 9112 §5.1: whitespace before the colon is a smuggling vector; a proxy MUST remove it, riptide rejects",
	ErrBadStatusLine:       "RFC 9112 §4: status-line is HTTP/1.x SP 3DIGIT SP reason with status 100-999; net/http accepts 000-099, HTTP/2.0, and a tab or control in the reason",
	ErrTEOnHTTP10:          "RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 message means faulty framing; net/http ignores the field and reads until close",
	ErrHeaderTooLarge:      stricterRequest[ErrHeaderTooLarge],
	ErrHeaderLineLarge:     stricterRequest[ErrHeaderLineLarge],
	ErrTooManyHeaders:      stricterRequest[ErrTooManyHeaders],
	ErrBadHeaderName:       stricterRequest[ErrBadHeaderName],
	ErrBadTransferEncoding: stricterRequest[ErrBadTransferEncoding],
}

var laxerResponse = []struct {
	why   string
	match func(in []byte, r *Response) bool
}{
	{"RFC 9112 §6.3 (item 4): a response whose final coding is not chunked is read until close; net/http refuses any coding but chunked",
		func(in []byte, r *Response) bool { return r.TransferEncoding && !r.Chunked }},
	{"RFC 9112 §2.2: leading empty lines are ignored; net/http fails on them",
		func(in []byte, r *Response) bool { return bytes.HasPrefix(in, []byte("\r\n")) }},
}

var fieldDiffResponse = []struct {
	why   string
	match func(in []byte, r *Response, h1, nh respView) bool
}{
	{"RFC 9112 §6.3 (item 3): Transfer-Encoding with Content-Length may be smuggling, so riptide does not reuse the connection; net/http does",
		func(in []byte, r *Response, h1, nh respView) bool {
			return r.TransferEncoding && r.Known(HeaderContentLength) != nil && h1.close && !nh.close
		}},
}

func compareResponse(in []byte, head bool) string {
	h, r := h1ResponseView(in, head)
	n := netResponseView(in, head)
	switch {
	case !h.ok && !n.ok:
		return ""
	case !h.ok && n.ok:
		var e *Error
		if errors.As(h.err, &e) {
			if _, ok := stricterResponse[e]; ok {
				return ""
			}
		}
		return fmt.Sprintf("riptide rejects (%v), net/http accepts (%v)", h.err, n)
	case h.ok && !n.ok:
		for _, l := range laxerResponse {
			if l.match(in, r) {
				return ""
			}
		}
		return fmt.Sprintf("riptide accepts (%v), net/http rejects (%v)", h, n.err)
	}
	if h == n {
		return ""
	}
	for _, f := range fieldDiffResponse {
		if f.match(in, r, h, n) {
			return ""
		}
	}
	return fmt.Sprintf("fields differ: riptide %v, net/http %v", h, n)
}

// ownRequestCorpus adds cases the llhttp vectors do not cover.
var ownRequestCorpus = map[string]string{
	"simple GET":            "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n",
	"HTTP/1.0 no host":      "GET / HTTP/1.0\r\n\r\n",
	"HTTP/1.0 keep-alive":   "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
	"close":                 "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
	"close in list":         "GET / HTTP/1.1\r\nHost: a\r\nConnection: foo, CLOSE\r\n\r\n",
	"POST CL":               "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello",
	"POST chunked":          "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
	"absolute form":         "GET http://example.com:8080/p?q HTTP/1.1\r\nHost: other\r\n\r\n",
	"authority form":        "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
	"asterisk form":         "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
	"asterisk GET":          "GET * HTTP/1.1\r\nHost: a\r\n\r\n",
	"CONNECT origin":        "CONNECT / HTTP/1.1\r\nHost: a\r\n\r\n",
	"IPv6 host":             "GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n",
	"empty host":            "GET / HTTP/1.1\r\nHost:\r\n\r\n",
	"host userinfo":         "GET / HTTP/1.1\r\nHost: u@a\r\n\r\n",
	"host path":             "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n",
	"two hosts":             "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n",
	"missing host":          "GET / HTTP/1.1\r\n\r\n",
	"HTTP/1.2":              "GET / HTTP/1.2\r\nHost: a\r\n\r\n",
	"HTTP/2.0":              "GET / HTTP/2.0\r\nHost: a\r\n\r\n",
	"HTTP/0.9":              "GET / HTTP/0.9\r\nHost: a\r\n\r\n",
	"bare LF":               "GET / HTTP/1.1\nHost: a\n\n",
	"obs-fold":              "GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n",
	"space before colon":    "GET / HTTP/1.1\r\nHost: a\r\nX : b\r\n\r\n",
	"CL dup same":           "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
	"CL dup differ":         "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx",
	"CL plus":               "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\nx",
	"CL list":               "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1, 1\r\n\r\nx",
	"TE gzip chunked":       "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
	"TE gzip":               "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n",
	"TE chunked twice":      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
	"TE and CL":             "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
	"TE on 1.0":             "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
	"NUL in value":          "GET / HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n",
	"DEL in value":          "GET / HTTP/1.1\r\nHost: a\r\nX: a\x7fb\r\n\r\n",
	"obs-text in value":     "GET / HTTP/1.1\r\nHost: a\r\nX: a\x80b\r\n\r\n",
	"CR in value":           "GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n",
	"double space":          "GET  / HTTP/1.1\r\nHost: a\r\n\r\n",
	"leading CRLF":          "\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
	"pipe in target":        "GET /a|b HTTP/1.1\r\nHost: a\r\n\r\n",
	"bad percent":           "GET /a%zz HTTP/1.1\r\nHost: a\r\n\r\n",
	"fragment":              "GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n",
	"expect 100":            "PUT / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n",
	"upgrade":               "GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
	"ctl in method":         "G\x01T / HTTP/1.1\r\nHost: a\r\n\r\n",
	"lower-case method":     "get / HTTP/1.1\r\nHost: a\r\n\r\n",
	"tab separator":         "GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n",
	"header without colon":  "GET / HTTP/1.1\r\nHost: a\r\nfoo\r\n\r\n",
	"empty header name":     "GET / HTTP/1.1\r\nHost: a\r\n: b\r\n\r\n",
	"OWS trimmed":           "GET / HTTP/1.1\r\nHost: \t a \t\r\n\r\n",
	"many headers":          "GET / HTTP/1.1\r\nHost: a\r\n" + strings.Repeat("X-A: b\r\n", 99) + "\r\n",
	"too many headers":      "GET / HTTP/1.1\r\nHost: a\r\n" + strings.Repeat("X-A: b\r\n", 100) + "\r\n",
	"long target":           "GET /" + strings.Repeat("a", 9000) + " HTTP/1.1\r\nHost: a\r\n\r\n",
	"lower-case version":    "GET / http/1.1\r\nHost: a\r\n\r\n",
	"multi-digit version":   "GET / HTTP/01.1\r\nHost: a\r\n\r\n",
	"absolute no authority": "GET http:///p HTTP/1.1\r\nHost: a\r\n\r\n",
	"absolute userinfo":     "GET http://u@a/ HTTP/1.1\r\nHost: a\r\n\r\n",
	"absolute pct host":     "GET http://caf%C3%A9.example/ HTTP/1.1\r\nHost: a\r\n\r\n",
	"host pct NUL":          "GET / HTTP/1.1\r\nHost: a%00\r\n\r\n",
	"CL dup 1 and 01":       "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 01\r\n\r\nx",
}

var ownResponseCorpus = map[string]string{
	"200 CL":              "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
	"200 chunked":         "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
	"200 until close":     "HTTP/1.1 200 OK\r\n\r\n",
	"204":                 "HTTP/1.1 204 No Content\r\n\r\n",
	"304 with CL":         "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n",
	"100":                 "HTTP/1.1 100 Continue\r\n\r\n",
	"no reason":           "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n",
	"empty reason":        "HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n",
	"status 000":          "HTTP/1.1 000 X\r\nContent-Length: 0\r\n\r\n",
	"HTTP/2.0":            "HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n",
	"1.0 keep-alive":      "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n",
	"1.0 close":           "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n",
	"1.0 TE":              "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
	"TE and CL":           "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
	"TE gzip":             "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
	"CL differ":           "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
	"CL same":             "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
	"connection close":    "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
	"bare LF":             "HTTP/1.1 200 OK\nContent-Length: 0\n\n",
	"obs-fold":            "HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 0\r\n\r\n",
	"HEAD response CL":    "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n",
	"bad status":          "HTTP/1.1 2x0 OK\r\n\r\n",
	"space before colon":  "HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n",
	"long status":         "HTTP/1.1 1000 OK\r\n\r\n",
	"custom reason":       "HTTP/1.1 299 Whatever You Like\r\nContent-Length: 0\r\n\r\n",
	"obs-text in reason":  "HTTP/1.1 200 \xe9t\xe9\r\nContent-Length: 0\r\n\r\n",
	"set-cookie repeated": "HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 0\r\n\r\n",
}

// knownCorpusDisagreements names every corpus case (llhttp vector or own
// case) on which riptide and net/http disagree, with the reason. A case that
// disagrees and is not here fails; so does a case listed here that agrees
// (the list must not go stale). The reasons are the rule-level ones above;
// this list pins which inputs exercise them.
var knownCorpusDisagreements = map[string]string{
	"llhttp/uri.md/Fragment in URI": "riptide rejects, net/http accepts: RFC 9112 §3.2 a request-target has no fragment",
	"own/fragment":                  "riptide rejects, net/http accepts: RFC 9112 §3.2 a request-target has no fragment",
	"own/empty host":                "riptide rejects, net/http accepts: RFC 9110 §4.2.1 an http URI with an empty host MUST be rejected",
	"llhttp/connection.md/Invalid whitespace token with `Connection` header field (lenient)":              "riptide rejects, net/http accepts: RFC 9112 §5.1 MUST reject whitespace before the colon",
	"llhttp/connection.md/Invalid whitespace token with `Connection` header field":                        "riptide rejects, net/http accepts: RFC 9112 §5.1 MUST reject whitespace before the colon",
	"llhttp/connection.md/Multiple tokens with folding":                                                   "riptide rejects, net/http accepts: RFC 9112 §5.2 obs-fold rejected, not unfolded",
	"llhttp/connection.md/Multiple tokens with folding, LWS, and CRLF":                                    "riptide rejects, net/http accepts: RFC 9112 §5.2 obs-fold rejected, not unfolded",
	"llhttp/content-length.md/Invalid whitespace token with `Content-Length` header field (lenient)":      "riptide rejects, net/http accepts: RFC 9112 §5.1 MUST reject whitespace before the colon",
	"llhttp/content-length.md/Invalid whitespace token with `Content-Length` header field":                "riptide rejects, net/http accepts: RFC 9112 §5.1 MUST reject whitespace before the colon",
	"llhttp/invalid.md/Empty headers separated by LF":                                                     "riptide rejects, net/http accepts: RFC 9112 §2.2 bare LF is not a line terminator here",
	"llhttp/invalid.md/Headers separated by LF":                                                           "riptide rejects, net/http accepts: RFC 9112 §2.2 bare LF is not a line terminator here",
	"llhttp/invalid.md/Missing CR between headers":                                                        "riptide rejects, net/http accepts: RFC 9112 §2.2 bare LF is not a line terminator here",
	"llhttp/invalid.md/Only LFs present (lenient)":                                                        "riptide rejects, net/http accepts: RFC 9112 §2.2 bare LF is not a line terminator here",
	"llhttp/invalid.md/Only LFs present":                                                                  "riptide rejects, net/http accepts: RFC 9112 §2.2 bare LF is not a line terminator here",
	"llhttp/invalid.md/Spaces before headers (lenient)":                                                   "riptide rejects, net/http accepts: RFC 9112 §5.2 obs-fold rejected, not unfolded",
	"llhttp/invalid.md/Spaces before headers":                                                             "riptide rejects, net/http accepts: RFC 9112 §5.2 obs-fold rejected, not unfolded",
	"llhttp/lenient-header-value-relaxed.md/LF in header value should be rejected even with relaxed flag": "riptide rejects, net/http accepts: RFC 9112 §2.2 bare LF is not a line terminator here",
	"llhttp/lenient-version.md/Invalid HTTP version (lenient)":                                            "riptide rejects, net/http accepts: RFC 9110 §6.2 only HTTP/1.0 and 1.1 (505)",
	"llhttp/method.md/M-SEARCH request":                                                                   "riptide rejects, net/http accepts: RFC 9112 §3.2 / RFC 3986 target syntax and form",
	"llhttp/method.md/PRI request HTTP2":                                                                  "riptide rejects, net/http accepts: RFC 9112 §3.2 / RFC 3986 target syntax and form",
	"llhttp/sample.md/Line folding in header value with CRLF":                                             "riptide rejects, net/http accepts: RFC 9112 §5.2 obs-fold rejected, not unfolded",
	"llhttp/sample.md/Line folding in header value with LF":                                               "riptide rejects, net/http accepts: RFC 9112 §2.2 bare LF is not a line terminator here",
	"llhttp/sample.md/Prefix newline":                                                                     "riptide accepts, net/http rejects: RFC 9112 §2.2 leading empty lines ignored",
	"llhttp/sample.md/Request starting with CRLF":                                                         "riptide accepts, net/http rejects: RFC 9112 §2.2 leading empty lines ignored",
	"llhttp/sample.md/X-SSL-Nonsense":                                                                     "riptide rejects, net/http accepts: RFC 9112 §5.2 obs-fold rejected, not unfolded",
	"llhttp/uri.md/Disallow UTF-8 in URI path in strict mode":                                             "riptide rejects, net/http accepts: RFC 9112 §3.2 / RFC 3986 target syntax and form",
	"llhttp/uri.md/Query URL with vertical bar character":                                                 "riptide rejects, net/http accepts: RFC 9112 §3.2 / RFC 3986 target syntax and form",
	"llhttp/uri.md/Quotes in URI":                                                                         "riptide rejects, net/http accepts: RFC 9112 §3.2 / RFC 3986 target syntax and form",
	"llhttp/uri.md/`host:port` and basic auth":                                                            "riptide rejects, net/http accepts: RFC 9112 §3.2 / RFC 3986 target syntax and form",
	"own/CONNECT origin":        "riptide rejects, net/http accepts: RFC 9112 §3.2 / RFC 3986 target syntax and form",
	"own/HTTP/0.9":              "riptide rejects, net/http accepts: RFC 9110 §6.2 only HTTP/1.0 and 1.1 (505)",
	"own/HTTP/1.2":              "riptide rejects, net/http accepts: RFC 9110 §6.2 only HTTP/1.0 and 1.1 (505)",
	"own/HTTP/2.0":              "riptide rejects, net/http accepts: RFC 9110 §6.2 only HTTP/1.0 and 1.1 (505)",
	"own/TE and CL":             "riptide rejects, net/http accepts: RFC 9112 §6.1 TE with CL rejected",
	"own/TE on 1.0":             "riptide rejects, net/http accepts: RFC 9112 §6.1 TE on HTTP/1.0 is faulty framing",
	"own/absolute no authority": "riptide rejects, net/http accepts: RFC 9112 §3.2 / RFC 3986 target syntax and form",
	"own/absolute userinfo":     "riptide rejects, net/http accepts: RFC 9112 §3.2 / RFC 3986 target syntax and form",
	"own/asterisk GET":          "riptide rejects, net/http accepts: RFC 9112 §3.2 / RFC 3986 target syntax and form",
	"own/bare LF":               "riptide rejects, net/http accepts: RFC 9112 §2.2 bare LF is not a line terminator here",
	"own/absolute pct host":     "fields differ: RFC 3986 §2.1 host of an absolute-form target reported as received, net/http percent-decodes it",
	"own/host pct NUL":          "riptide rejects, net/http accepts: RFC 3986 §3.2.2 percent-encoding in a host only for non-ASCII",
	"own/host path":             "riptide rejects, net/http accepts: RFC 9112 §3.2 Host syntax (ReadRequest leaves it to the server)",
	"own/host userinfo":         "riptide rejects, net/http accepts: RFC 9112 §3.2 Host syntax (ReadRequest leaves it to the server)",
	"own/leading CRLF":          "riptide accepts, net/http rejects: RFC 9112 §2.2 leading empty lines ignored",
	"own/long target":           "riptide rejects, net/http accepts: limit: 8 KiB request line (414)",
	"own/missing host":          "riptide rejects, net/http accepts: RFC 9112 §3.2 Host required on 1.1 (ReadRequest leaves it to the server)",
	"own/obs-fold":              "riptide rejects, net/http accepts: RFC 9112 §5.2 obs-fold rejected, not unfolded",
	"own/pipe in target":        "riptide rejects, net/http accepts: RFC 9112 §3.2 / RFC 3986 target syntax and form",
	"own/space before colon":    "riptide rejects, net/http accepts: RFC 9112 §5.1 MUST reject whitespace before the colon",
	"own/too many headers":      "riptide rejects, net/http accepts: limit: 100 fields (431)",
}

// corpusDisagreement reports how riptide and net/http differ on in, if at
// all: "" for full agreement, else a short classification.
func corpusDisagreement(in []byte) string {
	h, _ := h1RequestView(in)
	n := netRequestView(in)
	switch {
	case h.ok != n.ok:
		if h.ok {
			return "riptide accepts, net/http rejects"
		}
		return "riptide rejects, net/http accepts"
	case h.ok && h != n:
		return "fields differ"
	}
	return ""
}

func TestNetHTTPDifferential(t *testing.T) {
	type entry struct{ name, in string }
	var cases []entry
	for _, c := range llhttpCases(t) {
		// Neither llhttp nor ReadRequest checks Host, and many vectors lack
		// it; give those one so the rest of the request is compared. Host
		// rules are compared on the own cases.
		in := c.input
		if _, err := new(Request).Parse(in, nil); err == ErrMissingHost {
			in = withHost(in)
		}
		cases = append(cases, entry{"llhttp/" + c.name, string(in)})
	}
	for name, in := range ownRequestCorpus {
		cases = append(cases, entry{"own/" + name, in})
	}
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.name] = true
		d := corpusDisagreement([]byte(c.in))
		listed, isListed := knownCorpusDisagreements[c.name]
		if d != "" && !isListed && os.Getenv("NETHTTP_DUMP") != "" {
			h, _ := h1RequestView([]byte(c.in))
			fmt.Printf("\t%q: %q,\n", c.name, d+": "+fmt.Sprint(h.err))
		}
		switch {
		case d != "" && !isListed:
			t.Errorf("%s: unlisted disagreement with net/http: %s\ninput %q\nriptide %v\nnet/http %v", c.name, d, short(c.in), first(h1RequestView([]byte(c.in))), netRequestView([]byte(c.in)))
		case d == "" && isListed:
			t.Errorf("%s: listed as a disagreement (%s) but riptide and net/http agree; remove it from the list", c.name, listed)
		case d != "" && !strings.HasPrefix(listed, d+":"):
			t.Errorf("%s: disagreement is %q, list says %q", c.name, d, listed)
		}
		// Every disagreement must also be explained by a rule-level entry,
		// which is what the fuzzers check.
		if why := compareRequest([]byte(c.in)); why != "" {
			t.Errorf("%s: no rule-level justification: %s", c.name, why)
		}
	}
	for name := range knownCorpusDisagreements {
		if !seen[name] {
			t.Errorf("listed disagreement %q is not in the corpus", name)
		}
	}
}

func TestNetHTTPDifferentialResponses(t *testing.T) {
	for name, in := range ownResponseCorpus {
		for _, head := range []bool{false, true} {
			if why := compareResponse([]byte(in), head); why != "" {
				t.Errorf("%s (head=%v): %s\ninput %q", name, head, why, short(in))
			}
		}
	}
}

// short truncates s for failure messages.
func short(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

func first[A, B any](a A, _ B) A { return a }

var _ = io.EOF
