package h1

// Building a Request from fields decoded by another protocol (an HTTP/2
// HEADERS frame), so that it reads exactly like one Parse filled.

import (
	"strings"
	"unicode/utf8"

	"github.com/riptide-http/riptide/internal/ascii"
)

// SetRequestLine sets the method and target, checked and split as Parse
// does for a request line of version 1.minor.
func (r *Request) SetRequestLine(method, target []byte, minor int) error {
	r.Method, r.Target = method, target
	r.Major, r.Minor = 1, minor
	if !IsToken(method) {
		return ErrBadMethod
	}
	if len(target) == 0 {
		return ErrBadTarget
	}
	return r.parseTarget()
}

// SetExtendedConnectLine sets the method and target of an extended
// CONNECT (RFC 8441, RFC 9220): method CONNECT with the :path as an
// origin-form target, checked and split as Parse does for a GET's.
func (r *Request) SetExtendedConnectLine(method, target []byte) error {
	r.Method, r.Target = nil, target // parseTarget: not CONNECT's authority-form
	r.Major, r.Minor = 1, 1
	if len(target) == 0 || target[0] != '/' {
		r.Method = method
		return ErrBadTarget
	}
	err := r.parseTarget()
	r.Method = method
	return err
}

// AddHeader appends a header field, classified as Parse classifies it. The
// caller checks names, values and limits.
func (r *Request) AddHeader(name, value []byte) {
	k := Lookup(name)
	r.Headers = append(r.Headers, Header{Name: name, Value: value, Key: k})
	if k != Unknown && r.known[k] == 0 && len(r.Headers) < 256 {
		r.known[k] = uint8(len(r.Headers))
	}
}

// PseudoHead is the request head of an HTTP/2 header block as Check sees
// it: the request pseudo-header fields ("" for one that is absent) and the
// regular host fields.
type PseudoHead struct {
	Method, Scheme, Authority, Path string
	// Protocol is the :protocol of an extended CONNECT (RFC 8441), ""
	// if absent.
	Protocol string
	// HasAuthority tells an empty :authority from an absent one.
	HasAuthority bool
	// Host is the value of the last host field; Hosts counts them.
	Host  string
	Hosts int
}

// Check applies to an HTTP/2 request head the rules HTTP/1.1 applies to a
// request line and Host (Parse), so that both protocols let the same
// requests through. It returns nil or the error for the first rule broken;
// an HTTP/2 server treats any as a malformed request (RFC 9113 §8.1.1).
//
//   - :method is present and a token (RFC 9113 §8.3.1, RFC 9110 §9.1).
//   - CONNECT (RFC 9113 §8.5): no :scheme or :path, and an :authority of
//     host ":" port.
//   - An extended CONNECT (RFC 8441 §4: :protocol present) is CONNECT
//     with :scheme, :path and :authority, checked as other methods'.
//   - Other methods (RFC 9113 §8.3.1): :scheme is "http" or "https"; :path
//     is origin-form (starts with "/"; no absolute-form) or "*" for
//     OPTIONS, of the characters and percent-escapes HTTP/1.1 allows.
//   - :authority, when present, and a host field are a valid Host: host
//     [":" port], no userinfo, no path or query, not empty (RFC 9113
//     §8.3.1, RFC 3986 §3.2, RFC 9110 §4.2.1, §7.2).
//   - At most one host field (RFC 9110 §7.2, RFC 9112 §3.2); with
//     :authority it names the same authority (RFC 9113 §8.3.1).
func (h *PseudoHead) Check() error {
	if !ValidHeaderName(h.Method) { // a token
		return ErrBadMethod
	}
	switch {
	case h.Protocol != "" && (h.Method != "CONNECT" || !h.HasAuthority):
		return ErrBadTarget
	case h.Method == "CONNECT" && h.Protocol == "":
		if h.Scheme != "" || h.Path != "" || !ascii.ValidAuthority(h.Authority, true) {
			return ErrBadTarget
		}
	default:
		if h.Scheme != "http" && h.Scheme != "https" {
			return ErrBadTarget
		}
		if !validOriginPath(h.Path) && (h.Path != "*" || h.Method != "OPTIONS") {
			return ErrBadTarget
		}
		if h.HasAuthority && !validAuthority(h.Authority) {
			return ErrBadHost
		}
	}
	switch {
	case h.Hosts > 1:
		return ErrDuplicateHost
	case h.Hosts == 1 && !validAuthority(h.Host):
		return ErrBadHost
	case h.Hosts == 1 && h.HasAuthority && !ascii.EqualFold(h.Host, h.Authority):
		return ErrBadHost
	}
	return nil
}

// validAuthority checks a non-empty Host value: uri-host [ ":" port ].
func validAuthority[T ~string | ~[]byte](a T) bool {
	return ascii.ValidAuthority(a, false) && validPercent(a)
}

// validOriginPath checks an origin-form target ("/" path ["?" query]):
// the characters targetTable allows, bytes >= 0x80 as valid UTF-8, '%'
// starting two hex digits in the path.
func validOriginPath(t string) bool {
	if len(t) == 0 || t[0] != '/' {
		return false
	}
	for i := 0; i < len(t); i++ {
		if !targetTable[t[i]] {
			return false
		}
	}
	if !utf8.ValidString(t) { // raw bytes >= 0x80 only as UTF-8 (parseTarget)
		return false
	}
	// The path's escapes must be valid; the query is opaque to the
	// server, as parseTarget treats it on HTTP/1.1 ("?q=100%").
	if q := strings.IndexByte(t, '?'); q >= 0 {
		t = t[:q]
	}
	return validPercent(t)
}
