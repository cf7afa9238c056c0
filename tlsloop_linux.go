//go:build linux

package riptide

// TLS on the event loop, without forking crypto/tls (opt-in:
// Server.TLSEngine). The design, checked against Go 1.26's crypto/tls:
//
//   - A TLS listener's group serves each socket through a *tls.Conn over
//     a tlsSock, the net.Conn crypto/tls reads and writes. The handshake
//     runs on a worker goroutine (reads wait as any worker's do), bounded
//     by ReadHeaderTimeout as on the goroutine engine; so does HTTP/2
//     after ALPN chose h2, for the connection's life.
//   - Waiting for a request, the worker reads the tls.Conn with the
//     tlsSock in non-blocking mode: when the socket has nothing, the
//     tlsSock's Read returns errWouldBlock, a net.Error whose Temporary()
//     is true. crypto/tls (readRecordOrCCS) returns such an error without
//     storing it, and keeps what it read of the record in its rawInput: the
//     connection can park between, or in the middle of, records and a later
//     Read carries on. Any other error is stored, as it should be (the
//     connection is done).
//   - Writes are never non-blocking: every write happens on a worker, which
//     waits for the socket as for a plaintext response, so crypto/tls
//     never sees a transient write error (it would store it for good).
//   - Parked, the connection keeps its tls.Conn (in evloop.Saved.Session)
//     and nothing else of the server's: no goroutine, no read or write
//     buffer. crypto/tls itself keeps its rawInput and hand buffers at the
//     capacity they reached (no API releases them), its cipher states and
//     the struct: about 7 KB (TestTLSIdleCost).

import (
	"crypto/tls"
	"io"
	"net"
	"os"
	"time"

	"github.com/riptide-http/riptide/internal/evloop"
	"github.com/riptide-http/riptide/internal/h2"
	"github.com/riptide-http/riptide/internal/takeover"
	"golang.org/x/sys/unix"
)

// tlsSock is the net.Conn under a *tls.Conn served on the event loop: the
// loop's socket, read non-blockingly while nb is set, and after Hijack
// the detached socket.
type tlsSock struct {
	ec *evloop.Conn
	tc *tls.Conn
	// nb: reads do not wait; an empty socket answers errWouldBlock. Set
	// by the owning worker around its reads of tc (fillTLS).
	nb bool
	// det is the socket after Hijack (a *net.TCPConn off the loop), which
	// then does all of the tls.Conn's I/O.
	det net.Conn
	// wire: taken over by another protocol (takeover_tls_linux.go), whose
	// writes do not wait.
	wire *tlsWire
}

// errWouldBlock is the tlsSock's answer to a non-blocking read of an
// empty socket: temporary, so crypto/tls returns it without storing it.
var errWouldBlock error = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "riptide: TLS socket has nothing to read now" }
func (wouldBlock) Timeout() bool   { return true }
func (wouldBlock) Temporary() bool { return true }

func (t *tlsSock) Read(p []byte) (int, error) {
	switch {
	case t.det != nil:
		return t.det.Read(p)
	case !t.nb:
		return t.ec.Read(p)
	case t.ec.Empty():
		// The last read came back short and no readable edge came
		// since: the socket is empty (edge-triggered), and a read(2)
		// would only say EAGAIN (one per request, and per resume of a
		// parked HTTP/2 connection: what fillHead saves on plaintext).
		return 0, errWouldBlock
	}
	n, err := t.ec.RawRead(p)
	if err == unix.EAGAIN {
		return 0, errWouldBlock
	}
	return max(n, 0), err
}

func (t *tlsSock) Write(p []byte) (int, error) {
	if t.wire != nil {
		return t.wire.put(p)
	}
	if t.det != nil {
		return t.det.Write(p)
	}
	return t.ec.Write(p)
}

func (t *tlsSock) Close() error {
	if t.det != nil {
		return t.det.Close()
	}
	return t.ec.Close()
}

func (t *tlsSock) LocalAddr() net.Addr  { return t.ec.LocalAddr() }
func (t *tlsSock) RemoteAddr() net.Addr { return t.ec.RemoteAddr() }

