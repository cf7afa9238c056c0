package websocket

import (
	"crypto/sha1"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"

	"github.com/riptide-http/riptide/ws"
)

// acceptGUID is RFC 6455's magic string for Sec-WebSocket-Accept.
const acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// AcceptKey is the Sec-WebSocket-Accept value for a Sec-WebSocket-Key.
func AcceptKey(key string) string {
	h := sha1.Sum([]byte(key + acceptGUID))
	return base64.StdEncoding.EncodeToString(h[:])
}

// HandshakeError is a refused upgrade: the status a server answered (or a
// client received) and why.
type HandshakeError struct {
	Status int
	Msg    string
}

func (e *HandshakeError) Error() string { return "websocket: handshake: " + e.Msg }

// headerGetter returns every value of a request header field.
type headerGetter func(name string) []string

// hasToken reports whether a comma-separated header holds token
// (case-insensitive).
func hasToken(values []string, token string) bool {
	for _, v := range values {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// negotiated is the outcome of a server's checks of an upgrade request.
type negotiated struct {
	key         string
	subprotocol string
	deflate     *ws.DeflateParams
	extension   string // the Sec-WebSocket-Extensions answer
}

// checkRequest applies RFC 6455 section 4.2.1 to an upgrade request and
// negotiates the subprotocol and permessage-deflate.
func checkRequest(method string, http11 bool, host string, get headerGetter, o *Options) (negotiated, *HandshakeError) {
	var n negotiated
	if method != http.MethodGet {
		return n, &HandshakeError{http.StatusMethodNotAllowed, "method is not GET"}
	}
	if !http11 {
		return n, &HandshakeError{http.StatusBadRequest, "upgrade needs HTTP/1.1"}
	}
	if !hasToken(get("Connection"), "upgrade") {
		return n, &HandshakeError{http.StatusBadRequest, "Connection header lacks upgrade"}
	}
	if !hasToken(get("Upgrade"), "websocket") {
		return n, &HandshakeError{http.StatusBadRequest, "Upgrade header lacks websocket"}
	}
	if v := get("Sec-WebSocket-Version"); len(v) != 1 || v[0] != "13" {
		return n, &HandshakeError{http.StatusUpgradeRequired, "Sec-WebSocket-Version is not 13"}
	}
	keys := get("Sec-WebSocket-Key")
	if len(keys) != 1 {
		return n, &HandshakeError{http.StatusBadRequest, "missing or repeated Sec-WebSocket-Key"}
	}
	if k, err := base64.StdEncoding.DecodeString(keys[0]); err != nil || len(k) != 16 {
		return n, &HandshakeError{http.StatusBadRequest, "Sec-WebSocket-Key is not 16 bytes in base64"}
	}
	n.key = keys[0]
	return n, negotiate(&n, host, get, o)
}

// negotiate applies the checks an upgrade and an extended CONNECT share
// (the Origin) and negotiates the subprotocol and permessage-deflate.
func negotiate(n *negotiated, host string, get headerGetter, o *Options) *HandshakeError {
	if origin := get("Origin"); len(origin) > 0 {
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
		offered := get("Sec-WebSocket-Protocol")
	pick:
		for _, p := range o.Subprotocols {
			if hasToken(offered, p) {
				n.subprotocol = p
				break pick
			}
		}
		if o.Compression {
			if p, resp, ok := ws.NegotiateDeflate(get("Sec-WebSocket-Extensions"), o.Deflate); ok {
				n.deflate, n.extension = &p, resp
			}
		}
	}
	return nil
}

// appendResponse appends the 101 response for n.
func appendResponse(b []byte, n *negotiated, o *Options) []byte {
	b = append(b, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "...)
	b = append(b, AcceptKey(n.key)...)
	b = append(b, "\r\n"...)
	if n.subprotocol != "" {
		b = append(b, "Sec-WebSocket-Protocol: "+n.subprotocol+"\r\n"...)
	}
	if n.extension != "" {
		b = append(b, "Sec-WebSocket-Extensions: "+n.extension+"\r\n"...)
	}
	if o != nil {
		for k, vs := range o.ResponseHeader {
			for _, v := range vs {
				if validHeader(k, v) {
					b = append(b, k+": "+v+"\r\n"...)
				}
			}
		}
	}
	return append(b, "\r\n"...)
}

// validHeader keeps CR, LF and NUL out of a response head.
func validHeader(k, v string) bool {
	return k != "" && !strings.ContainsAny(k, "\r\n\x00: ") && !strings.ContainsAny(v, "\r\n\x00")
}
