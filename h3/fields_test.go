package h3

import (
	"strings"
	"testing"

	"github.com/riptide-http/riptide/h1"
)

// fl builds fields from "name: value" strings.
func fl(lines ...string) []Field {
	fs := make([]Field, len(lines))
	for i, l := range lines {
		n, v, _ := strings.Cut(l[1:], ":")
		fs[i] = Field{Name: []byte(l[:1] + n), Value: []byte(strings.TrimPrefix(v, " "))}
	}
	return fs
}

var getFields = []string{":method: GET", ":scheme: https", ":authority: example.com", ":path: /a?b=c"}

func with(extra ...string) []Field { return fl(append(append([]string{}, getFields...), extra...)...) }

func TestRequestHeadParse(t *testing.T) {
	tests := []struct {
		rule     string
		fields   []Field
		extended bool
		err      error
	}{
		{"RFC 9114 §4.3.1: GET with all pseudo-headers", with("accept: */*"), false, nil},
		{"RFC 9114 §4.3.1: host instead of :authority", fl(":method: GET", ":scheme: https", ":path: /", "host: example.com"), false, nil},
		{"RFC 9114 §4.3.1: :authority and host equal", with("host: example.com"), false, nil},
		{"RFC 9114 §4.3.1: :authority and host differ", with("host: other.example"), false, ErrBadAuthority},
		{"RFC 9114 §4.3.1: https without :authority or host", fl(":method: GET", ":scheme: https", ":path: /"), false, ErrBadAuthority},
		{"RFC 9114 §4.3.1: empty :authority", fl(":method: GET", ":scheme: https", ":authority: ", ":path: /"), false, ErrBadAuthority},
		{"RFC 9114 §4.3.1: :authority with userinfo", fl(":method: GET", ":scheme: https", ":authority: u@example.com", ":path: /"), false, ErrBadAuthority},
		{"RFC 9114 §4.3.1: two host fields", fl(":method: GET", ":scheme: https", ":path: /", "host: a", "host: a"), false, ErrBadAuthority},
		{"RFC 9114 §4.3.1: missing :method", fl(":scheme: https", ":authority: a", ":path: /"), false, ErrMissingPseudo},
		{"RFC 9114 §4.3.1: missing :scheme", fl(":method: GET", ":authority: a", ":path: /"), false, ErrMissingPseudo},
		{"RFC 9114 §4.3.1: missing :path", fl(":method: GET", ":scheme: https", ":authority: a"), false, ErrMissingPseudo},
		{"RFC 9114 §4.3.1: empty :path", fl(":method: GET", ":scheme: https", ":authority: a", ":path: "), false, ErrBadPath},
		{"RFC 9114 §4.3.1: :path not origin-form", fl(":method: GET", ":scheme: https", ":authority: a", ":path: x"), false, ErrBadPath},
		{"RFC 9114 §4.3.1: OPTIONS *", fl(":method: OPTIONS", ":scheme: https", ":authority: a", ":path: *"), false, nil},
		{"RFC 9114 §4.3.1: GET *", fl(":method: GET", ":scheme: https", ":authority: a", ":path: *"), false, ErrBadPath},
		{"RFC 9114 §4.3: repeated pseudo-header", fl(":method: GET", ":method: GET", ":scheme: https", ":authority: a", ":path: /"), false, ErrDuplicatePseudo},
		{"RFC 9114 §4.3: unknown pseudo-header", fl(":method: GET", ":scheme: https", ":authority: a", ":path: /", ":foo: x"), false, ErrUnknownPseudo},
		{"RFC 9114 §4.3: response pseudo-header in a request", fl(":status: 200", ":method: GET", ":scheme: https", ":authority: a", ":path: /"), false, ErrUnknownPseudo},
		{"RFC 9114 §4.3: pseudo-header after a regular field", fl(":method: GET", ":scheme: https", "accept: x", ":authority: a", ":path: /"), false, ErrPseudoAfterRegular},
		{"RFC 9114 §4.3.1: invalid method", fl(":method: G T", ":scheme: https", ":authority: a", ":path: /"), false, ErrBadFieldValue},
		{"RFC 9114 §4.2: uppercase field name", with("Accept: x"), false, ErrUppercaseName},
		{"RFC 9114 §4.2: invalid field name", with("a b: x"), false, ErrBadFieldName},
		{"RFC 9114 §4.2: empty field name", append(with(), Field{Name: []byte{}, Value: []byte("x")}), false, ErrBadFieldName},
		{"RFC 9114 §10.3: CR in a value", with("x-a: a\rb"), false, ErrBadFieldValue},
		{"RFC 9114 §10.3: LF in a value", with("x-a: a\nb"), false, ErrBadFieldValue},
		{"RFC 9114 §10.3: NUL in a value", with("x-a: a\x00b"), false, ErrBadFieldValue},
		{"RFC 9114 §10.3: NUL in a pseudo-header value", fl(":method: GET", ":scheme: https", ":authority: a", ":path: /\x00"), false, ErrBadFieldValue},
		{"RFC 9114 §10.3: HTAB and obs-text allowed", with("x-a: a\tb\xff"), false, nil},
		{"RFC 9114 §4.2: connection", with("connection: close"), false, ErrConnectionSpecific},
		{"RFC 9114 §4.2: keep-alive", with("keep-alive: 5"), false, ErrConnectionSpecific},
		{"RFC 9114 §4.2: proxy-connection", with("proxy-connection: x"), false, ErrConnectionSpecific},
		{"RFC 9114 §4.2: transfer-encoding", with("transfer-encoding: chunked"), false, ErrConnectionSpecific},
		{"RFC 9114 §4.2: upgrade", with("upgrade: websocket"), false, ErrConnectionSpecific},
		{"RFC 9114 §4.2: te: trailers", with("te: trailers"), false, nil},
		{"RFC 9114 §4.2: te other than trailers", with("te: gzip"), false, ErrBadTE},
		{"RFC 9114 §4.1.2: content-length", with("content-length: 12"), false, nil},
		{"RFC 9114 §4.1.2: content-length repeated, same value", with("content-length: 12", "content-length: 12"), false, nil},
		{"RFC 9114 §4.1.2: content-length conflicting", with("content-length: 12", "content-length: 13"), false, ErrBadContentLength},
		{"RFC 9114 §4.1.2: content-length not digits", with("content-length: 1x"), false, ErrBadContentLength},
		{"RFC 9114 §4.1.2: content-length list", with("content-length: 1, 1"), false, ErrBadContentLength},
		{"RFC 9114 §4.1.2: content-length past 2^64", with("content-length: 18446744073709551617"), false, ErrBadContentLength},
		{"RFC 9114 §4.4: CONNECT", fl(":method: CONNECT", ":authority: example.com:443"), false, nil},
		{"RFC 9114 §4.4: CONNECT without :authority", fl(":method: CONNECT"), false, ErrMissingPseudo},
		{"RFC 9114 §4.4: CONNECT without a port", fl(":method: CONNECT", ":authority: example.com"), false, ErrBadAuthority},
		{"RFC 9114 §4.4: CONNECT with :scheme", fl(":method: CONNECT", ":scheme: https", ":authority: a:1"), false, ErrConnectPseudo},
		{"RFC 9114 §4.4: CONNECT with :path", fl(":method: CONNECT", ":authority: a:1", ":path: /"), false, ErrConnectPseudo},
		{"RFC 9220 §4: extended CONNECT", fl(":method: CONNECT", ":protocol: websocket", ":scheme: https", ":authority: example.com", ":path: /chat"), true, nil},
		{"RFC 9220 §3: :protocol not enabled", fl(":method: CONNECT", ":protocol: websocket", ":scheme: https", ":authority: example.com", ":path: /chat"), false, ErrProtocolNotConnect},
		{"RFC 9220 §4: :protocol with GET", fl(":method: GET", ":protocol: websocket", ":scheme: https", ":authority: example.com", ":path: /chat"), true, ErrProtocolNotConnect},
		{"RFC 9220 §4: extended CONNECT without :path", fl(":method: CONNECT", ":protocol: websocket", ":scheme: https", ":authority: example.com"), true, ErrMissingPseudo},
		{"RFC 9220 §4: extended CONNECT without :scheme", fl(":method: CONNECT", ":protocol: websocket", ":authority: example.com", ":path: /"), true, ErrMissingPseudo},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			var r RequestHead
			err := r.Parse(tt.fields, tt.extended)
			if err != tt.err {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if e, ok := err.(*Error); ok && (e.Code != CodeMessageError || e.Conn || e.Status != 400) {
				t.Fatalf("error %+v is not a malformed-request stream error", e)
			}
		})
	}
}

