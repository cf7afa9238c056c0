package h1

import (
	"bytes"
	"strings"
	"testing"
)

// reqCase is one row of a request table: the rule it checks, the input, and
// the expected error (nil to accept) or a check on the parsed request.
type reqCase struct {
	rule  string
	in    string
	err   *Error
	check func(t *testing.T, r *Request)
}

func runRequestCases(t *testing.T, cases []reqCase, lim *Limits) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			var r Request
			n, err := r.Parse([]byte(c.in), lim)
			if c.err != nil {
				if err != c.err {
					t.Fatalf("Parse(%q) = %d, %v; want %v", short(c.in), n, err, c.err)
				}
				if n != 0 {
					t.Fatalf("n = %d on error", n)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", short(c.in), err)
			}
			lead := len(c.in) - len(strings.TrimLeft(c.in, "\r\n"))
			if end := lead + strings.Index(c.in[lead:], "\r\n\r\n") + 4; n != end {
				t.Fatalf("n = %d, want %d", n, end)
			}
			if c.check != nil {
				c.check(t, &r)
			}
		})
	}
}

func eq(t *testing.T, what string, got []byte, want string) {
	t.Helper()
	if string(got) != want {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

func TestRequestLine(t *testing.T) {
	h := "\r\nHost: a\r\n\r\n"
	runRequestCases(t, []reqCase{
		{rule: "RFC 9112 §3: method SP target SP version", in: "GET /index.html HTTP/1.1" + h, check: func(t *testing.T, r *Request) {
			eq(t, "Method", r.Method, "GET")
			eq(t, "Target", r.Target, "/index.html")
			eq(t, "Path", r.Path, "/index.html")
			if r.Query != nil || r.Major != 1 || r.Minor != 1 || r.Form != OriginForm {
				t.Errorf("query %q version %d.%d form %v", r.Query, r.Major, r.Minor, r.Form)
			}
		}},
		{rule: "RFC 9110 §9.1: methods are case-sensitive tokens (extension method)", in: "PURGE-ALL / HTTP/1.1" + h, check: func(t *testing.T, r *Request) { eq(t, "Method", r.Method, "PURGE-ALL") }},
		{rule: "RFC 9110 §9.1: lower-case method is a different, valid token", in: "get / HTTP/1.1" + h, check: func(t *testing.T, r *Request) { eq(t, "Method", r.Method, "get") }},
		{rule: "RFC 9110 §5.6.2: method with non-token byte", in: "GE(T / HTTP/1.1" + h, err: ErrBadMethod},
		{rule: "RFC 9110 §5.6.2: method with control byte", in: "G\x01T / HTTP/1.1" + h, err: ErrBadMethod},
		{rule: "RFC 9112 §3: empty method", in: " / HTTP/1.1" + h, err: ErrBadRequestLine},
		{rule: "RFC 9112 §3: two spaces after method", in: "GET  / HTTP/1.1" + h, err: ErrBadRequestLine},
		{rule: "RFC 9112 §3: HTAB is not a separator", in: "GET\t/ HTTP/1.1" + h, err: ErrBadMethod},
		{rule: "RFC 9112 §3: missing version (HTTP/0.9 form)", in: "GET /" + h, err: ErrBadRequestLine},
		{rule: "RFC 9112 §3: trailing space after version", in: "GET / HTTP/1.1 " + h, err: ErrBadVersion},
		{rule: "RFC 9112 §3: space inside target", in: "GET /a b HTTP/1.1" + h, err: ErrBadVersion},
		{rule: "RFC 9112 §3.2.1: origin-form with query", in: "GET /p/q?x=1&y=%20 HTTP/1.1" + h, check: func(t *testing.T, r *Request) {
			eq(t, "Path", r.Path, "/p/q")
			eq(t, "Query", r.Query, "x=1&y=%20")
		}},
		{rule: "RFC 9112 §3.2.1: empty query is not nil", in: "GET /p? HTTP/1.1" + h, check: func(t *testing.T, r *Request) {
			if r.Query == nil || len(r.Query) != 0 {
				t.Errorf("Query = %q (nil %v)", r.Query, r.Query == nil)
			}
		}},
		{rule: "RFC 9112 §3.2.2: absolute-form", in: "GET http://example.com:8080/p?q HTTP/1.1" + h, check: func(t *testing.T, r *Request) {
			if r.Form != AbsoluteForm {
				t.Errorf("Form = %v", r.Form)
			}
			eq(t, "Path", r.Path, "/p")
			eq(t, "Query", r.Query, "q")
		}},
		{rule: "RFC 9112 §3.2.2: absolute-form without path", in: "GET https://example.com HTTP/1.1" + h, check: func(t *testing.T, r *Request) {
			if r.Form != AbsoluteForm || len(r.Path) != 0 {
				t.Errorf("Form %v Path %q", r.Form, r.Path)
			}
		}},
		{rule: "RFC 9112 §3.2.2: absolute-form with IPv6 authority", in: "GET http://[2001:db8::1]:80/ HTTP/1.1" + h},
		{rule: "RFC 9112 §3.2.2: absolute-form with empty authority", in: "GET http:///p HTTP/1.1" + h, err: ErrBadTarget},
		{rule: "RFC 3986 §3.2.2: percent-encoded NUL in the target's host", in: "GET http://a%00/ HTTP/1.1" + h, err: ErrBadTarget},
		{rule: "RFC 9110 §4.2.4: userinfo in http URI is an error", in: "GET http://user@example.com/ HTTP/1.1" + h, err: ErrBadTarget},
		{rule: "RFC 3986 §3.1: scheme must start with a letter", in: "GET 1http://a/ HTTP/1.1" + h, err: ErrBadTarget},
		{rule: "RFC 9112 §3.2: target neither form", in: "GET example.com HTTP/1.1" + h, err: ErrBadTarget},
		{rule: "RFC 9112 §3.2.3: authority-form for CONNECT", in: "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", check: func(t *testing.T, r *Request) {
			if r.Form != AuthorityForm {
				t.Errorf("Form = %v", r.Form)
			}
		}},
		{rule: "RFC 9112 §3.2.3: CONNECT target needs a port", in: "CONNECT example.com HTTP/1.1" + h, err: ErrBadTarget},
		{rule: "RFC 9112 §3.2.3: CONNECT with origin-form", in: "CONNECT / HTTP/1.1" + h, err: ErrBadTarget},
		{rule: "RFC 9112 §3.2.3: authority-form only for CONNECT", in: "GET example.com:443 HTTP/1.1" + h, err: ErrBadTarget},
		{rule: "RFC 9112 §3.2.4: asterisk-form for OPTIONS", in: "OPTIONS * HTTP/1.1" + h, check: func(t *testing.T, r *Request) {
			if r.Form != AsteriskForm {
				t.Errorf("Form = %v", r.Form)
			}
		}},
		{rule: "RFC 9112 §3.2.4: asterisk-form only for OPTIONS", in: "GET * HTTP/1.1" + h, err: ErrBadTarget},
		{rule: "RFC 3986 §2: '|' must be percent-encoded", in: "GET /a|b HTTP/1.1" + h, err: ErrBadTarget},
		{rule: "RFC 3986 §2: '\"' is not a URI character", in: "GET /\"x\" HTTP/1.1" + h, err: ErrBadTarget},
		{rule: "raw UTF-8 in the target is served as net/http and quic-go serve it", in: "GET /h/caf\xc3\xa9?q=\xe2\x82\xac12345678 HTTP/1.1" + h, check: func(t *testing.T, r *Request) {
			if string(r.Target) != "/h/caf\xc3\xa9?q=\xe2\x82\xac12345678" || r.Form != OriginForm {
				t.Errorf("Target %q Form %v", r.Target, r.Form)
			}
		}},
		{rule: "RFC 3629 §3: an overlong UTF-8 sequence in the target (a '/' to a lenient decoder)", in: "GET /\xc0\xaf HTTP/1.1" + h, err: ErrBadTarget},
		{rule: "RFC 3629 §3: a truncated UTF-8 sequence in the target", in: "GET /caf\xc3 HTTP/1.1" + h, err: ErrBadTarget},
		{rule: "RFC 3629 §3: a lone continuation byte in the query", in: "GET /a?b=\x80 HTTP/1.1" + h, err: ErrBadTarget},
		{rule: "RFC 3629 §3: a UTF-16 surrogate in the target", in: "GET /\xed\xa0\x80 HTTP/1.1" + h, err: ErrBadTarget},
		{rule: "RFC 9112 §3.2: DEL in the target", in: "GET /a\x7fb HTTP/1.1" + h, err: ErrBadTarget},
		{rule: "RFC 9112 §3.2: control byte in the target", in: "GET /a\x01b HTTP/1.1" + h, err: ErrBadTarget},
		{rule: "RFC 3986 §3.2.2: a raw byte >= 0x80 in an absolute-form host", in: "GET http://caf\xc3\xa9/ HTTP/1.1" + h, err: ErrBadTarget},
		{rule: "RFC 9112 §3.2.3: a raw byte >= 0x80 in a CONNECT authority", in: "CONNECT caf\xc3\xa9:443 HTTP/1.1" + h, err: ErrBadTarget},
		{rule: "RFC 3986 §2.1: '%' must start two hex digits", in: "GET /a%2 HTTP/1.1" + h, err: ErrBadTarget},
		{rule: "RFC 3986 §2.1: percent-encoding with non-hex", in: "GET /a%zz HTTP/1.1" + h, err: ErrBadTarget},
		{rule: "RFC 9112 §2.3: HTTP/1.0", in: "GET / HTTP/1.0\r\n\r\n", check: func(t *testing.T, r *Request) {
			if r.Minor != 0 || !r.Close {
				t.Errorf("Minor %d Close %v", r.Minor, r.Close)
			}
		}},
		{rule: "RFC 9110 §15.6.6: HTTP/2.0 on an HTTP/1 connection is 505", in: "GET / HTTP/2.0" + h, err: ErrVersionNotSupp},
		{rule: "RFC 9110 §15.6.6: HTTP/1.2 is 505", in: "GET / HTTP/1.2" + h, err: ErrVersionNotSupp},
		{rule: "RFC 9110 §15.6.6: HTTP/0.9 is 505", in: "GET / HTTP/0.9" + h, err: ErrVersionNotSupp},
		{rule: "RFC 9112 §2.3: version name is case-sensitive", in: "GET / http/1.1" + h, err: ErrBadVersion},
		{rule: "RFC 9112 §2.3: one digit each side of the dot", in: "GET / HTTP/1.10" + h, err: ErrBadVersion},
		{rule: "RFC 9112 §2.3: other protocol", in: "GET / RTSP/1.0" + h, err: ErrBadVersion},
		{rule: "RFC 9112 §2.2: leading empty lines are skipped", in: "\r\n\r\nGET / HTTP/1.1" + h, check: func(t *testing.T, r *Request) { eq(t, "Method", r.Method, "GET") }},
		{rule: "RFC 9112 §2.2: bare LF ends no line", in: "GET / HTTP/1.1\nHost: a\r\n\r\n", err: ErrBadLineEnding},
		{rule: "RFC 9112 §2.2: bare LF before request line", in: "\nGET / HTTP/1.1" + h, err: ErrBadLineEnding},
		{rule: "RFC 9112 §2.2: bare CR in request line", in: "GET / HTTP/1.1\r\r\nHost: a\r\n\r\n", err: ErrBadVersion},
	}, nil)
}

func TestRequestHeaders(t *testing.T) {
	rl := "GET / HTTP/1.1\r\nHost: a\r\n"
	runRequestCases(t, []reqCase{
		{rule: "RFC 9112 §5: field-name \":\" OWS field-value OWS", in: rl + "X-A: b\r\nx-b:c\r\n\r\n", check: func(t *testing.T, r *Request) {
			if len(r.Headers) != 3 {
				t.Fatalf("%d headers", len(r.Headers))
			}
			eq(t, "X-A", r.Get("x-a"), "b")
			eq(t, "x-b", r.Get("X-B"), "c")
		}},
		{rule: "RFC 9112 §5.1: OWS around the value is not part of it", in: rl + "X: \t v  w \t\r\n\r\n", check: func(t *testing.T, r *Request) { eq(t, "X", r.Get("X"), "v  w") }},
		{rule: "RFC 9110 §5.5: empty field value", in: rl + "X:\r\n\r\n", check: func(t *testing.T, r *Request) {
			if v := r.Get("X"); v == nil || len(v) != 0 {
				t.Errorf("X = %q", v)
			}
		}},
		{rule: "RFC 9110 §5.5: obs-text in a value is allowed", in: rl + "X: caf\xc3\xa9\x80\xff\r\n\r\n"},
		{rule: "RFC 9110 §5.5: HTAB inside a value is allowed", in: rl + "X: a\tb\r\n\r\n", check: func(t *testing.T, r *Request) { eq(t, "X", r.Get("X"), "a\tb") }},
		{rule: "RFC 9110 §5.1: field name must be a token", in: rl + "X(Y): b\r\n\r\n", err: ErrBadHeaderName},
		{rule: "RFC 9110 §5.1: space inside a field name", in: rl + "X Y: b\r\n\r\n", err: ErrBadHeaderName},
		{rule: "RFC 9110 §5.1: empty field name", in: rl + ": b\r\n\r\n", err: ErrBadHeaderName},
		{rule: "RFC 9112 §5: field line without colon", in: rl + "XY\r\n\r\n", err: ErrBadHeaderName},
		{rule: "RFC 9110 §5.1: non-ASCII field name", in: rl + "X\xc3\xa9: b\r\n\r\n", err: ErrBadHeaderName},
		{rule: "RFC 9112 §5.1: space before colon is a 400", in: rl + "X : b\r\n\r\n", err: ErrSpaceBeforeColon},
		{rule: "RFC 9112 §5.1: tab before colon is a 400", in: rl + "Content-Length\t: 0\r\n\r\n", err: ErrSpaceBeforeColon},
		{rule: "RFC 9112 §5.2: obs-fold is rejected", in: rl + "X: a\r\n b\r\n\r\n", err: ErrObsFold},
		{rule: "RFC 9112 §5.2: obs-fold with HTAB", in: rl + "X: a\r\n\tb\r\n\r\n", err: ErrObsFold},
		{rule: "RFC 9112 §2.2: whitespace before the first field line", in: "GET / HTTP/1.1\r\n Host: a\r\n\r\n", err: ErrObsFold},
		{rule: "RFC 9110 §5.5: NUL in a value", in: rl + "X: a\x00b\r\n\r\n", err: ErrBadHeaderValue},
		{rule: "RFC 9110 §5.5: bare CR in a value", in: rl + "X: a\rb\r\n\r\n", err: ErrBadHeaderValue},
		{rule: "RFC 9112 §2.2: bare LF in a value", in: rl + "X: a\nb\r\n\r\n", err: ErrBadLineEnding},
		{rule: "RFC 9110 §5.5: DEL in a value", in: rl + "X: a\x7fb\r\n\r\n", err: ErrBadHeaderValue},
		{rule: "RFC 9110 §5.5: other CTL in a value", in: rl + "X: a\x1bb\r\n\r\n", err: ErrBadHeaderValue},
		{rule: "RFC 9110 §5.3: repeated fields are kept in order", in: rl + "A: 1\r\nB: x\r\nA: 2\r\n\r\n", check: func(t *testing.T, r *Request) {
			if len(r.Headers) != 4 || string(r.Headers[3].Value) != "2" {
				t.Errorf("headers %v", r.Headers)
			}
			eq(t, "first A", r.Get("a"), "1")
		}},
		{rule: "known headers are tagged and found without folding", in: rl + "content-LENGTH: 0\r\nUser-Agent: u\r\n\r\n", check: func(t *testing.T, r *Request) {
			if r.Headers[1].Key != HeaderContentLength || r.Headers[2].Key != HeaderUserAgent || r.Headers[0].Key != HeaderHost {
				t.Errorf("keys %v %v %v", r.Headers[0].Key, r.Headers[1].Key, r.Headers[2].Key)
			}
			eq(t, "Known(UserAgent)", r.Known(HeaderUserAgent), "u")
			if r.Known(HeaderCookie) != nil || r.Get("Cookie") != nil {
				t.Error("absent header found")
			}
		}},
		{rule: "RFC 9110 §10.1.1: Expect: 100-continue", in: rl + "Expect: 100-Continue\r\nContent-Length: 1\r\n\r\n", check: func(t *testing.T, r *Request) {
			if !r.Expect100 || r.ExpectOther {
				t.Errorf("Expect100 %v ExpectOther %v", r.Expect100, r.ExpectOther)
			}
		}},
		{rule: "RFC 9110 §10.1.1: other expectation (417)", in: rl + "Expect: teapot\r\n\r\n", check: func(t *testing.T, r *Request) {
			if r.Expect100 || !r.ExpectOther {
				t.Errorf("Expect100 %v ExpectOther %v", r.Expect100, r.ExpectOther)
			}
		}},
		{rule: "RFC 9110 §7.8: Upgrade needs Connection: upgrade", in: rl + "Connection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n\r\n", check: func(t *testing.T, r *Request) {
			if !r.Upgrade {
				t.Error("Upgrade not set")
			}
		}},
		{rule: "RFC 9110 §7.8: Upgrade in an HTTP/1.0 request is ignored", in: "GET / HTTP/1.0\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n", check: func(t *testing.T, r *Request) {
			if r.Upgrade {
				t.Error("Upgrade set")
			}
		}},
		{rule: "RFC 9110 §7.8: Upgrade without Connection: upgrade is ignored", in: rl + "Upgrade: websocket\r\n\r\n", check: func(t *testing.T, r *Request) {
			if r.Upgrade {
				t.Error("Upgrade set")
			}
		}},
		{rule: "RFC 9112 §9.3: Connection: close on 1.1", in: rl + "Connection: foo, Close\r\n\r\n", check: func(t *testing.T, r *Request) {
			if !r.Close {
				t.Error("Close not set")
			}
		}},
		{rule: "RFC 9112 §9.3: 1.1 is persistent by default", in: rl + "\r\n", check: func(t *testing.T, r *Request) {
			if r.Close {
				t.Error("Close set")
			}
		}},
		{rule: "RFC 9112 §9.3: 1.0 keep-alive is persistent", in: "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", check: func(t *testing.T, r *Request) {
			if r.Close {
				t.Error("Close set")
			}
		}},
	}, nil)
}

func TestHost(t *testing.T) {
	rl := "GET / HTTP/1.1\r\n"
	runRequestCases(t, []reqCase{
		{rule: "RFC 9112 §3.2: Host on 1.1", in: rl + "Host: example.com:8080\r\n\r\n", check: func(t *testing.T, r *Request) { eq(t, "Host", r.Host, "example.com:8080") }},
		{rule: "RFC 9112 §3.2: Host missing on 1.1", in: rl + "\r\n", err: ErrMissingHost},
		{rule: "RFC 9112 §3.2: Host optional on 1.0", in: "GET / HTTP/1.0\r\n\r\n", check: func(t *testing.T, r *Request) {
			if r.Host != nil {
				t.Errorf("Host = %q", r.Host)
			}
		}},
		{rule: "RFC 9112 §3.2: Host checked on 1.0 too", in: "GET / HTTP/1.0\r\nHost: a/b\r\n\r\n", err: ErrBadHost},
		{rule: "RFC 9112 §3.2: two Host fields", in: rl + "Host: a\r\nHost: a\r\n\r\n", err: ErrDuplicateHost},
		{rule: "RFC 9112 §3.2: two Host fields, different case", in: rl + "Host: a\r\nhost: b\r\n\r\n", err: ErrDuplicateHost},
		{rule: "RFC 9110 §4.2.1: empty Host with origin-form means an http URI with an empty host: reject", in: rl + "Host:\r\n\r\n", err: ErrBadHost},
		{rule: "RFC 9112 §3.2.2: empty Host is allowed with absolute-form (the target carries the authority)", in: "GET http://a/ HTTP/1.1\r\nHost:\r\n\r\n", check: func(t *testing.T, r *Request) {
			if r.Host == nil || len(r.Host) != 0 {
				t.Errorf("Host = %q", r.Host)
			}
		}},
		{rule: "RFC 9112 §3.2: a request-target has no fragment", in: "GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n", err: ErrBadTarget},
		{rule: "RFC 3986 §3.2.1: no userinfo in Host", in: rl + "Host: user@a\r\n\r\n", err: ErrBadHost},
		{rule: "RFC 9112 §3.2: no path in Host", in: rl + "Host: a/b\r\n\r\n", err: ErrBadHost},
		{rule: "RFC 3986 §3.2.2: no space in Host", in: rl + "Host: a b\r\n\r\n", err: ErrBadHost},
		{rule: "RFC 3986 §3.2.2: IPv6 literal", in: rl + "Host: [2001:db8::1]\r\n\r\n", check: func(t *testing.T, r *Request) { eq(t, "Host", r.Host, "[2001:db8::1]") }},
		{rule: "RFC 3986 §3.2.2: IPv6 literal with port", in: rl + "Host: [::1]:8080\r\n\r\n"},
		{rule: "RFC 3986 §3.2.2: unclosed IPv6 literal", in: rl + "Host: [::1\r\n\r\n", err: ErrBadHost},
		{rule: "RFC 3986 §3.2.2: junk in IPv6 literal", in: rl + "Host: [::g]\r\n\r\n", err: ErrBadHost},
		{rule: "RFC 3986 §3.2.2: junk after IPv6 literal", in: rl + "Host: [::1]x\r\n\r\n", err: ErrBadHost},
		{rule: "RFC 3986 §3.2.2: IPv4 with port", in: rl + "Host: 10.0.0.1:80\r\n\r\n"},
		{rule: "RFC 3986 §3.2.3: port is digits", in: rl + "Host: a:8o\r\n\r\n", err: ErrBadHost},
		{rule: "RFC 3986 §3.2.3: empty port is allowed", in: rl + "Host: a:\r\n\r\n"},
		{rule: "RFC 3986 §3.2.2: reg-name sub-delims", in: rl + "Host: 0.0.0.0=5000\r\n\r\n"},
		{rule: "RFC 3986 §2.1: bad percent-encoding in Host", in: rl + "Host: a%g0\r\n\r\n", err: ErrBadHost},
		{rule: "RFC 3986 §3.2.2: percent-encoded ASCII in Host (second spelling)", in: rl + "Host: %61\r\n\r\n", err: ErrBadHost},
		{rule: "RFC 3986 §3.2.2: percent-encoded NUL in Host", in: rl + "Host: a%00\r\n\r\n", err: ErrBadHost},
		{rule: "RFC 3986 §3.2.2: percent-encoded UTF-8 in Host", in: rl + "Host: caf%C3%A9.example\r\n\r\n"},
		{rule: "RFC 3986 §3.2.2: two colons outside brackets", in: rl + "Host: a:1:2\r\n\r\n", err: ErrBadHost},
	}, nil)
}

func TestRequestFraming(t *testing.T) {
	rl := "POST / HTTP/1.1\r\nHost: a\r\n"
	cl := func(want int64, chunked bool) func(t *testing.T, r *Request) {
		return func(t *testing.T, r *Request) {
			if r.ContentLength != want || r.Chunked != chunked {
				t.Errorf("ContentLength %d Chunked %v, want %d %v", r.ContentLength, r.Chunked, want, chunked)
			}
		}
	}
	runRequestCases(t, []reqCase{
		{rule: "RFC 9112 §6.3: no framing fields means no body", in: rl + "\r\n", check: cl(0, false)},
		{rule: "RFC 9110 §8.6: Content-Length", in: rl + "Content-Length: 42\r\n\r\n", check: cl(42, false)},
		{rule: "RFC 9110 §8.6: Content-Length with leading zeros", in: rl + "Content-Length: 007\r\n\r\n", check: cl(7, false)},
		{rule: "RFC 9110 §8.6: Content-Length with surrounding OWS", in: rl + "Content-Length: \t 5 \r\n\r\n", check: cl(5, false)},
		{rule: "RFC 9110 §8.6: Content-Length is digits only (sign)", in: rl + "Content-Length: +5\r\n\r\n", err: ErrBadContentLength},
		{rule: "RFC 9110 §8.6: Content-Length is digits only (negative)", in: rl + "Content-Length: -1\r\n\r\n", err: ErrBadContentLength},
		{rule: "RFC 9110 §8.6: Content-Length is digits only (hex)", in: rl + "Content-Length: 0x10\r\n\r\n", err: ErrBadContentLength},
		{rule: "RFC 9110 §8.6: Content-Length with inner space", in: rl + "Content-Length: 1 2\r\n\r\n", err: ErrBadContentLength},
		{rule: "RFC 9110 §8.6: empty Content-Length", in: rl + "Content-Length:\r\n\r\n", err: ErrBadContentLength},
		{rule: "RFC 9110 §8.6: Content-Length list is rejected", in: rl + "Content-Length: 5, 5\r\n\r\n", err: ErrBadContentLength},
		{rule: "RFC 9110 §8.6: Content-Length overflow", in: rl + "Content-Length: 99999999999999999999999\r\n\r\n", err: ErrBadContentLength},
		{rule: "RFC 9110 §8.6: identical duplicate Content-Length collapses", in: rl + "Content-Length: 5\r\nContent-Length: 5\r\n\r\n", check: cl(5, false)},
		{rule: "RFC 9110 §8.6: differing duplicate Content-Length", in: rl + "Content-Length: 5\r\nContent-Length: 6\r\n\r\n", err: ErrDupContentLength},
		{rule: "RFC 9110 §8.6: duplicates equal as numbers but not as text", in: rl + "Content-Length: 5\r\nContent-Length: 05\r\n\r\n", err: ErrDupContentLength},
		{rule: "RFC 9112 §6.1: Transfer-Encoding: chunked", in: rl + "Transfer-Encoding: chunked\r\n\r\n", check: cl(-1, true)},
		{rule: "RFC 9112 §7: coding names are case-insensitive", in: rl + "Transfer-Encoding: ChUnKeD\r\n\r\n", check: cl(-1, true)},
		{rule: "RFC 9112 §6.1: chunked must be final", in: rl + "Transfer-Encoding: chunked, gzip\r\n\r\n", err: ErrChunkedNotFinal},
		{rule: "RFC 9112 §6.1: chunked must be final (across fields)", in: rl + "Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n", err: ErrChunkedNotFinal},
		{rule: "RFC 9112 §6.1: chunked applied twice", in: rl + "Transfer-Encoding: chunked, chunked\r\n\r\n", err: ErrChunkedNotFinal},
		{rule: "RFC 9112 §6.3: coding without chunked is a 400", in: rl + "Transfer-Encoding: gzip\r\n\r\n", err: ErrChunkedNotFinal},
		{rule: "RFC 9112 §6.1: unknown coding before chunked is a 501", in: rl + "Transfer-Encoding: gzip, chunked\r\n\r\n", err: ErrUnsupportedTE},
		{rule: "RFC 9112 §6.1: unknown coding in its own field is a 501", in: rl + "Transfer-Encoding: x-custom\r\nTransfer-Encoding: chunked\r\n\r\n", err: ErrUnsupportedTE},
		{rule: "RFC 9112 §6.1: empty Transfer-Encoding", in: rl + "Transfer-Encoding:\r\n\r\n", err: ErrBadTransferEncoding},
		{rule: "RFC 9110 §5.6.1: empty list element in Transfer-Encoding (refused)", in: rl + "Transfer-Encoding: ,chunked\r\n\r\n", err: ErrBadTransferEncoding},
		{rule: "RFC 9110 §5.6.1: trailing comma in Transfer-Encoding (refused)", in: rl + "Transfer-Encoding: chunked,\r\n\r\n", err: ErrBadTransferEncoding},
		{rule: "RFC 9112 §7: transfer-coding with parameters (refused)", in: rl + "Transfer-Encoding: chunked;q=1\r\n\r\n", err: ErrBadTransferEncoding},
		{rule: "RFC 9112 §6.1: Transfer-Encoding and Content-Length together", in: rl + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", err: ErrTEWithCL},
		{rule: "RFC 9112 §6.1: Content-Length before Transfer-Encoding", in: rl + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", err: ErrTEWithCL},
		{rule: "RFC 9112 §6.1: Transfer-Encoding on HTTP/1.0", in: "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", err: ErrTEOnHTTP10},
		{rule: "RFC 9112 §6.1: Transfer-Encoding on HTTP/1.0 with Content-Length", in: "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n", err: ErrTEOnHTTP10},
		{rule: "RFC 9112 §6.1: Transfer-Encoding with CR instead of dash is just a field", in: rl + "Transfer_Encoding: chunked\r\n\r\n", check: cl(0, false)},
	}, nil)
}

func TestErrorStatus(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{ErrBadRequestLine, 400}, {ErrURITooLong, 414}, {ErrVersionNotSupp, 505},
		{ErrHeaderTooLarge, 431}, {ErrHeaderLineLarge, 431}, {ErrTooManyHeaders, 431},
		{ErrUnsupportedTE, 501}, {ErrTEWithCL, 400}, {ErrBodyTooLarge, 413},
		{ErrNeedMore, 400}, {nil, 400},
	} {
		if got := StatusOf(c.err); got != c.want {
			t.Errorf("StatusOf(%v) = %d, want %d", c.err, got, c.want)
		}
	}
	if ErrBadHost.Error() != "h1: invalid Host header" {
		t.Errorf("Error() = %q", ErrBadHost.Error())
	}
}

func TestLimits(t *testing.T) {
	lim := &Limits{MaxRequestLine: 64, MaxHeaderLine: 64, MaxHeadBytes: 256, MaxHeaders: 4}
	long := strings.Repeat("a", 64)
	rl := "GET / HTTP/1.1\r\nHost: a\r\n"
	runRequestCases(t, []reqCase{
		{rule: "RFC 9112 §3: request line at the limit", in: "GET /" + long[:64-len("GET / HTTP/1.1")] + " HTTP/1.1\r\nHost: a\r\n\r\n"},
		{rule: "RFC 9112 §3 / RFC 9110 §15.5.15: request line over the limit is 414", in: "GET /" + long + " HTTP/1.1\r\nHost: a\r\n\r\n", err: ErrURITooLong},
		{rule: "RFC 9112 §3: complete request line whose method passes the limit is 400", in: long + long + " / HTTP/1.1\r\nHost: a\r\n\r\n", err: ErrBadMethod},
		{rule: "RFC 6585 §5: field line over the limit is 431", in: rl + "X: " + long + "\r\n\r\n", err: ErrHeaderLineLarge},
		{rule: "RFC 6585 §5: field line at the limit", in: rl + "X: " + long[:61] + "\r\n\r\n"},
		{rule: "RFC 6585 §5: too many fields is 431", in: rl + "A: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n", err: ErrTooManyHeaders},
		{rule: "RFC 6585 §5: field count at the limit", in: rl + "A: 1\r\nB: 2\r\nC: 3\r\n\r\n"},
		{rule: "RFC 6585 §5: head over the total limit is 431", in: rl + strings.Repeat("X: "+long[:50]+"\r\n", 5) + "\r\n", err: ErrHeaderTooLarge},
		{rule: "limits: endless leading CRLFs are bounded", in: strings.Repeat("\r\n", 200) + rl + "\r\n", err: ErrHeaderTooLarge},
	}, lim)

	// Incomplete input is refused as soon as a limit is passed.
	for _, c := range []struct {
		rule string
		in   string
		want *Error
	}{
		{"RFC 9110 §15.5.15: unterminated request line over the limit is 414", "GET /" + long + long, ErrURITooLong},
		{"RFC 6585 §5: unterminated head over the total limit is 431", rl + strings.Repeat("X: y\r\n", 60), ErrHeaderTooLarge},
		{"limits: unterminated run of CRLFs", strings.Repeat("\r\n", 200), ErrHeaderTooLarge},
		{"RFC 9112 §3: a method longer than the line limit is a 400, not a 414", strings.Repeat("A", 100), ErrBadMethod},
	} {
		var r Request
		if _, err := r.Parse([]byte(c.in), lim); err != c.want {
			t.Errorf("%s: %v, want %v", c.rule, err, c.want)
		}
	}

	// Defaults apply to a nil *Limits and to zero fields.
	var r Request
	big := "GET /" + strings.Repeat("a", DefaultLimits.MaxRequestLine) + " HTTP/1.1\r\nHost: a\r\n\r\n"
	if _, err := r.Parse([]byte(big), &Limits{}); err != ErrURITooLong {
		t.Errorf("default MaxRequestLine: %v", err)
	}
	many := rl + strings.Repeat("X: y\r\n", DefaultLimits.MaxHeaders) + "\r\n"
	if _, err := r.Parse([]byte(many), nil); err != ErrTooManyHeaders {
		t.Errorf("default MaxHeaders: %v", err)
	}
}

// TestManyHeaders checks fields beyond the inline array and beyond what the
// Known index can address.
func TestManyHeaders(t *testing.T) {
	var b strings.Builder
	b.WriteString("GET / HTTP/1.1\r\nHost: a\r\n")
	for i := 0; i < 299; i++ {
		b.WriteString("X-Filler: v\r\n")
	}
	b.WriteString("Cookie: c=1\r\n\r\n")
	var r Request
	if _, err := r.Parse([]byte(b.String()), &Limits{MaxHeaders: 1000}); err != nil {
		t.Fatal(err)
	}
	if len(r.Headers) != 301 {
		t.Fatalf("%d headers", len(r.Headers))
	}
	eq(t, "Known(Cookie) past index 255", r.Known(HeaderCookie), "c=1")
	eq(t, "Get(cookie)", r.Get("cookie"), "c=1")
	// The grown storage is kept across Reset.
	r.Reset()
	if cap(r.Headers) < 301 {
		t.Errorf("cap after Reset = %d", cap(r.Headers))
	}
}

// TestRequestTrickle feeds requests one byte at a time: every proper prefix
// must ask for more, and the last byte must give the same result as parsing
// in one go.
func TestRequestTrickle(t *testing.T) {
	inputs := []string{
		"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
		"\r\n\r\nPOST /x?y HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\nX: \t a b \t\r\n\r\n",
		"GET / HTTP/1.0\r\n\r\n",
		"GET http://a/ HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
	}
	for _, in := range inputs {
		var whole Request
		n, err := whole.Parse([]byte(in), nil)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		var r Request
		buf := make([]byte, 0, 1) // regrown as it fills, as a reader would
		for i := 0; i < len(in); i++ {
			buf = append(buf, in[i])
			m, err := r.Parse(buf, nil)
			if i < len(in)-1 {
				if err != ErrNeedMore {
					t.Fatalf("%q: prefix %d: %v", in, i+1, err)
				}
				continue
			}
			if err != nil || m != n {
				t.Fatalf("%q: last byte: n=%d err=%v", in, m, err)
			}
		}
		if !bytes.Equal(r.Method, whole.Method) || !bytes.Equal(r.Target, whole.Target) ||
			!sameHeaders(r.Headers, whole.Headers) || r.ContentLength != whole.ContentLength || r.Chunked != whole.Chunked {
			t.Errorf("%q: trickled parse differs", in)
		}
	}

	// Errors are found while trickling too: bare LF at once, not at the end.
	var r Request
	in := "GET / HTTP/1.1\nHost: a\r\n\r\n"
	for i := 1; i <= len(in); i++ {
		_, err := r.Parse([]byte(in[:i]), nil)
		if i < len("GET / HTTP/1.1\n") {
			if err != ErrNeedMore {
				t.Fatalf("prefix %d: %v", i, err)
			}
		} else if err != ErrBadLineEnding {
			t.Fatalf("prefix %d: %v, want ErrBadLineEnding", i, err)
		}
	}
}

// TestParseAfterAbandonedHead is a regression test: a Request that saw part
// of a long head and is then Reset (the connection went away) must parse a
// new, shorter buffer from its start. It used to index past the new buffer.
func TestParseAfterAbandonedHead(t *testing.T) {
	var r Request
	if _, err := r.Parse([]byte("GET / HTTP/1.1\r\nHost: example.com\r\nX-Long: aaaaaaaaaa\r\n"), nil); err != ErrNeedMore {
		t.Fatal(err)
	}
	r.Reset()
	if _, err := r.Parse([]byte("GET / HTTP/1.1\r\nHo"), nil); err != ErrNeedMore {
		t.Fatal(err)
	}
	n, err := r.Parse([]byte("GET / HTTP/1.1\r\nHost: a\r\n\r\n"), nil)
	if err != nil || n != 27 {
		t.Fatalf("n=%d err=%v", n, err)
	}
	// After an error, too, the next Parse starts afresh without a Reset.
	var r2 Request
	r2.Parse([]byte("GET / HTTP/1.1\r\nX: a\r\nY: b\r\n"), nil)
	r2.Parse([]byte("GET / HTTP/1.1\r\nX: a\r\nY: b\nZ"), nil)
	if _, err := r2.Parse([]byte("GET / HTTP/1.1\r\n"), nil); err != ErrNeedMore {
		t.Fatalf("after error: %v", err)
	}
}

// TestPipelined checks that Parse reports only the first head and the next
// one parses from the returned offset.
func TestPipelined(t *testing.T) {
	in := []byte("GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\n")
	var r Request
	n, err := r.Parse(in, nil)
	if err != nil || string(r.Target) != "/1" {
		t.Fatalf("first: %v %q", err, r.Target)
	}
	m, err := r.Parse(in[n:], nil)
	if err != nil || string(r.Target) != "/2" || n+m != len(in) {
		t.Fatalf("second: %v %q", err, r.Target)
	}
}

func TestLookup(t *testing.T) {
	for k := Known(1); k < numKnown; k++ {
		name := k.String()
		for _, v := range []string{name, strings.ToLower(name), strings.ToUpper(name)} {
			if got := Lookup([]byte(v)); got != k {
				t.Errorf("Lookup(%q) = %v, want %v", v, got, k)
			}
		}
	}
	for _, v := range []string{"", "Hos", "Hostt", "X-Unknown", strings.Repeat("a", 40), "Content_Length"} {
		if got := Lookup([]byte(v)); got != Unknown {
			t.Errorf("Lookup(%q) = %v", v, got)
		}
	}
	if !EqualFold([]byte("CoNtEnT-LeNgTh"), "content-length") || EqualFold([]byte("a"), "b") || EqualFold([]byte("ab"), "a") {
		t.Error("EqualFold")
	}
	if !IsToken([]byte("a!#$%&'*+-.^_`|~9")) || IsToken(nil) || IsToken([]byte("a b")) {
		t.Error("IsToken")
	}
	if !ValidHeaderValue("a\tb \x80") || ValidHeaderValue("a\r\nb") || ValidHeaderValue([]byte{0}) {
		t.Error("ValidHeaderValue")
	}
	if !ValidHeaderName("X-A") || ValidHeaderName("") || ValidHeaderName("X:A") {
		t.Error("ValidHeaderName")
	}
}

// TestValidValue checks the word-at-a-time value check against the byte
// table, for every byte at every position of a word and its tail.
func TestValidValue(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 19; pos++ {
			for _, fill := range []byte{'a', 0x80, 0xff, ' ', '\t'} {
				v := bytes.Repeat([]byte{fill}, 19)
				v[pos] = byte(c)
				if got, want := validValue(v), valueTable[c]; got != want {
					t.Fatalf("byte %#x at %d in %#x fill: validValue = %v, want %v", c, pos, fill, got, want)
				}
			}
		}
	}
}

// TestValidHeaderValue checks the word-at-a-time check of values a writer
// sends against the byte table, for every byte at every position of
// values of every length up to three words (the last word overlaps), as a
// string and as a []byte.
func TestValidHeaderValue(t *testing.T) {
	for n := 1; n <= 24; n++ {
		for c := 0; c < 256; c++ {
			for pos := 0; pos < n; pos++ {
				for _, fill := range []byte{'a', 0x80, ' ', '\t'} {
					v := bytes.Repeat([]byte{fill}, n)
					v[pos] = byte(c)
					want := valueTable[c]
					if got := ValidHeaderValue(v); got != want {
						t.Fatalf("byte %#x at %d of %d in %#x fill: ValidHeaderValue([]byte) = %v, want %v", c, pos, n, fill, got, want)
					}
					if got := ValidHeaderValue(string(v)); got != want {
						t.Fatalf("byte %#x at %d of %d in %#x fill: ValidHeaderValue(string) = %v, want %v", c, pos, n, fill, got, want)
					}
				}
			}
		}
	}
	if !ValidHeaderValue("") {
		t.Error("the empty value is refused")
	}
}

// TestTargetBytes checks the word-at-a-time pass over the request-target
// against the byte table: every byte at every position of origin-form
// targets up to three words long, and a percent-encoding and a UTF-8
// sequence at every position, across word boundaries too.
func TestTargetBytes(t *testing.T) {
	var r Request
	for n := 2; n <= 25; n++ {
		for pos := 1; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				target := bytes.Repeat([]byte{'g'}, n)
				target[0], target[pos] = '/', byte(c)
				// 'g' is no hex digit: a '%' here is never valid, and a
				// lone byte >= 0x80 is no UTF-8.
				want := targetTable[c] && c != '%' && c < 0x80
				r.Reset()
				if err := r.SetRequestLine([]byte("GET"), target, 1); (err == nil) != want {
					t.Fatalf("target %q: error %v, want valid %v", target, err, want)
				}
			}
			if pos+1 < n {
				// A whole UTF-8 sequence is valid at every position.
				target := bytes.Repeat([]byte{'g'}, n)
				target[0] = '/'
				copy(target[pos:], "\xc3\xa9")
				r.Reset()
				if err := r.SetRequestLine([]byte("GET"), target, 1); err != nil {
					t.Fatalf("target %q: error %v, want valid", target, err)
				}
			}
			if pos+2 < n {
				target := bytes.Repeat([]byte{'g'}, n)
				target[0] = '/'
				copy(target[pos:], "%2F")
				r.Reset()
				if err := r.SetRequestLine([]byte("GET"), target, 1); err != nil || !bytes.Equal(r.Path, target) {
					t.Fatalf("target %q: error %v, path %q", target, err, r.Path)
				}
				target[pos+2] = 'x'
				r.Reset()
				if err := r.SetRequestLine([]byte("GET"), target, 1); err == nil {
					t.Fatalf("target %q with a bad escape was accepted", target)
				}
			}
		}
	}
}

