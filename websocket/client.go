package websocket

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/riptide-http/riptide/ws"
)

// Dial opens a WebSocket to rawURL (ws://, wss://, or http:// and https://
// taken as the same) over HTTP/1.1 (or HTTP/2 with o.HTTP2), offering o's subprotocols and, with
// o.Compression, permessage-deflate. ctx bounds the connection and the
// handshake. A refused handshake returns a *HandshakeError and the
// server's response (body not read).
func Dial(ctx context.Context, rawURL string, o *Options) (*Conn, *http.Response, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, nil, err
	}
	secure := false
	switch u.Scheme {
	case "ws", "http":
	case "wss", "https":
		secure = true
	default:
		return nil, nil, fmt.Errorf("websocket: unsupported scheme %q", u.Scheme)
	}
	if o != nil && o.HTTP2 {
		return dialH2(ctx, u, secure, o) // dialh2.go
	}
	host := u.Host
	if u.Port() == "" {
		if secure {
			host = net.JoinHostPort(u.Hostname(), "443")
		} else {
			host = net.JoinHostPort(u.Hostname(), "80")
		}
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	c, resp, err := handshake(ctx, nc, u, secure, o)
	if !stop() {
		if err == nil {
			err = ctx.Err()
		}
	}
	if err != nil {
		nc.Close()
		return nil, resp, err
	}
	nc.SetDeadline(time.Time{})
	return c, resp, nil
}

func handshake(ctx context.Context, nc net.Conn, u *url.URL, secure bool, o *Options) (*Conn, *http.Response, error) {
	if secure {
		cfg := &tls.Config{}
		if o != nil && o.TLSClientConfig != nil {
			cfg = o.TLSClientConfig.Clone()
		}
		if cfg.ServerName == "" {
			cfg.ServerName = u.Hostname()
		}
		cfg.NextProtos = []string{"http/1.1"}
		tc := tls.Client(nc, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, nil, err
		}
		nc = tc
	}
	var k [16]byte
	rand.Read(k[:])
	key := base64.StdEncoding.EncodeToString(k[:])
	req := &http.Request{Method: http.MethodGet, URL: u, Header: http.Header{}, Host: u.Host, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	var b strings.Builder
	b.WriteString("GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host +
		"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: " + key + "\r\n")
	if o != nil {
		if len(o.Subprotocols) > 0 {
			b.WriteString("Sec-WebSocket-Protocol: " + strings.Join(o.Subprotocols, ", ") + "\r\n")
		}
		if o.Compression {
			b.WriteString("Sec-WebSocket-Extensions: " + ws.ClientOffer(!o.Deflate.ServerContextTakeover, !o.Deflate.ClientContextTakeover) + "\r\n")
		}
		for name, vs := range o.Header {
			for _, v := range vs {
				if validHeader(name, v) {
					b.WriteString(name + ": " + v + "\r\n")
				}
			}
		}
	}
	b.WriteString("\r\n")
	if _, err := nc.Write([]byte(b.String())); err != nil {
		return nil, nil, err
	}
	br := bufio.NewReaderSize(nc, 4096)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return nil, nil, err
	}
	fail := func(msg string) (*Conn, *http.Response, error) {
		return nil, resp, &HandshakeError{resp.StatusCode, msg}
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return fail("server answered " + resp.Status)
	}
	if !hasToken(resp.Header.Values("Upgrade"), "websocket") || !hasToken(resp.Header.Values("Connection"), "upgrade") {
		return fail("101 without Upgrade: websocket and Connection: upgrade")
	}
	if resp.Header.Get("Sec-WebSocket-Accept") != AcceptKey(key) {
		return fail("wrong Sec-WebSocket-Accept")
	}
	sub, deflate, err := checkResponse(resp, o)
	if err != nil {
		return fail(err.Error())
	}
	var buffered []byte
	if n := br.Buffered(); n > 0 {
		buffered, _ = br.Peek(n)
	}
	return newConn(nc, true, buffered, o, sub, deflate), resp, nil
}

// checkResponse checks the subprotocol and extensions a server answered
// (101 over HTTP/1.1, 200 to an extended CONNECT) against the offer.
func checkResponse(resp *http.Response, o *Options) (string, *ws.DeflateParams, error) {
	sub := resp.Header.Get("Sec-WebSocket-Protocol")
	if sub != "" && (o == nil || !hasToken([]string{strings.Join(o.Subprotocols, ",")}, sub)) {
		return "", nil, errors.New("server chose a subprotocol that was not offered: " + sub)
	}
	var deflate *ws.DeflateParams
	if exts := resp.Header.Values("Sec-WebSocket-Extensions"); len(exts) > 0 {
		if o == nil || !o.Compression {
			return "", nil, errors.New("server answered extensions that were not offered")
		}
		p, on, err := ws.AcceptDeflateResponse(exts)
		if err != nil {
			return "", nil, err
		}
		if on {
			// Offering client_no_context_takeover promised it whatever
			// the answer (RFC 7692 section 7.1.1.2).
			p.ClientNoContextTakeover = p.ClientNoContextTakeover || !o.Deflate.ClientContextTakeover
			deflate = &p
		}
	}
	return sub, deflate, nil
}
