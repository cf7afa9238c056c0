package h1

import "testing"

// TestPseudoHeadCheck: the HTTP/2 request-head rules of PseudoHead.Check,
// each row naming its rule. internal/h2's TestRequestHeadValidatedOnce
// runs the same rules through the engine over h2c and TLS.
func TestPseudoHeadCheck(t *testing.T) {
	get := PseudoHead{Method: "GET", Scheme: "https", Authority: "a.example", HasAuthority: true, Path: "/x?y"}
	with := func(f func(h *PseudoHead)) PseudoHead { h := get; f(&h); return h }
	for _, tc := range []struct {
		rule string
		head PseudoHead
		want error
	}{
		{"valid GET", get, nil},
		{"valid OPTIONS * (RFC 9113 §8.3.1)", with(func(h *PseudoHead) { h.Method, h.Path = "OPTIONS", "*" }), nil},
		{"valid CONNECT host:port (RFC 9113 §8.5)", PseudoHead{Method: "CONNECT", Authority: "a.example:443", HasAuthority: true}, nil},
		{"valid host equal to :authority but for case", with(func(h *PseudoHead) { h.Host, h.Hosts = "A.EXAMPLE", 1 }), nil},
		{"valid host without :authority", with(func(h *PseudoHead) { h.Authority, h.HasAuthority, h.Host, h.Hosts = "", false, "a.example:8080", 1 }), nil},
		{"valid: no authority at all", with(func(h *PseudoHead) { h.Authority, h.HasAuthority = "", false }), nil},
		{"method not a token (RFC 9110 §9.1)", with(func(h *PseudoHead) { h.Method = "G T" }), ErrBadMethod},
		{"method absent (RFC 9113 §8.3.1)", with(func(h *PseudoHead) { h.Method = "" }), ErrBadMethod},
		{"scheme ftp (RFC 9113 §8.3.1)", with(func(h *PseudoHead) { h.Scheme = "ftp" }), ErrBadTarget},
		{"scheme absent (RFC 9113 §8.3.1)", with(func(h *PseudoHead) { h.Scheme = "" }), ErrBadTarget},
		{"path absent (RFC 9113 §8.3.1)", with(func(h *PseudoHead) { h.Path = "" }), ErrBadTarget},
		{"path absolute-form (RFC 9113 §8.3.1)", with(func(h *PseudoHead) { h.Path = "http://evil.example/" }), ErrBadTarget},
		{"path * for GET (RFC 9113 §8.3.1)", with(func(h *PseudoHead) { h.Path = "*" }), ErrBadTarget},
		{"path with a space (RFC 9112 §3.2)", with(func(h *PseudoHead) { h.Path = "/a b" }), ErrBadTarget},
		{"path with a bad escape (RFC 3986 §2.1)", with(func(h *PseudoHead) { h.Path = "/a%2" }), ErrBadTarget},
		{"query with a stray % is the application's, as on HTTP/1.1 and net/http", with(func(h *PseudoHead) { h.Path = "/q?q=100%" }), nil},
		{"query with a bad escape, as net/http serves it", with(func(h *PseudoHead) { h.Path = "/q?%zz" }), nil},
		{"bad escape in the path before a query (RFC 3986 §2.1)", with(func(h *PseudoHead) { h.Path = "/a%zz?q" }), ErrBadTarget},
		{"valid extended CONNECT (RFC 8441 §4)", with(func(h *PseudoHead) { h.Method, h.Protocol = "CONNECT", "websocket" }), nil},
		{"extended CONNECT without :path (RFC 8441 §4)", with(func(h *PseudoHead) { h.Method, h.Protocol, h.Path = "CONNECT", "websocket", "" }), ErrBadTarget},
		{"extended CONNECT without :scheme (RFC 8441 §4)", with(func(h *PseudoHead) { h.Method, h.Protocol, h.Scheme = "CONNECT", "websocket", "" }), ErrBadTarget},
		{"extended CONNECT without :authority (RFC 8441 §4)", with(func(h *PseudoHead) {
			h.Method, h.Protocol, h.Authority, h.HasAuthority = "CONNECT", "websocket", "", false
		}), ErrBadTarget},
		{":protocol on GET (RFC 8441 §4)", with(func(h *PseudoHead) { h.Protocol = "websocket" }), ErrBadTarget},
		{"CONNECT with :path (RFC 9113 §8.5)", PseudoHead{Method: "CONNECT", Authority: "a.example:443", HasAuthority: true, Path: "/"}, ErrBadTarget},
		{"CONNECT without port (RFC 9112 §3.2.3)", PseudoHead{Method: "CONNECT", Authority: "a.example", HasAuthority: true}, ErrBadTarget},
		{"authority with userinfo (RFC 9113 §8.3.1)", with(func(h *PseudoHead) { h.Authority = "u:p@a.example" }), ErrBadHost},
		{"authority with a space (RFC 3986 §3.2.2)", with(func(h *PseudoHead) { h.Authority = "a b" }), ErrBadHost},
		{"authority with a path (RFC 3986 §3.2)", with(func(h *PseudoHead) { h.Authority = "a.example/x?y" }), ErrBadHost},
		{"authority empty (RFC 9110 §4.2.1)", with(func(h *PseudoHead) { h.Authority = "" }), ErrBadHost},
		{"authority port not digits (RFC 3986 §3.2.3)", with(func(h *PseudoHead) { h.Authority = "a.example:x" }), ErrBadHost},
		{"two host fields (RFC 9110 §7.2)", with(func(h *PseudoHead) { h.Host, h.Hosts = "a.example", 2 }), ErrDuplicateHost},
		{"host differs from :authority (RFC 9113 §8.3.1)", with(func(h *PseudoHead) { h.Host, h.Hosts = "b.example", 1 }), ErrBadHost},
		{"host empty (RFC 9110 §4.2.1)", with(func(h *PseudoHead) { h.Authority, h.HasAuthority, h.Host, h.Hosts = "", false, "", 1 }), ErrBadHost},
		{"host with userinfo (RFC 9110 §7.2)", with(func(h *PseudoHead) { h.Authority, h.HasAuthority, h.Host, h.Hosts = "", false, "u@a.example", 1 }), ErrBadHost},
	} {
		if got := tc.head.Check(); got != tc.want {
			t.Errorf("%s: %+v: got %v, want %v", tc.rule, tc.head, got, tc.want)
		}
	}
}
