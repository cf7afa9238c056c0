package websocket

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/ws"
)

// acceptGUID is RFC 6455's magic string for Sec-WebSocket-Accept.
const acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// AcceptKey is the Sec-WebSocket-Accept value for a Sec-WebSocket-Key.
func AcceptKey(key string) string {
	var b [acceptLen]byte
	return string(appendAccept(b[:0], key))
}

// acceptLen is the length of a Sec-WebSocket-Accept value: a SHA-1 sum
// in base64.
const acceptLen = 28

// appendAccept appends the Sec-WebSocket-Accept value for key to b,
// allocating nothing when b has room for it (and key is a valid key's
// length, 24).
func appendAccept[K string | []byte](b []byte, key K) []byte {
	var in [64]byte
	sum := sha1.Sum(append(append(in[:0], key...), acceptGUID...))
	return base64.StdEncoding.AppendEncode(b, sum[:])
}

// HandshakeError is a refused upgrade: the status a server answered (or a
// client received) and why.
type HandshakeError struct {
	Status int
	Msg    string
}

func (e *HandshakeError) Error() string { return "websocket: handshake: " + e.Msg }

// upgradeHeader reads the header fields of an upgrade request or an
// extended CONNECT: a native request's, in place, or those that get
// returns (an http.Header's Values, on the compat door).
type upgradeHeader struct {
	x    *riptide.Ctx               // a native request, or nil
	get  func(name string) []string // every value of a field, when x is nil
	host string                     // the request's host, when x is nil
}

// ctxHeader is the upgradeHeader of a native request.
func ctxHeader(x *riptide.Ctx) upgradeHeader { return upgradeHeader{x: x} }

// values returns every value of the field name (copies).
func (h upgradeHeader) values(name string) []string {
	if h.x == nil {
		return h.get(name)
	}
	var vs []string
	for _, f := range h.x.Request().Headers {
		if bytes.EqualFold(f.Name, []byte(name)) {
			vs = append(vs, string(f.Value))
		}
	}
	return vs
}

// hasToken reports whether the comma-separated field name holds token
// (case-insensitive), allocating nothing.
func (h upgradeHeader) hasToken(name, token string) bool {
	if h.x == nil {
		return hasToken(h.get(name), token)
	}
	for _, f := range h.x.Request().Headers {
		if bytes.EqualFold(f.Name, []byte(name)) && listHas(string(f.Value), token) {
			return true
		}
	}
	return false
}

// only appends the value of the field name to dst, with ok set, when the
// field has exactly one value; it allocates nothing where dst has room.
func (h upgradeHeader) only(dst []byte, name string) (v []byte, ok bool) {
	if h.x == nil {
		vs := h.get(name)
		if len(vs) != 1 {
			return dst, false
		}
		return append(dst, vs[0]...), true
	}
	found := false
	for _, f := range h.x.Request().Headers {
		if bytes.EqualFold(f.Name, []byte(name)) {
			if found {
				return dst[:0], false
			}
			found, v = true, append(dst, f.Value...)
		}
	}
	return v, found
}

// hostName is the request's host (the Host field or the authority).
func (h upgradeHeader) hostName() string {
	if h.x == nil {
		return h.host
	}
	return string(h.x.Host())
}

// hasToken reports whether a comma-separated header holds token
// (case-insensitive).
func hasToken(values []string, token string) bool {
	for _, v := range values {
		if listHas(v, token) {
			return true
		}
	}
	return false
}

// listHas reports whether the comma-separated list v holds token
// (case-insensitive, spaces around each element ignored).
func listHas(v, token string) bool {
	for {
		t, rest, more := strings.Cut(v, ",")
		if strings.EqualFold(strings.TrimSpace(t), token) {
			return true
		}
		if !more {
			return false
		}
		v = rest
	}
}

// keyLen is the length of a valid Sec-WebSocket-Key: 16 bytes in base64.
const keyLen = 24

// negotiated is the outcome of a server's checks of an upgrade request.
type negotiated struct {
	key         [keyLen]byte // Sec-WebSocket-Key (upgrades over HTTP/1.1)
	subprotocol string
	deflate     *ws.DeflateParams
	extension   string // the Sec-WebSocket-Extensions answer
}

