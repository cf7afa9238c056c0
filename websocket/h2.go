package websocket

// WebSocket over HTTP/2 (RFC 8441) and HTTP/3 (RFC 9220): the handshake
// is an extended CONNECT (:method CONNECT, :protocol websocket, with
// :scheme, :path and :authority) answered 200, with neither
// Sec-WebSocket-Key nor Sec-WebSocket-Accept, and the stream is the byte
// stream the frames travel on, with the stream's flow control. The server
// accepts them when riptide's HTTP2Config.EnableConnectProtocol is set;
// the Conn is the same as over HTTP/1.1.

import (
	"bytes"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/riptide-http/riptide"
)

// protocolWebSocket is the :protocol of a WebSocket's extended CONNECT.
const protocolWebSocket = "websocket"

// errNotExtendedConnect refuses a WebSocket request over HTTP/2 or HTTP/3
// that is not an extended CONNECT (an HTTP/1.1-style GET upgrade has no
// meaning there).
func errNotExtendedConnect() *HandshakeError {
	return &HandshakeError{http.StatusNotImplemented, "WebSocket over HTTP/2 and HTTP/3 takes an extended CONNECT (RFC 8441, RFC 9220)"}
}

// checkConnect applies RFC 8441 §5 to an extended CONNECT (method and
// :protocol already checked): version 13, the Origin, and the
// subprotocol and permessage-deflate negotiation.
func checkConnect(host string, get headerGetter, o *Options) (negotiated, *HandshakeError) {
	var n negotiated
	if v := get("Sec-WebSocket-Version"); len(v) != 1 || v[0] != "13" {
		return n, &HandshakeError{http.StatusUpgradeRequired, "Sec-WebSocket-Version is not 13"}
	}
	return n, negotiate(&n, host, get, o)
}

// responseFields calls set for each field of the 200 answering an
// extended CONNECT.
func responseFields(n *negotiated, o *Options, set func(name, value string)) {
	if n.subprotocol != "" {
		set("Sec-WebSocket-Protocol", n.subprotocol)
	}
	if n.extension != "" {
		set("Sec-WebSocket-Extensions", n.extension)
	}
	if o != nil {
		for k, vs := range o.ResponseHeader {
			for _, v := range vs {
				if validHeader(k, v) {
					set(k, v)
				}
			}
		}
	}
}

// upgradeStream is Upgrade over HTTP/2 or HTTP/3.
func upgradeStream(x *riptide.Ctx, o *Options) (*Conn, error) {
	if string(x.Method()) != http.MethodConnect || !bytes.EqualFold(x.ConnectProtocol(), []byte(protocolWebSocket)) {
		herr := errNotExtendedConnect()
		x.Error(herr.Status, herr.Msg)
		return nil, herr
	}
	n, herr := checkConnect(string(x.Host()), ctxHeader(x), o)
	if herr != nil {
		refuse(herr, x.SetHeader)
		x.Error(herr.Status, herr.Msg)
		return nil, herr
	}
	responseFields(&n, o, x.AddHeader)
	x.SetStatus(http.StatusOK)
	nc, _, err := x.Hijack() // the stream, its 200 sent
	if err != nil {
		return nil, err
	}
	return newConn(nc, false, nil, o, n.subprotocol, n.deflate), nil
}

// acceptStream is Accept over HTTP/2 or HTTP/3: riptide's compat door
// hijacks an extended CONNECT stream; a ResponseWriter that cannot
// (net/http's own HTTP/2 server) gets 501.
func acceptStream(w http.ResponseWriter, r *http.Request, o *Options) (*Conn, error) {
	var herr *HandshakeError
	var n negotiated
	switch {
	case r.Method != http.MethodConnect || !strings.EqualFold(r.Header.Get(":protocol"), protocolWebSocket):
		herr = errNotExtendedConnect()
	case !canHijack(w):
		herr = &HandshakeError{http.StatusNotImplemented, "this server cannot hand over an HTTP/" + strconv.Itoa(r.ProtoMajor) + " stream"}
	default:
		n, herr = checkConnect(r.Host, r.Header.Values, o)
	}
	if herr != nil {
		refuse(herr, w.Header().Set)
		http.Error(w, herr.Msg, herr.Status)
		return nil, herr
	}
	responseFields(&n, o, w.Header().Add)
	w.WriteHeader(http.StatusOK)
	nc, _, err := http.NewResponseController(w).Hijack() // the stream, its 200 sent
	if err != nil {
		return nil, err
	}
	return newConn(nc, false, nil, o, n.subprotocol, n.deflate), nil
}

// canHijack reports whether w, or a ResponseWriter it wraps (the Unwrap
// chain http.ResponseController follows), is an http.Hijacker.
func canHijack(w http.ResponseWriter) bool {
	for {
		if _, ok := w.(http.Hijacker); ok {
			return true
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return false
		}
		w = u.Unwrap()
	}
}

// NewClientConn returns the client's Conn over stream, on which the
// caller made the opening handshake itself and got resp: an extended
// CONNECT over HTTP/3 (RFC 9220) sent with quic-go's http3 client (its
// request stream, with addresses, as the net.Conn), or one over another
// transport. resp must be a 2xx (or, over HTTP/1.1, the 101 whose
// Sec-WebSocket-Accept the caller checked); its Sec-WebSocket-Protocol and
// Sec-WebSocket-Extensions are checked against what o offered, as Dial
// does. The request must have offered o's subprotocols and, with
// o.Compression, the permessage-deflate offer of ws.ClientOffer.
func NewClientConn(stream net.Conn, resp *http.Response, o *Options) (*Conn, error) {
	if resp.StatusCode != http.StatusSwitchingProtocols && (resp.StatusCode < 200 || resp.StatusCode > 299) {
		return nil, &HandshakeError{resp.StatusCode, "server answered " + resp.Status}
	}
	sub, deflate, err := checkResponse(resp, o)
	if err != nil {
		return nil, &HandshakeError{resp.StatusCode, err.Error()}
	}
	return newConn(stream, true, nil, o, sub, deflate), nil
}
