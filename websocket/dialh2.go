package websocket

//lint:file-ignore SA1019 x/net's http2.Transport is deprecated for net/http's, which refuses the ":protocol" field ("invalid header field name"): x/net's sends an extended CONNECT.

// Dial over HTTP/2 (RFC 8441): an extended CONNECT on a connection of its
// own, through golang.org/x/net/http2's client (net/http's Transport
// refuses the ":protocol" field), which sends one once the server's first
// SETTINGS enabled it. The request body is a pipe the Conn's writes go
// into (x/net sends it as DATA within the server's
// flow-control window, so a write blocks while the window is spent), the
// response body the stream the Conn reads.

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/riptide-http/riptide/ws"
	"golang.org/x/net/http2"
)

// dialH2 opens a WebSocket to u by an extended CONNECT over HTTP/2: over
// TLS (ALPN h2) for wss://, over cleartext HTTP/2 with prior knowledge for
// ws://.
func dialH2(ctx context.Context, u *url.URL, secure bool, o *Options) (*Conn, *http.Response, error) {
	tr := &http2.Transport{}
	if secure {
		cfg := &tls.Config{}
		if o.TLSClientConfig != nil {
			cfg = o.TLSClientConfig.Clone()
		}
		if cfg.ServerName == "" {
			cfg.ServerName = u.Hostname()
		}
		tr.TLSClientConfig = cfg
	} else {
		tr.AllowHTTP = true
		tr.DialTLSContext = func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}
	}
	target := *u
	target.Scheme = "http"
	if secure {
		target.Scheme = "https"
	}
	// The stream lives past Dial's ctx: its own context ends it (Close,
	// or a deadline passing).
	sctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	req, err := http.NewRequestWithContext(sctx, http.MethodConnect, target.String(), pr)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	req.Header.Set(":protocol", protocolWebSocket)
	req.Header.Set("Sec-WebSocket-Version", "13")
	if len(o.Subprotocols) > 0 {
		req.Header.Set("Sec-WebSocket-Protocol", strings.Join(o.Subprotocols, ", "))
	}
	if o.Compression {
		req.Header.Set("Sec-WebSocket-Extensions", ws.ClientOffer(!o.Deflate.ServerContextTakeover, !o.Deflate.ClientContextTakeover))
	}
	for name, vs := range o.Header {
		for _, v := range vs {
			if validHeader(name, v) {
				req.Header.Add(name, v)
			}
		}
	}
	stop := context.AfterFunc(ctx, cancel)
	resp, err := tr.RoundTrip(req)
	if !stop() && err == nil {
		err = ctx.Err()
	}
	fail := func(err error) (*Conn, *http.Response, error) {
		cancel()
		pw.Close()
		if resp != nil {
			resp.Body.Close()
		}
		tr.CloseIdleConnections()
		return nil, resp, err
	}
	if err != nil {
		return fail(err)
	}
	if resp.StatusCode != http.StatusOK {
		return fail(&HandshakeError{resp.StatusCode, "server answered " + resp.Status})
	}
	c, err := NewClientConn(&h2ClientStream{body: resp.Body, pw: pw, cancel: cancel, tr: tr, host: u.Host}, resp, o)
	if err != nil {
		return fail(err)
	}
	return c, resp, nil
}

// h2ClientStream is the client's side of an extended CONNECT stream as a
// net.Conn. Its deadlines end the stream when they pass (a Conn is
// unusable after a deadline anyway).
type h2ClientStream struct {
	body   io.ReadCloser
	pw     *io.PipeWriter
	cancel context.CancelFunc
	tr     *http2.Transport
	host   string

	mu       sync.Mutex
	rdl, wdl *time.Timer
	expired  bool
	closed   bool
}

var errStreamDeadline = os.ErrDeadlineExceeded

func (s *h2ClientStream) Read(p []byte) (int, error) {
	n, err := s.body.Read(p)
	if err != nil && s.timedOut() {
		err = errStreamDeadline
	}
	return n, err
}

func (s *h2ClientStream) Write(p []byte) (int, error) {
	n, err := s.pw.Write(p)
	if err != nil && s.timedOut() {
		err = errStreamDeadline
	}
	return n, err
}

func (s *h2ClientStream) timedOut() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.expired
}

// Close ends the request body (END_STREAM), then the stream and the
// connection.
func (s *h2ClientStream) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return net.ErrClosed
	}
	s.closed = true
	for _, t := range []*time.Timer{s.rdl, s.wdl} {
		if t != nil {
			t.Stop()
		}
	}
	s.mu.Unlock()
	s.pw.Close()
	s.body.Close()
	s.cancel()
	s.tr.CloseIdleConnections()
	return nil
}

// expire ends the stream when a deadline passes.
func (s *h2ClientStream) expire() {
	s.mu.Lock()
	s.expired = true
	s.mu.Unlock()
	s.pw.CloseWithError(errStreamDeadline)
	s.body.Close() // resets the stream: a blocked read returns
	s.cancel()
}

func (s *h2ClientStream) setDeadline(t **time.Timer, d time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if *t != nil {
		(*t).Stop()
		*t = nil
	}
	if d.IsZero() || s.closed {
		return
	}
	*t = time.AfterFunc(time.Until(d), s.expire)
}

func (s *h2ClientStream) SetReadDeadline(d time.Time) error {
	s.setDeadline(&s.rdl, d)
	return nil
}

func (s *h2ClientStream) SetWriteDeadline(d time.Time) error {
	s.setDeadline(&s.wdl, d)
	return nil
}

func (s *h2ClientStream) SetDeadline(d time.Time) error {
	s.SetReadDeadline(d)
	return s.SetWriteDeadline(d)
}

// LocalAddr and RemoteAddr: the transport does not expose the
// connection's addresses; the remote one is the URL's host.
func (s *h2ClientStream) LocalAddr() net.Addr  { return streamAddr("") }
func (s *h2ClientStream) RemoteAddr() net.Addr { return streamAddr(s.host) }