func (t *tlsSock) SetDeadline(d time.Time) error {
	if t.det != nil {
		return t.det.SetDeadline(d)
	}
	return t.ec.SetDeadline(d)
}

func (t *tlsSock) SetReadDeadline(d time.Time) error {
	if t.det != nil {
		return t.det.SetReadDeadline(d)
	}
	return t.ec.SetReadDeadline(d)
}

func (t *tlsSock) SetWriteDeadline(d time.Time) error {
	if t.det != nil {
		return t.det.SetWriteDeadline(d)
	}
	return t.ec.SetWriteDeadline(d)
}

// detach takes the socket off the loop for Hijack; the tls.Conn goes on
// over it.
func (t *tlsSock) detach() error {
	nc, err := t.ec.Detach()
	if err != nil {
		return err
	}
	t.det = nc
	return nil
}

// tlsListener marks a TCP listener whose connections ServeTLS serves on
// the event loop: serveEventLoop takes it, nothing ever calls its Accept.
type tlsListener struct {
	*net.TCPListener
	cfg *tls.Config
}

// tlsListen is the listener ServeTLS serves: ln itself, marked, when the
// event loop serves TLS (Server.TLSEngine, a plain TCP listener, no PROXY
// protocol); crypto/tls's listener over ln otherwise.
func (s *Server) tlsListen(ln net.Listener, cfg *tls.Config) net.Listener {
	if tl, ok := ln.(*net.TCPListener); ok && s.tlsOnLoop() && s.ProxyProtocol == nil {
		return &tlsListener{TCPListener: tl, cfg: cfg}
	}
	return tls.NewListener(s.proxyListen(ln), cfg)
}

// tlsOnLoop reports whether TLS listeners go to the event loop.
func (s *Server) tlsOnLoop() bool {
	e := s.TLSEngine
	if e == EngineAuto {
		e = autoTLSEngine
	}
	if e == EngineAuto {
		e = s.engine()
	}
	return e == EngineEventLoop || e == EngineOnLoop
}

// elTLSHandler is a TLS listener's evloop.Handler: the server's, serving
// each connection through crypto/tls.
type elTLSHandler struct {
	*elHandler
	cfg *tls.Config
}

// Serve runs the connection's tls.Conn, made on its first serve (the
// handshake then runs on this worker), until it parks, closes or leaves.
func (h elTLSHandler) Serve(w *evloop.Worker, ec *evloop.Conn, fresh bool) {
	c := w.Local.(*conn)
	if fresh {
		t := &tlsSock{ec: ec}
		t.tc = tls.Server(t, h.cfg)
		c.attach(h.srv(), t.tc)
		c.tl = t
		c.born = ec.Born
		c.serve()
		return
	}
	t := ec.Saved.Session.(*tlsSock)
	c.attach(h.srv(), t.tc)
	c.tl = t
	if hc, ok := ec.Saved.Proto.(*h2.Conn); ok {
		c.resumeH2(hc) // HTTP/2 over TLS, parked (h2tlspark_linux.go)
		return
	}
	if p, ok := ec.Saved.Proto.(takeover.Proto); ok {
		c.resumeHandover(p) // a WebSocket over TLS, parked (takeover_tls_linux.go)
		return
	}
	c.resume()
	c.serveHTTP1()
}

// fillTLS is fillHead for TLS: it reads plaintext from the tls.Conn
// without waiting and parks the connection when crypto/tls has no whole
// record and the socket is empty.
func (c *conn) fillTLS(armed bool) error {
	t := c.tl
	for {
		if t.ec.Shut() {
			return net.ErrClosed
		}
		if t.ec.ReadExpired() {
			return os.ErrDeadlineExceeded
		}
		if c.w == len(c.rbuf) {
			if err := c.makeRoom(); err != nil {
				return err
			}
		}
		t.nb = true
		n, err := t.tc.Read(c.rbuf[c.w:])
		t.nb = false
		c.w += n
		c.nin += uint64(n) // stats.go
		if n > 0 {
			return nil
		}
		if _, ok := err.(wouldBlock); !ok {
			if err == nil {
				err = io.ErrNoProgress
			}
			return err
		}
		// Nothing whole in crypto/tls and the socket read EAGAIN.
		if c.park(armed) {
			return nil
		}
	}
}
