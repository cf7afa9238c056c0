package http3

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/h3"
)

// Options configures HTTP/3 for a Server beyond what the Server's own
// fields set. A nil *Options means the defaults.
//
// From the Server: MaxHeaderBytes (a request's field section, checked on
// the HEADERS frame's length before it is read; 431 beyond), MaxHeaderCount,
// MaxRequestBodySize, ReadHeaderTimeout (each stream's head, and the
// handshake), ReadBodyTimeout, WriteTimeout (each response write on a
// stream, its wait for flow control included: the stream is reset past
// it), IdleTimeout (QUIC's idle timeout),
// MaxConns (a connection takes its slot once its address is validated:
// at its first packet when it answered a Retry or brought an address
// token, else when its handshake completes; see RetryThreshold for the
// handshakes before), MaxConnAge and
// MaxRequestsPerConn (GOAWAY), HTTP2.MaxConcurrentStreams (when set, the
// concurrent request streams per connection) and
// HTTP2.MaxReceiveBufferPerStream/PerConnection (the QUIC receive
// windows: the request body a stream and a connection may have buffered,
// 1 MiB each by default).
type Options struct {
	// MaxStreams is the number of request streams a client may have open
	// on one connection, and so the handlers one connection may run at
	// once: a stream's credit is given back only when its handler
	// returns, so streams the client resets cannot pile up handlers.
	// Zero means HTTP2.MaxConcurrentStreams when set, else 100.
	MaxStreams int
	// MaxUniStreams bounds the client's unidirectional streams (control,
	// QPACK and grease ones). Zero means 8.
	MaxUniStreams int
	// HeaderBudget bounds the HEADERS bytes one connection may have
	// partly received at once (each stream's frame length is reserved
	// before its payload is read; a stream that finds it spent is refused
	// with H3_REQUEST_REJECTED). Zero means 1 MiB.
	HeaderBudget int

	// Allow0RTT accepts 0-RTT data (off by default). Requests that arrive
	// before the handshake completes may be replays: only GET, HEAD and
	// OPTIONS run then; other methods are answered 425 Too Early (or wait
	// for the handshake with Wait0RTT).
	Allow0RTT bool
	Wait0RTT  bool

	// StatelessResetKey lets the server reset connections it lost state
	// for (after a restart). Nil means a random key per Serve, which
	// resets nothing from before a restart: set a persisted key in
	// production. TokenGeneratorKey encrypts address validation tokens;
	// servers behind one address should share it. Nil means random.
	StatelessResetKey *quic.StatelessResetKey
	TokenGeneratorKey *quic.TokenGeneratorKey
	// RetryThreshold is the number of handshakes in progress (whatever
	// MaxConns) from which a new connection must first prove its address
	// with a Retry (one more round trip, against spoofed floods). It also
	// bounds the handshakes from unvalidated (possibly spoofed) addresses
	// in progress at once, which hold no MaxConns slot: the slots of
	// HTTP/1.1 and HTTP/2 connections cannot be taken by packets from
	// addresses that never answer. Zero means 64; negative means always.
	RetryThreshold int

	// AltSvcPort is the port advertised in Alt-Svc on the Server's
	// HTTP/1.1 and HTTP/2 responses over TLS while Serve runs; zero means the
	// packet connection's port. AltSvcMaxAge is its ma (zero: 24 hours).
	// DisableAltSvc advertises nothing.
	AltSvcPort    int
	AltSvcMaxAge  time.Duration
	DisableAltSvc bool
}

// DefaultRetryThreshold is the default Options.RetryThreshold.
const DefaultRetryThreshold = 64

// ListenAndServe listens on the UDP address addr and serves HTTP/3 for
// srv with Serve; it closes the packet connection when it returns. Run it
// beside srv.ListenAndServeTLS on the same port number, so that the
// Alt-Svc it makes the Server send points browsers to it.
func ListenAndServe(srv *riptide.Server, addr string, tlsConf *tls.Config, opts *Options) error {
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return err
	}
	defer pc.Close()
	return Serve(srv, pc, tlsConf, opts)
}

