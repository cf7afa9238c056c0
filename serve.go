package riptide

// Choosing the protocol. Every connection, on either engine (the goroutine
// engine's accept loop in server.go, the event loop's elHandler.Serve for a
// fresh socket in engine_linux.go), starts in conn.serve, which takes these
// steps in this order, all under ReadHeaderTimeout:
//
//  1. the PROXY header, when ProxyProtocol is set (proxy.go);
//  2. the TLS handshake, answering plain HTTP sent to a TLS port (tls.go);
//  3. HTTP/2 when ALPN chose "h2", or with H2C when the client preface
//     arrives: the connection goes to the HTTP/2 engine (h2.go,
//     internal/h2) for the rest of its life. A cleartext connection whose
//     first bytes stop being a prefix of the preface goes to step 4 once
//     its first line names HTTP ("HTTP/" in any case: a malformed or
//     unsupported version, a bare CR gets the 400 or 505 it gets without
//     H2C); it is closed without an answer when it is still a prefix of the
//     preface as it ends or times out, or when its first line names no HTTP
//     at all (an invalid HTTP/2 preface, RFC 9113 §3.4);
//  4. otherwise HTTP/1.1 (conn.go), where each request's head is checked
//     for "Upgrade: h2c" (H2CUpgrade) before any handler runs: one that
//     qualifies is answered 101 and becomes stream 1 of an HTTP/2
//     connection.
//
// An event-loop connection resumed after a park goes straight back to the
// HTTP/1.1 loop: its protocol was chosen before it first parked.

import (
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"io"
	"net/url"
	"strings"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/ascii"
	"github.com/riptide-http/riptide/internal/h2"
)

// alpnH2 is HTTP/2's TLS ALPN protocol ID (RFC 9113 §3.2).
const alpnH2 = "h2"

// serve runs a new connection: it chooses the protocol (the steps in the
// file comment), then serves it until the connection ends.
func (c *conn) serve() {
	s := c.srv
	if h := s.ConnState; h != nil {
		h(c.nc, StateNew)
	}
	// Go enables TCP_NODELAY on every TCP connection it creates, so a
	// response goes out as soon as it is written; nothing to do here.
	// ReadHeaderTimeout runs from the accept for the first request: the
	// PROXY header, TLS handshake, h2c sniff and first head all fit in it
	// (headArmed: readRequest must not restart it at the first byte).
	c.armRead(dlHeader, c.cfg.readHeader, false)
	c.headArmed = true
	if !c.readProxyHeader() { // PROXY protocol (proxy.go), before TLS and HTTP/2
		c.closeConn()
		return
	}
	c.answerPlainHTTP() // the TLS handshake (tls.go)
	if c.serveH2() {    // HTTP/2: TLS with ALPN h2, or h2c prior knowledge
		return
	}
	c.serveHTTP1()
}

// serveH2 serves c as HTTP/2 when it is one: a TLS connection whose ALPN
// chose h2, or (with h2c on) a cleartext connection that opens with the
// HTTP/2 preface. It reports whether it did; the connection is then closed
// and released. Otherwise any bytes it read stay in c.rbuf for the
// HTTP/1.1 loop. It runs first on the connection's goroutine, under the
// read-header deadline.
func (c *conn) serveH2() bool {
	s := c.srv
	if tc, ok := c.nc.(*tls.Conn); ok {
		// A failed handshake is left to the HTTP/1.1 loop, whose first
		// read reports it and closes the connection.
		if tc.Handshake() != nil || tc.ConnectionState().NegotiatedProtocol != alpnH2 {
			return false
		}
		if st := s.h2(); !st.off {
			c.runH2(nil, false)
			return true
		}
		return false
	}
	if s.HTTP2 == nil || !s.h2().h2c {
		return false
	}
	for c.w < len(h2Preface) {
		if string(c.rbuf[:c.w]) != h2Preface[:c.w] {
			return c.dropNonHTTP()
		}
		if c.fill() != nil {
			// Still a prefix of the preface: an HTTP/2 client that went
			// away or stalled, to which an HTTP/1.1 answer would be
			// gibberish (RFC 9113 §3.4).
			c.closeConn()
			return true
		}
	}
	if string(c.rbuf[:len(h2Preface)]) != h2Preface {
		return c.dropNonHTTP()
	}
	var rest []byte
	if c.w > len(h2Preface) {
		// Frames that arrived with the preface are replayed first.
		rest = bytes.Clone(c.rbuf[len(h2Preface):c.w])
	}
	c.r, c.w = 0, 0
	c.runH2(rest, true)
	return true
}