// checkRequest applies RFC 6455 section 4.2.1 to an upgrade request and
// negotiates the subprotocol and permessage-deflate. It allocates
// nothing for a native request without Origin, subprotocols or
// compression.
func checkRequest(method string, http11 bool, h upgradeHeader, o *Options) (negotiated, *HandshakeError) {
	var n negotiated
	if method != http.MethodGet {
		return n, &HandshakeError{http.StatusMethodNotAllowed, "method is not GET"}
	}
	if !http11 {
		return n, &HandshakeError{http.StatusBadRequest, "upgrade needs HTTP/1.1"}
	}
	if !h.hasToken("Connection", "upgrade") {
		return n, &HandshakeError{http.StatusBadRequest, "Connection header lacks upgrade"}
	}
	if !h.hasToken("Upgrade", "websocket") {
		return n, &HandshakeError{http.StatusBadRequest, "Upgrade header lacks websocket"}
	}
	if herr := checkVersion(h); herr != nil {
		return n, herr
	}
	var kb [keyLen]byte
	key, ok := h.only(kb[:0], "Sec-WebSocket-Key")
	if !ok {
		return n, &HandshakeError{http.StatusBadRequest, "missing or repeated Sec-WebSocket-Key"}
	}
	// 16 bytes in base64 are 24 characters, padded.
	var k [18]byte
	if len(key) != keyLen {
		return n, errKeyLen()
	}
	if m, err := base64.StdEncoding.Decode(k[:], key); err != nil || m != 16 {
		return n, errKeyLen()
	}
	copy(n.key[:], key)
	return n, negotiate(&n, h, o)
}

func errKeyLen() *HandshakeError {
	return &HandshakeError{http.StatusBadRequest, "Sec-WebSocket-Key is not 16 bytes in base64"}
}

// checkVersion requires Sec-WebSocket-Version 13.
func checkVersion(h upgradeHeader) *HandshakeError {
	var vb [8]byte
	if v, ok := h.only(vb[:0], "Sec-WebSocket-Version"); !ok || string(v) != "13" {
		return &HandshakeError{http.StatusUpgradeRequired, "Sec-WebSocket-Version is not 13"}
	}
	return nil
}

// negotiate applies the checks an upgrade and an extended CONNECT share
// (the Origin) and negotiates the subprotocol and permessage-deflate.
func negotiate(n *negotiated, h upgradeHeader, o *Options) *HandshakeError {
	if origin := h.values("Origin"); len(origin) > 0 {
		host := h.hostName()
		ok := false
		if o != nil && o.CheckOrigin != nil {
			ok = o.CheckOrigin(origin[0], host)
		} else if u, err := url.Parse(origin[0]); err == nil {
			ok = strings.EqualFold(u.Host, host)
		}
		if !ok {
			return &HandshakeError{http.StatusForbidden, "cross-origin request refused"}
		}
	}
	if o != nil {
		for _, p := range o.Subprotocols {
			if h.hasToken("Sec-WebSocket-Protocol", p) {
				n.subprotocol = p
				break
			}
		}
		if o.Compression {
			if p, resp, ok := ws.NegotiateDeflate(h.values("Sec-WebSocket-Extensions"), o.Deflate); ok {
				n.deflate, n.extension = &p, resp
			}
		}
	}
	return nil
}

// responseLen is room for a usual 101 response (appendResponse).
const responseLen = 160

// appendResponse appends the 101 response for n.
func appendResponse(b []byte, n *negotiated, o *Options) []byte {
	b = append(b, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "...)
	b = appendAccept(b, n.key[:])
	b = append(b, "\r\n"...)
	if n.subprotocol != "" {
		b = appendField(b, "Sec-WebSocket-Protocol", n.subprotocol)
	}
	if n.extension != "" {
		b = appendField(b, "Sec-WebSocket-Extensions", n.extension)
	}
	if o != nil {
		for k, vs := range o.ResponseHeader {
			for _, v := range vs {
				if validHeader(k, v) {
					b = appendField(b, k, v)
				}
			}
		}
	}
	return append(b, "\r\n"...)
}

// appendField appends the header field "name: value".
func appendField(b []byte, name, value string) []byte {
	b = append(b, name...)
	b = append(b, ": "...)
	b = append(b, value...)
	return append(b, "\r\n"...)
}

// validHeader keeps CR, LF and NUL out of a response head.
func validHeader(k, v string) bool {
	return k != "" && !strings.ContainsAny(k, "\r\n\x00: ") && !strings.ContainsAny(v, "\r\n\x00")
}
