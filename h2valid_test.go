package riptide_test

// The request head of an HTTP/2 stream is checked once, where both doors
// read it (h1.PseudoHead.Check, called by the stream's setRequest), by the
// rules HTTP/1.1 applies to its request line and Host (issue 23.8).

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2HeadCase is one request head: the fields after the defaults are
// changed, and the RFC rule it tests.
type h2HeadCase struct {
	rule string
	// set replaces (or, with an empty value and drop, removes) pseudo
	// fields of the default GET / head; extra are regular fields.
	set   map[string]string
	drop  []string
	extra []hpack.HeaderField
	valid bool // served (200); otherwise malformed
	// netHTTPResets: net/http resets this malformed head too (for the
	// others it serves it, or answers otherwise: the test logs what).
	netHTTPResets bool
}

var h2HeadCases = map[string]h2HeadCase{
	// Controls: valid heads are served on every target.
	"valid": {rule: "RFC 9113 §8.3.1", valid: true},
	"valid, host equals :authority but for case": {rule: "RFC 9113 §8.3.1, RFC 3986 §3.2.2 (host is case-insensitive)",
		set: map[string]string{":authority": "A.example"}, extra: []hpack.HeaderField{{Name: "host", Value: "a.example"}}, valid: true},
	"valid, host without :authority": {rule: "RFC 9113 §8.3.1 (host instead of :authority)",
		drop: []string{":authority"}, extra: []hpack.HeaderField{{Name: "host", Value: "a.example"}}, valid: true},

	":authority with a space": {rule: "RFC 3986 §3.2.2 reg-name, RFC 9110 §7.2 (the HTTP/1.1 Host rule)",
		set: map[string]string{":authority": "a b"}},
	":authority with userinfo": {rule: "RFC 9113 §8.3.1: MUST NOT include userinfo",
		set: map[string]string{":authority": "user:pw@a.example"}, netHTTPResets: true},
	":authority with path and query": {rule: "RFC 3986 §3.2 authority grammar",
		set: map[string]string{":authority": "a.example/x?y"}},
	":authority empty": {rule: "RFC 9110 §4.2.1: an http(s) URI with an empty host is invalid",
		set: map[string]string{":authority": ""}},
	":authority port not numeric": {rule: "RFC 3986 §3.2.3 port = *DIGIT",
		set: map[string]string{":authority": "a.example:8x"}},
	":path absolute-form": {rule: "RFC 9113 §8.3.1: :path is the path and query (origin-form) or '*'",
		set: map[string]string{":path": "http://evil.example/"}},
	":path without leading slash": {rule: "RFC 9113 §8.3.1, RFC 9112 §3.2.1 origin-form",
		set: map[string]string{":path": "a.example/x"}, netHTTPResets: true},
	":path * for GET": {rule: "RFC 9113 §8.3.1: '*' only for OPTIONS",
		set: map[string]string{":path": "*"}},
	":path with a space": {rule: "RFC 9112 §3.2 request-target characters (as HTTP/1.1)",
		set: map[string]string{":path": "/a b"}},
	":path with a bad percent-escape": {rule: "RFC 3986 §2.1 pct-encoded",
		set: map[string]string{":path": "/a%zz"}, netHTTPResets: true},
	":scheme ftp": {rule: "RFC 9113 §8.3.1: http or https",
		set: map[string]string{":scheme": "ftp"}, netHTTPResets: true},
	":method not a token": {rule: "RFC 9110 §9.1 method = token",
		set: map[string]string{":method": "G T"}},
	"CONNECT without a port": {rule: "RFC 9113 §8.5, RFC 9112 §3.2.3 authority-form host:port",
		set: map[string]string{":method": "CONNECT", ":authority": "a.example"}, drop: []string{":scheme", ":path"}},
	"host differs from :authority": {rule: "RFC 9113 §8.3.1: a host that differs from :authority is malformed",
		extra: []hpack.HeaderField{{Name: "host", Value: "b.example"}}},
	"two host fields": {rule: "RFC 9110 §7.2, RFC 9112 §3.2: one Host",
		drop:  []string{":authority"},
		extra: []hpack.HeaderField{{Name: "host", Value: "a.example"}, {Name: "host", Value: "b.example"}}},
	"host with userinfo, no :authority": {rule: "RFC 9110 §7.2 Host = uri-host [ \":\" port ]",
		drop: []string{":authority"}, extra: []hpack.HeaderField{{Name: "host", Value: "user@a.example"}}, netHTTPResets: true},
	"0x7f in a field value": {rule: "RFC 9110 §5.5 field-vchar, RFC 9113 §8.2.1",
		extra: []hpack.HeaderField{{Name: "x-a", Value: "a\x7fb"}}, netHTTPResets: true},
	"0x7f in :authority": {rule: "RFC 9113 §8.2.1, RFC 3986 §3.2.2",
		set: map[string]string{":authority": "a\x7f.example"}, netHTTPResets: true},
}

// TestH2RequestHeadValidation sends each head of h2HeadCases on a fresh
// connection to every target, h2c and TLS: riptide (native, compat and
// inline) must serve the valid heads and reset the stream of every
// malformed one with PROTOCOL_ERROR (RFC 9113 §8.1.1). net/http must serve
// the valid heads and reset those marked netHTTPResets; what it does with
// the other malformed heads is logged (it serves most of them).
func TestH2RequestHeadValidation(t *testing.T) {
	forEachH2(t, func(t *testing.T, in *h2Instance) {
		netHTTP := strings.HasPrefix(t.Name(), "TestH2RequestHeadValidation/net-http/")
		for name, tc := range h2HeadCases {
			got := h2SendHead(t, in, tc)
			want := "RST_STREAM(PROTOCOL_ERROR)"
			if tc.valid {
				want = ":status 200"
			} else if netHTTP && !tc.netHTTPResets {
				t.Logf("net/http, %s: %s", name, got)
				continue
			}
			if got != want {
				t.Errorf("%s (%s): got %s, want %s", name, tc.rule, got, want)
			}
		}
	})
}

// h2SendHead opens a connection to in, sends tc's head as stream 1 (ended)
// and returns the server's answer on it: ":status N" or
// "RST_STREAM(CODE)", or what ended the connection.
func h2SendHead(t *testing.T, in *h2Instance, tc h2HeadCase) string {
	t.Helper()
	a := newH2Attacker(t, in, 0)
	defer closeRaw(a.conn)
	scheme := "http"
	if in.tls {
		scheme = "https"
	}
	pseudo := []hpack.HeaderField{
		{Name: ":method", Value: "GET"},
		{Name: ":scheme", Value: scheme},
		{Name: ":authority", Value: "a.example"},
		{Name: ":path", Value: "/"},
	}
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	for _, f := range pseudo {
		if v, ok := tc.set[f.Name]; ok {
			f.Value = v
		}
		if !containsString(tc.drop, f.Name) {
			_ = enc.WriteField(f)
		}
	}
	for _, f := range tc.extra {
		_ = enc.WriteField(f)
	}
	if err := a.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: buf.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	for {
		f, err := a.fr.ReadFrame()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("no answer: %v", err)
			}
			return "end(" + err.Error() + ")"
		}
		switch f := f.(type) {
		case *http2.RSTStreamFrame:
			if f.StreamID == 1 {
				return "RST_STREAM(" + f.ErrCode.String() + ")"
			}
		case *http2.MetaHeadersFrame:
			if f.StreamID == 1 {
				return ":status " + f.PseudoValue("status")
			}
		case *http2.GoAwayFrame:
			return "GOAWAY(" + f.ErrCode.String() + ")"
		}
	}
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