// dropNonHTTP closes, without an answer, a cleartext connection whose
// first bytes left the HTTP/2 preface and whose first line does not name
// HTTP: it is no HTTP/1.x request, and an HTTP/2 client with an invalid
// preface (RFC 9113 §3.4: a connection error) would read an HTTP/1.1 400
// as gibberish. A first line with "HTTP/" in it, in any case, is an
// HTTP/1.x client's, however malformed (a bare CR, HTTP/9.9, http/1.1),
// and is left to the HTTP/1.1 loop, which answers it as it does without
// h2c; so is one that has not ended when the buffer is full or the read
// fails (the loop has the same deadline). It reports whether it closed c.
func (c *conn) dropNonHTTP() bool {
	for {
		b := c.rbuf[:c.w]
		for len(b) > 0 && (b[0] == '\r' || b[0] == '\n') {
			b = b[1:] // empty lines before a request line are allowed
		}
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			if namesHTTP(b[:i]) {
				return false
			}
			c.closeConn()
			return true
		}
		if c.w == len(c.rbuf) || c.fill() != nil {
			return false
		}
	}
}

// namesHTTP reports whether line holds "HTTP/" in any case.
func namesHTTP(line []byte) bool {
	for i := 0; i+5 <= len(line); i++ {
		if (line[i]|0x20) == 'h' && ascii.EqualFold(line[i:i+5], "http/") {
			return true
		}
	}
	return false
}

// refuseH2Preface answers an HTTP/2 client that sent its preface, with
// prior knowledge, to a connection served as HTTP/1.1 (h2c off): to the
// parser "PRI * HTTP/2.0" is a request of an unsupported version, but the
// client reads only HTTP/2 frames, so a 505 would reach it as a silent
// close. It gets an HTTP/2 refusal it can report instead, GOAWAY
// HTTP_1_1_REQUIRED (RFC 9113 §7: "use HTTP/1.1 instead"), with the reason
// as debug data, and the connection closes. It reports whether the
// connection's first bytes were such a preface (or as much of one as came
// before the parser gave up) and were answered; the caller answers
// anything else with the canned 505.
func (c *conn) refuseH2Preface() bool {
	b := c.rbuf[c.r:c.w]
	n := min(len(b), len(h2Preface))
	if c.nreq != 0 || n < len(h2PrefaceLine) || string(b[:n]) != h2Preface[:n] {
		return false
	}
	c.wbuf = h2.AppendRefusal(c.wbuf, h2.ErrCodeHTTP11Required, h2RefusalReason)
	c.ctx.resp.status = 505 // for the statistics
	c.closeAfter, c.linger = true, true
	return true
}

// h2PrefaceLine is the preface's first line, which is where an HTTP/1.1
// parser stops.
const h2PrefaceLine = "PRI * HTTP/2.0\r\n"

// h2RefusalReason is the GOAWAY debug data of refuseH2Preface.
const h2RefusalReason = "riptide: HTTP/2 with prior knowledge (h2c) is not enabled here; use HTTP/1.1"

// runH2 serves HTTP/2 on c.nc (its first bytes being rest, read with the
// preface) until the connection ends, then closes and releases c.
func (c *conn) runH2(rest []byte, sawPreface bool) {
	s := c.srv
	c.setState(StateActive)
	if c.elH2(rest, sawPreface) {
		return // on the event loop, it parks while idle (h2park_linux.go)
	}
	// The HTTP/1.1 buffers (about 37 KiB by default) sit unused for the
	// HTTP/2 connection's life (each stream has its own): let them go, so
	// that an idle HTTP/2 connection does not hold them, and give the
	// conn new ones before it is pooled. rest is a copy (serveH2).
	c.rbuf, c.wbuf, c.ctx.resp.body = nil, nil, nil
	c.r, c.w = 0, 0
	s.h2Serve(c.nc, rest, sawPreface, nil)
	c.rbuf = make([]byte, c.cfg.readBuf)
	c.wbuf = make([]byte, 0, c.cfg.writeBuf+1024)
	c.ctx.resp.body = make([]byte, 0, c.cfg.writeBuf)
	c.setState(StateClosed)
	c.untrack()
	c.statClose()
	putConn(c)
}

// h2cUpgrade decides, from the request head alone and before any handler
// runs, whether an HTTP/1.1 request switches the connection to HTTP/2
// (HTTP2Config.H2CUpgrade): a cleartext connection, a body small enough to
// take whole, and the full form h2UpgradeSettings checks. It returns the
// HTTP2-Settings payload; serveRequest then runs upgradeH2C in place of
// the handler. Any other request is served as HTTP/1.1, as RFC 9113 §3.2
// lets a server ignore Upgrade.
func (c *conn) h2cUpgrade(req *h1.Request) (settings []byte, ok bool) {
	if !req.Upgrade {
		return nil, false // most requests: kept inlinable
	}
	return c.h2cUpgradeFrom(req)
}