// Serve serves HTTP/3 for srv on the packet connection pc until srv is
// shut down or closed, or pc fails. tlsConf (nil: srv.TLSConfig) must hold
// a certificate; "h3" is set as its ALPN protocol (on a copy). Requests
// run srv's Handler, native or compat (FromHTTP), as over HTTP/1.1 and
// HTTP/2.
//
// While it runs, srv's HTTPS (HTTP/1.1 and HTTP/2) responses carry Alt-Svc
// (Options). srv.Shutdown stops it: no new connections, GOAWAY on each
// connection, their handlers finish, then CONNECTION_CLOSE; Serve returns
// riptide.ErrServerClosed once they are closed. srv.Drain sends GOAWAY and
// stops the Alt-Svc; srv.Close closes the connections at once. Serve does
// not close pc.
func Serve(srv *riptide.Server, pc net.PacketConn, tlsConf *tls.Config, opts *Options) error {
	if opts == nil {
		opts = &Options{}
	}
	if tlsConf == nil {
		tlsConf = srv.TLSConfig
	}
	if tlsConf == nil || len(tlsConf.Certificates) == 0 && tlsConf.GetCertificate == nil && tlsConf.GetConfigForClient == nil {
		return errNoCertificate
	}
	port := opts.AltSvcPort
	if port == 0 {
		if a, ok := pc.LocalAddr().(*net.UDPAddr); ok {
			port = a.Port
		}
	}
	if opts.DisableAltSvc {
		port = 0
	}
	l, err := srv.ListenQUIC(riptide.QUICOptions{
		AltSvcPort:    port,
		AltSvcMaxAge:  opts.AltSvcMaxAge,
		MaxStreams:    opts.MaxStreams,
		MaxUniStreams: opts.MaxUniStreams,
		HeaderBudget:  opts.HeaderBudget,
		Allow0RTT:     opts.Allow0RTT,
		Wait0RTT:      opts.Wait0RTT,
	})
	if err != nil {
		return err
	}
	defer l.Close()
	lim := l.Limits()
	stop := l.Done()

	sv := &server{l: l}
	tr := &quic.Transport{
		Conn:              pc,
		StatelessResetKey: opts.StatelessResetKey,
		TokenGeneratorKey: opts.TokenGeneratorKey,
		ConnContext:       sv.connContext,
	}
	if tr.StatelessResetKey == nil {
		var k quic.StatelessResetKey
		rand.Read(k[:])
		tr.StatelessResetKey = &k
	}
	threshold := int64(opts.RetryThreshold)
	if threshold == 0 {
		threshold = DefaultRetryThreshold
	}
	tr.VerifySourceAddress = func(net.Addr) bool { return threshold < 0 || sv.handshakes.Load() >= threshold }

	qconf := quicConfig(lim)
	tc := tlsConf.Clone()
	if !slices.Contains(tc.NextProtos, "h3") {
		tc.NextProtos = []string{"h3"}
	}
	var ln acceptor
	if lim.Allow0RTT {
		ln, err = tr.ListenEarly(tc, qconf)
	} else {
		ln, err = tr.Listen(tc, qconf)
	}
	if err != nil {
		tr.Close()
		return err
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-stop:
		case <-done:
		}
		ln.Close()
	}()

	var wg sync.WaitGroup
	for {
		qc, err := ln.Accept(context.Background())
		if err != nil {
			sv.close() // no handshake is accepted now: connContext refuses
			stopped := false
			select {
			case <-stop:
				stopped = true
				// While the open connections finish, a new one (a client
				// of a server being restarted) is refused at once with
				// CONNECTION_REFUSED, not left to its handshake timeout:
				// the closed listener's transport would drop its packets.
				if rl, err := tr.Listen(tc, qconf); err == nil {
					defer rl.Close()
				}
			default:
			}
			wg.Wait() // Shutdown: the connections finish; Close: they are closed
			tr.Close()
			if stopped {
				return riptide.ErrServerClosed
			}
			return err
		}
		hs, _ := qc.Context().Value(handshakeKey{}).(*handshake)
		wg.Go(func() { sv.serve(qc, hs) })
	}
}