func TestRequestHeadFields(t *testing.T) {
	var r RequestHead
	if err := r.Parse(with("content-length: 5", "cookie: a=1"), false); err != nil {
		t.Fatal(err)
	}
	if string(r.Method) != "GET" || string(r.Scheme) != "https" || string(r.Path) != "/a?b=c" ||
		string(r.Host) != "example.com" || r.ContentLength != 5 || len(r.Fields) != 2 || r.Protocol != nil {
		t.Fatalf("head %+v", r)
	}
	if err := r.Parse(with(), false); err != nil || r.ContentLength != -1 {
		t.Fatalf("no content-length: %d, %v", r.ContentLength, err)
	}
}

func TestCheckTrailers(t *testing.T) {
	if err := CheckTrailers(fl("x-checksum: abc", "grpc-status: 0")); err != nil {
		t.Fatal(err)
	}
	// RFC 9114 §4.3: no pseudo-header fields in trailers.
	if err := CheckTrailers(fl("x-checksum: abc", ":status: 200")); err != ErrPseudoInTrailers {
		t.Fatalf("pseudo in trailers: %v", err)
	}
	// RFC 9114 §4.2: the field rules apply to trailers too.
	if err := CheckTrailers(fl("transfer-encoding: chunked")); err != ErrConnectionSpecific {
		t.Fatalf("connection-specific trailer: %v", err)
	}
}

