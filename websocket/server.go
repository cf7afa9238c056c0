package websocket

import (
	"bytes"
	"errors"
	"net"
	"net/http"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/takeover"
)

// Upgrade answers a native riptide request that asks for a WebSocket
// (HTTP/1.1 GET with Upgrade: websocket, Sec-WebSocket-Version 13 and a
// key) with 101 Switching Protocols and returns the connection. The handler
// then owns the Conn and must Close it; the Ctx must not be written to.
//
// A request that is not a valid upgrade gets the status of the returned
// *HandshakeError (400, 403, 405, or 426 with Sec-WebSocket-Version: 13)
// and no Conn. Over HTTP/2 and HTTP/3 (h2.go) the request is an extended
// CONNECT (RFC 8441, RFC 9220; riptide's HTTP2Config.EnableConnectProtocol),
// answered 200, and the Conn runs on the stream; any other request there
// gets 501.
func Upgrade(x *riptide.Ctx, o *Options) (*Conn, error) {
	if x.IsHTTP2() || x.IsHTTP3() {
		return upgradeStream(x, o) // h2.go
	}
	n, herr := checkRequest(string(x.Method()), x.ProtoMinor() >= 1, ctxHeader(x), o)
	if herr != nil {
		refuse(herr, x.SetHeader)
		x.Error(herr.Status, herr.Msg)
		return nil, herr
	}
	cnt := statBytes(x)
	nc, buffered, err := x.Hijack()
	if err != nil {
		return nil, err
	}
	return serverConn(nc, buffered, o, &n, cnt)
}

// refuse sets the headers of a refusal: the version this server speaks.
func refuse(herr *HandshakeError, set func(name, value string)) {
	if herr.Status == http.StatusUpgradeRequired {
		set("Sec-WebSocket-Version", "13")
	}
}

// IsUpgrade reports whether a native request asks for a WebSocket.
func IsUpgrade(x *riptide.Ctx) bool {
	return bytes.EqualFold(x.Header("Upgrade"), []byte("websocket"))
}

// Accept is Upgrade for http.Handler code: on riptide's compat door and on
// net/http's server (both through http.Hijacker). It answers refusals the
// same way. Over HTTP/2 and HTTP/3 it serves an extended CONNECT on
// riptide's compat door (whose ResponseWriter hijacks the stream), and on
// net/http's HTTP/2 server with GODEBUG=http2xconnect=1 (whose
// ResponseWriter cannot be hijacked: the Conn then runs on it and the
// request body, and must be served before the handler returns); other
// requests there get 501.
func Accept(w http.ResponseWriter, r *http.Request, o *Options) (*Conn, error) {
	var n negotiated
	var herr *HandshakeError
	if r.ProtoMajor != 1 {
		return acceptStream(w, r, o) // h2.go
	}
	n, herr = checkRequest(r.Method, r.ProtoAtLeast(1, 1), upgradeHeader{get: r.Header.Values, host: r.Host}, o)
	if herr != nil {
		refuse(herr, w.Header().Set)
		http.Error(w, herr.Msg, herr.Status)
		return nil, herr
	}
	cnt := statBytes(w)
	nc, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		if errors.Is(err, http.ErrNotSupported) {
			http.Error(w, "connection cannot be hijacked", http.StatusNotImplemented)
		}
		return nil, err
	}
	var buffered []byte
	if brw != nil {
		if k := brw.Reader.Buffered(); k > 0 {
			buffered, _ = brw.Reader.Peek(k)
		}
	}
	return serverConn(nc, buffered, o, &n, cnt)
}

// serverConn answers the upgrade on nc and returns the server's Conn,
// counting its bytes in the server's in and out (nil: not counted).
func serverConn(nc net.Conn, buffered []byte, o *Options, n *negotiated, cnt *takeover.Counters) (*Conn, error) {
	resp := appendResponse(nil, n, o)
	if _, err := nc.Write(resp); err != nil {
		nc.Close()
		return nil, err
	}
	c := newConn(nc, false, buffered, o, n.subprotocol, n.deflate)
	c.cnt = cnt
	countOut(cnt, len(resp))
	return c, nil
}

// statBytes returns the server's byte counters for the connection of x, a
// *riptide.Ctx or an http.ResponseWriter (takeover.Bytes): nil, nil on any
// other server.
func statBytes(x any) *takeover.Counters {
	if takeover.Bytes == nil {
		return nil
	}
	return takeover.Bytes(x)
}