func (c *conn) h2cUpgradeFrom(req *h1.Request) (settings []byte, ok bool) {
	s := c.srv
	if s.HTTP2 == nil || !s.HTTP2.H2CUpgrade || s.HTTP2.Disable {
		return nil, false
	}
	if _, ok := c.nc.(*tls.Conn); ok {
		return nil, false // h2c is for cleartext only (RFC 7540 §3.2)
	}
	if req.Chunked || req.ContentLength > h2UpgradeMaxBody {
		// The upgrade request becomes stream 1 already half-closed, so its
		// body is read whole first: one too large to buffer (or of unknown
		// length) is served over HTTP/1.1 instead.
		return nil, false
	}
	return h2UpgradeSettings(req)
}

// h2UpgradeSettings returns the HTTP2-Settings payload of an HTTP/1.1
// request that asks to upgrade to h2c in the full form of RFC 7540 §3.2,
// and ok false for any other request, which is then served as HTTP/1.1:
//
//   - Upgrade lists "h2c";
//   - Connection lists both "Upgrade" and "HTTP2-Settings" (§3.2.1: the
//     settings are hop-by-hop, so a proxy that forwards Upgrade without
//     them, as nginx's WebSocket pass-through does with its fixed
//     "Connection: upgrade", does not upgrade the connection behind it);
//   - exactly one HTTP2-Settings field, whose value is base64url (padding
//     allowed) of a SETTINGS payload: whole 6-byte settings (§3.2.1).
//
// Field names and list items compare case-insensitively.
func h2UpgradeSettings(req *h1.Request) (settings []byte, ok bool) {
	if req.Minor != 1 {
		return nil, false
	}
	var upgrade, connUpgrade, connSettings bool
	var value []byte
	n := 0
	for _, f := range req.Headers {
		switch {
		case f.Key == h1.HeaderUpgrade:
			upgrade = upgrade || ascii.HasToken(f.Value, "h2c")
		case f.Key == h1.HeaderConnection:
			connUpgrade = connUpgrade || ascii.HasToken(f.Value, "upgrade")
			connSettings = connSettings || ascii.HasToken(f.Value, "http2-settings")
		case f.Key == h1.Unknown && ascii.EqualFold(f.Name, "http2-settings"):
			value = f.Value
			n++
		}
	}
	if !upgrade || !connUpgrade || !connSettings || n != 1 {
		return nil, false
	}
	settings, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(string(value), "="))
	if err != nil || len(settings)%6 != 0 {
		return nil, false
	}
	return settings, true
}

// h2UpgradeMaxBody is the largest upgrade request body buffered for an h2c
// upgrade.
const h2UpgradeMaxBody = 1 << 20

// upgradeH2C answers an upgrade request h2cUpgrade took with 101 and
// serves the connection as HTTP/2, the request being stream 1.
func (c *conn) upgradeH2C(settings []byte) {
	s, x := c.srv, &c.ctx
	up, err := h2UpgradeRequest(x, settings)
	if err != nil {
		// The body read failed (the client stopped early, a timeout) or
		// the target cannot form a URL; a failed body closes the
		// connection after this answer.
		x.canned(400)
		return
	}
	nc, buffered, err := x.Hijack()
	if err != nil {
		return
	}
	x.conn.h2up = true
	// The server goes on serving the connection, as HTTP/2: it leaves the
	// HTTP/1.1 engine (untrack frees the MaxConns slot its accept took)
	// and is admitted under MaxConns as every connection is (admit),
	// before the 101 goes out (a client may open its next connection as
	// soon as it reads the 101). Should another connection have taken
	// the slot meanwhile, it is refused as one beyond MaxConns.
	x.conn.untrack()
	if !s.admit() {
		refuse(nc)
		return
	}
	n, err := io.WriteString(nc, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n")
	x.conn.nout += uint64(n) // flushed to the statistics when the handler returns
	if err != nil {
		nc.Close()
		s.release()
		return
	}
	go func() {
		defer s.release()
		s.h2Serve(nc, buffered, false, up)
	}()
}

// h2UpgradeRequest takes the upgrade request, with its body read whole:
// it becomes stream 1, already half-closed. A target that cannot form a
// URL is refused, as an *http.Request could not be built for it.
func h2UpgradeRequest(x *Ctx, settings []byte) (*h2.Upgrade, error) {
	// h2cUpgrade took only bodies of a declared length up to the limit.
	body, err := io.ReadAll(x.Body())
	if err != nil {
		return nil, err
	}
	if _, err := url.Parse("http://" + string(x.req.Host) + string(x.req.Target)); err != nil {
		return nil, err
	}
	return h2.NewUpgrade(&x.req, settings, body), nil
}