// serve serves an accepted connection while it holds a MaxConns slot: the
// one its handshake took when its address came validated (a Retry or an
// address token), or one taken once its handshake is complete, which
// validates it. Beyond MaxConns that one is closed unserved
// (H3_EXCESSIVE_LOAD). A connection accepted before its handshake
// completed (Allow0RTT) waits for it, unless it sent 0-RTT data: that one
// is served at once and counted as a handshake in progress, with no slot,
// until it completes (then closed if MaxConns is reached).
func (sv *server) serve(qc *quic.Conn, hs *handshake) {
	l := sv.l
	switch {
	case hs == nil: // not reached: every connection came through connContext
		l.ServeConn(conn{qc})
		return
	case hs.slot:
		if hs.accepted() { // else a sweep saw it closed and released its slot
			defer l.Release()
		}
		l.ServeConn(conn{qc})
		return
	}
	if !qc.ConnectionState().Used0RTT {
		// Accepted once its handshake completed, or early (Allow0RTT)
		// without 0-RTT data: nothing to serve before it completes.
		select {
		case <-qc.HandshakeComplete():
		case <-qc.Context().Done():
			return // a sweep ends its handshake
		}
		if sv.admit(qc, hs) {
			l.ServeConn(conn{qc})
			l.Release()
		}
		return
	}
	// 0-RTT data from an address not validated: served at once (the
	// 0-RTT policy applies), its slot taken when the handshake completes.
	var slot atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-qc.HandshakeComplete():
			slot.Store(sv.admit(qc, hs))
		case <-qc.Context().Done():
		}
	}()
	l.ServeConn(conn{qc})
	<-done // the connection is closed: its context is done
	if slot.Load() {
		l.Release()
	}
}

// admit ends the handshake of a connection whose address its completion
// validated and takes a MaxConns slot for it; beyond MaxConns it closes the
// connection. It reports whether it took a slot.
func (sv *server) admit(qc *quic.Conn, hs *handshake) bool {
	if !hs.accepted() {
		return false // a sweep saw it closed
	}
	if sv.l.Admit() {
		return true
	}
	qc.CloseWithError(quic.ApplicationErrorCode(h3.CodeExcessiveLoad), errRefused.Error())
	return false
}

var errNoCertificate = errors.New("http3: a TLS configuration with a certificate is required")

// acceptor is a quic.Listener or a quic.EarlyListener.
type acceptor interface {
	Accept(context.Context) (*quic.Conn, error)
	Close() error
}

// server is the state of one Serve.
type server struct {
	l *riptide.QUICListener
	// handshakes counts the handshakes in progress, from a connection's
	// first packet to its handshake's completion or failure (a refused
	// one is not counted), whatever MaxConns: the Retry decision.
	handshakes atomic.Int64

	// pending holds the connections admitted and not yet accepted. While
	// it is not empty, sweep runs every sweepInterval and ends those whose
	// connection closed (a failed handshake): no function waits on each
	// connection's context (context.AfterFunc would leave a map and a
	// channel on it for the connection's life).
	mu      sync.Mutex
	pending []*handshake // each at its index
	sweeper *time.Timer  // nil while pending is empty
	closed  bool         // Serve returned: no more sweeps
}

// sweepInterval is how often the handshakes in progress are checked for
// a closed connection: how long, at most, a failed handshake keeps its
// MaxConns slot (if it has one) and counts toward RetryThreshold.
var sweepInterval = 100 * time.Millisecond

// errRefused refuses a connection beyond MaxConns.
var errRefused = errors.New("http3: too many connections")

// connContext counts a connection attempt's handshake until it completes
// or fails. One whose address is validated already (ci.AddrVerified: it
// answered a Retry or brought an address token) takes a MaxConns slot now,
// or is refused (CONNECTION_REFUSED); any other takes none before its
// handshake completes (serve): its source address may be spoofed, and the
// slots are the TCP connections' too. Those are bounded instead by
// RetryThreshold: from that many handshakes in progress, VerifySourceAddress
// sends every new address a Retry, which creates no state.
//
// The context it returns is the handshake itself, not derived from ctx:
// quic-go cancels ctx and the connection's context (which it derives from
// the returned one) itself, and ctx carries no values. So nothing is
// registered on ctx, which would keep a map and a channel on it for the
// connection's life: quic-go's contexts cost 120 B more per connection
// than without ConnContext (a second cancelable context and a closure,
// TestIdleConnHeap), and the handshake 32 B.
func (sv *server) connContext(ctx context.Context, ci *quic.ClientInfo) (context.Context, error) {
	slot := ci != nil && ci.AddrVerified
	if slot && !sv.l.Admit() {
		return nil, errRefused
	}
	hs := &handshake{sv: sv, conn: ctx, slot: slot}
	sv.handshakes.Add(1)
	sv.mu.Lock()
	if sv.closed {
		sv.mu.Unlock()
		hs.end()
		return nil, errRefused
	}
	hs.index = int32(len(sv.pending))
	sv.pending = append(sv.pending, hs)
	if sv.sweeper == nil {
		sv.sweeper = time.AfterFunc(sweepInterval, sv.sweep)
	}
	sv.mu.Unlock()
	return hs, nil
}