func TestCheckBodyLength(t *testing.T) {
	for _, c := range []struct {
		decl, got int64
		ended     bool
		err       error
	}{
		{-1, 100, true, nil},
		{10, 5, false, nil},
		{10, 10, true, nil},
		{10, 11, false, ErrBodyLength}, // RFC 9114 §4.1.2: more DATA than declared
		{10, 9, true, ErrBodyLength},   // RFC 9114 §4.1.2: less DATA than declared
		{0, 0, true, nil},
	} {
		if err := CheckBodyLength(c.decl, c.got, c.ended); err != c.err {
			t.Errorf("CheckBodyLength(%d, %d, %v) = %v, want %v", c.decl, c.got, c.ended, err, c.err)
		}
	}
}

// Build fills an h1.Request the way the HTTP/2 door does (h2ctx.go
// fillRequest).
func TestRequestHeadBuild(t *testing.T) {
	var r RequestHead
	if err := r.Parse(with("content-length: 3", "cookie: a=1", "user-agent: x"), false); err != nil {
		t.Fatal(err)
	}
	var req h1.Request
	req.AddHeader([]byte("stale"), []byte("x")) // Build resets
	if err := r.Build(&req); err != nil {
		t.Fatal(err)
	}
	if string(req.Method) != "GET" || string(req.Target) != "/a?b=c" || string(req.Path) != "/a" || string(req.Query) != "b=c" ||
		req.Form != h1.OriginForm || string(req.Host) != "example.com" || req.ContentLength != 3 || req.Major != 1 || req.Minor != 1 {
		t.Fatalf("request %+v", req)
	}
	if len(req.Headers) != 3 || string(req.Known(h1.HeaderCookie)) != "a=1" || string(req.Get("User-Agent")) != "x" {
		t.Fatalf("headers %+v", req.Headers)
	}
	// CONNECT: the authority is the target.
	if err := r.Parse(fl(":method: CONNECT", ":authority: example.com:443"), false); err != nil {
		t.Fatal(err)
	}
	if err := r.Build(&req); err != nil || req.Form != h1.AuthorityForm || string(req.Target) != "example.com:443" {
		t.Fatalf("CONNECT: %+v, %v", req, err)
	}
	// An extended CONNECT (RFC 9220): CONNECT with the :path as an
	// origin-form target.
	if err := r.Parse(fl(":method: CONNECT", ":protocol: websocket", ":scheme: https", ":authority: example.com", ":path: /chat?x=1"), true); err != nil {
		t.Fatal(err)
	}
	if err := r.Build(&req); err != nil || string(req.Method) != "CONNECT" || req.Form != h1.OriginForm || string(req.Path) != "/chat" || string(req.Query) != "x=1" || string(r.Protocol) != "websocket" {
		t.Fatalf("extended CONNECT: %+v, %v", req, err)
	}
	// A target h1 refuses (an invalid percent escape) is h1.ErrBadTarget.
	if err := r.Parse(fl(":method: GET", ":scheme: https", ":authority: a", ":path: /%zz"), false); err != nil {
		t.Fatal(err)
	}
	if err := r.Build(&req); err != h1.ErrBadTarget {
		t.Fatalf("bad target: %v", err)
	}
}
