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
	"strings"
	"time"

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
func checkConnect(h upgradeHeader, o *Options) (negotiated, *HandshakeError) {
	var n negotiated
	if herr := checkVersion(h); herr != nil {
		return n, herr
	}
	return n, negotiate(&n, h, o)
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
	n, herr := checkConnect(ctxHeader(x), o)
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
// hijacks an extended CONNECT stream; on a ResponseWriter that cannot
// (net/http's own HTTP/2 server, with GODEBUG=http2xconnect=1) the Conn
// runs on the ResponseWriter and the request body while the handler
// runs.
func acceptStream(w http.ResponseWriter, r *http.Request, o *Options) (*Conn, error) {
	var herr *HandshakeError
	var n negotiated
	switch {
	case r.Method != http.MethodConnect || !strings.EqualFold(r.Header.Get(":protocol"), protocolWebSocket):
		herr = errNotExtendedConnect()
	default:
		n, herr = checkConnect(upgradeHeader{get: r.Header.Values, host: r.Host}, o)
	}
	if herr != nil {
		refuse(herr, w.Header().Set)
		http.Error(w, herr.Msg, herr.Status)
		return nil, herr
	}
	responseFields(&n, o, w.Header().Add)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	var nc net.Conn
	if canHijack(w) {
		c, _, err := rc.Hijack() // the stream, its 200 sent
		if err != nil {
			return nil, err
		}
		nc = c
	} else {
		// net/http's HTTP/2 server (GODEBUG=http2xconnect=1): the stream
		// is the ResponseWriter and the Body, for the handler's life.
		if err := rc.Flush(); err != nil {
			return nil, err
		}
		nc = &handlerStream{r: r, w: w, rc: rc}
	}
	return newConn(nc, false, nil, o, n.subprotocol, n.deflate), nil
}

// handlerStream is an extended CONNECT stream a ResponseWriter cannot hand
// over (net/http's HTTP/2 server) as a net.Conn: reads from the request
// body, writes flushed at once, deadlines through the ResponseController.
// It lasts while the handler runs: net/http ends the stream when the
// handler returns.
type handlerStream struct {
	r  *http.Request
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (s *handlerStream) Read(p []byte) (int, error) { return s.r.Body.Read(p) }

func (s *handlerStream) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if err == nil {
		err = s.rc.Flush()
	}
	return n, err
}

// Close stops the body; the response ends when the handler returns.
func (s *handlerStream) Close() error { return s.r.Body.Close() }

func (s *handlerStream) LocalAddr() net.Addr {
	if a, ok := s.r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		return a
	}
	return streamAddr("")
}

func (s *handlerStream) RemoteAddr() net.Addr { return streamAddr(s.r.RemoteAddr) }

func (s *handlerStream) SetDeadline(t time.Time) error {
	s.rc.SetReadDeadline(t)
	return s.rc.SetWriteDeadline(t)
}
func (s *handlerStream) SetReadDeadline(t time.Time) error  { return s.rc.SetReadDeadline(t) }
func (s *handlerStream) SetWriteDeadline(t time.Time) error { return s.rc.SetWriteDeadline(t) }

// streamAddr is an address known only as a string.
type streamAddr string

func (a streamAddr) Network() string { return "tcp" }
func (a streamAddr) String() string  { return string(a) }

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