// sweep ends the pending handshakes whose connection closed; it runs again
// after sweepInterval while some are pending.
func (sv *server) sweep() {
	var ended []*handshake
	sv.mu.Lock()
	for i := 0; i < len(sv.pending); {
		if hs := sv.pending[i]; hs.conn.Err() != nil {
			sv.remove(hs)
			ended = append(ended, hs)
		} else {
			i++
		}
	}
	switch {
	case sv.closed:
	case len(sv.pending) == 0:
		sv.sweeper = nil
	default:
		sv.sweeper.Reset(sweepInterval)
	}
	sv.mu.Unlock()
	for _, hs := range ended {
		hs.end()
	}
}

// close ends every pending handshake (the transport is closed: none will
// be accepted) and stops the sweeps.
func (sv *server) close() {
	sv.mu.Lock()
	sv.closed = true
	if sv.sweeper != nil {
		sv.sweeper.Stop()
	}
	pending := sv.pending
	for _, hs := range pending {
		hs.index = -1
	}
	sv.pending = nil
	sv.mu.Unlock()
	for _, hs := range pending {
		hs.end()
	}
}

// remove takes hs out of pending (sv.mu held): the last one takes its
// place. The slice keeps its capacity: a connection's handshake adds
// nothing to it once it has grown to the handshakes in progress at once.
func (sv *server) remove(hs *handshake) {
	last := sv.pending[len(sv.pending)-1]
	sv.pending[hs.index] = last
	last.index = hs.index
	sv.pending[len(sv.pending)-1] = nil
	sv.pending = sv.pending[:len(sv.pending)-1]
	hs.index = -1
}

type handshakeKey struct{}

// handshake is a connection counted in server.handshakes until leave, and,
// if slot, holding one of MaxConns until release. It is the context quic-go
// derives the connection's from: it is never done, and its one value,
// under handshakeKey, is itself.
type handshake struct {
	sv    *server
	conn  context.Context // quic-go's context of the connection until accepted
	left  atomic.Bool
	slot  bool  // a MaxConns slot taken in connContext (address validated)
	index int32 // in sv.pending, -1 when out of it (sv.mu)
}

func (hs *handshake) Deadline() (time.Time, bool) { return time.Time{}, false }
func (hs *handshake) Done() <-chan struct{}       { return nil }
func (hs *handshake) Err() error                  { return nil }
func (hs *handshake) Value(key any) any {
	if key == (handshakeKey{}) {
		return hs
	}
	return nil
}

// end is a connection's end before its handshake was accepted: its
// MaxConns slot, if any, is released. It is called once, by whoever took
// hs out of pending.
func (hs *handshake) end() {
	hs.leave()
	if hs.slot {
		hs.sv.l.Release()
	}
}

// accepted takes the connection out of the handshake count and reports
// whether it was still in it: not ended by a sweep (or Serve's end), which
// found its connection closed and released its slot, if any. A slot it
// holds is then the caller's to release once the connection is served.
func (hs *handshake) accepted() bool {
	sv := hs.sv
	sv.mu.Lock()
	ok := hs.index >= 0
	if ok {
		sv.remove(hs)
	}
	hs.conn = nil
	sv.mu.Unlock()
	if ok {
		hs.leave()
	}
	return ok
}

func (hs *handshake) leave() {
	if hs.left.CompareAndSwap(false, true) {
		hs.sv.handshakes.Add(-1)
	}
}