// TestRequestBuild checks that a Request built with SetRequestLine and
// AddHeader reads like a parsed one.
func TestRequestBuild(t *testing.T) {
	var r Request
	r.Reset()
	if err := r.SetRequestLine([]byte("GET"), []byte("/a/b?x=1"), 1); err != nil {
		t.Fatal(err)
	}
	r.AddHeader([]byte("content-type"), []byte("text/plain"))
	r.AddHeader([]byte("x-custom"), []byte("v"))
	if string(r.Path) != "/a/b" || string(r.Query) != "x=1" || r.Form != OriginForm || r.Minor != 1 {
		t.Errorf("target: path %q query %q form %v minor %d", r.Path, r.Query, r.Form, r.Minor)
	}
	if string(r.Known(HeaderContentType)) != "text/plain" || string(r.Get("X-Custom")) != "v" || r.Headers[0].Key != HeaderContentType {
		t.Errorf("headers: %+v", r.Headers)
	}
	r.Reset()
	if err := r.SetRequestLine([]byte("GET"), []byte("/a b"), 1); err == nil {
		t.Error("a target with a space was accepted")
	}
}

func TestConnectionSpecific(t *testing.T) {
	for _, n := range []string{"Connection", "keep-alive", "Proxy-Connection", "TRANSFER-ENCODING", "upgrade"} {
		if !ConnectionSpecific([]byte(n)) {
			t.Errorf("%s: false", n)
		}
	}
	for _, n := range []string{"content-length", "te", "connections", "upgrade-insecure-requests", ""} {
		if ConnectionSpecific([]byte(n)) {
			t.Errorf("%s: true", n)
		}
	}
}
