package riptide

// Server statistics. The engine keeps them as it goes, at a cost of a few
// uncontended atomic adds per request: per-request counters live in
// cache-line-padded shards, the one of the current P (procShard) chosen
// each time a worker takes a connection, so that goroutines on different
// cores write different lines and each line stays in one core's cache (a
// round-robin choice per connection was an atomic add on one shared line
// per dispatch, and left connections served on one core writing lines that
// other cores wrote too); the rest are rare events.
// Connection gauges are not kept at all: Stats counts the tracked
// connections by state when it is called. The hooks the engine calls are
// the stat* methods of conn below.

import (
	"sync/atomic"
	"time"

	"github.com/riptide-http/riptide/internal/netx"
	"github.com/riptide-http/riptide/internal/takeover"
	"github.com/riptide-http/riptide/internal/workq"
)

// DurationBuckets are the upper bounds of the request-duration histogram
// (Stats.Duration), as Prometheus's default buckets plus a few below 5ms.
var DurationBuckets = [...]time.Duration{
	250 * time.Microsecond, 500 * time.Microsecond, time.Millisecond,
	2500 * time.Microsecond, 5 * time.Millisecond, 10 * time.Millisecond,
	25 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond,
	250 * time.Millisecond, 500 * time.Millisecond, time.Second,
	2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
}

// Stats is a snapshot of a Server's counters, filled by Server.Stats.
// Counters (uint64) only grow; gauges (int64) are current values.
//
// Requests are counted when their response is complete (or abandoned: a
// panic, a reset stream), the same way over HTTP/1.1, HTTP/2 and HTTP/3 and
// through both doors (native and compat).
type Stats struct {
	// Connections.
	Accepted      uint64 // accepted and served (not those closed at accept by the PROXY trust check)
	Refused       uint64 // beyond MaxConns, answered 503
	ProxyRejected uint64 // untrusted peer, or missing or invalid PROXY header
	Closed        uint64 // closed by the server's engine (not hijacked ones)
	Hijacked      uint64 // taken over by Ctx.Hijack or an h2c upgrade
	// AcceptErrors counts failed accepts of the listeners, after each of
	// which the server backs off before accepting again.
	AcceptErrors AcceptErrors
	// Open connections by state (HTTP/2 and HTTP/3 connections count as
	// active; an HTTP/3 connection from the end of its handshake).
	ConnsNew, ConnsActive, ConnsIdle int64

	// Requests and responses.
	Requests  uint64    // requests answered (HTTP/1.1, HTTP/2 and HTTP/3, both doors)
	Responses [5]uint64 // by status class: [0] 1xx ... [4] 5xx
	// BytesIn and BytesOut count the bytes read from and written to
	// connections, above TLS (plaintext: TLS records and handshakes are
	// not counted, nor are PROXY protocol headers): for HTTP/1.1 the
	// request and response text; for HTTP/2 every frame with its header
	// (HEADERS, DATA, SETTINGS, PING, WINDOW_UPDATE, GOAWAY, ...) and the
	// client preface; for HTTP/3 every frame on every stream (request,
	// control and QPACK streams; not QUIC's own framing). HTTP/1.1
	// connections add theirs at each response and at close, HTTP/2 and
	// HTTP/3 connections at each read and write. A WebSocket of package
	// websocket over HTTP/1.1 (Upgrade, Accept on the compat door, Serve)
	// adds its messages' bytes, frames with their headers, as it reads
	// and writes them; over HTTP/2 and HTTP/3 they are the tunnel's frames.
	BytesIn  uint64
	BytesOut uint64
	Panics   uint64 // handler panics (other than ErrAbortHandler)

	// ParseErrors counts requests rejected before the handler, by the
	// status they were answered with.
	ParseErrors ParseErrors
	// Timeouts counts connections closed for a timeout, by kind.
	Timeouts Timeouts

	// HTTP/2.
	H2Streams      uint64 // streams served (each is also a request)
	H2Resets       uint64 // RST_STREAM sent: refused, malformed, incomplete response, panic, unread body
	H2ClientResets uint64 // RST_STREAM received: streams the client cancelled
	// H2ExtendedConnects counts extended CONNECT streams (RFC 8441:
	// WebSocket over HTTP/2) handed to the handler.
	H2ExtendedConnects uint64

	// HTTP/3 (the http3 module).
	H3Streams uint64 // request streams served (each is also a request)
	// H3ExtendedConnects counts extended CONNECT streams (RFC 9220:
	// WebSocket over HTTP/3) handed to the handler.
	H3ExtendedConnects uint64

	// Duration is the histogram of request durations, from the end of the
	// request head to the end of the response.
	Duration Histogram
}

// ParseErrors counts rejected request heads by answer.
type ParseErrors struct {
	BadRequest          uint64 // 400: malformed syntax, framing, Host
	URITooLong          uint64 // 414
	HeaderTooLarge      uint64 // 431
	NotImplemented      uint64 // 501: unsupported transfer coding
	VersionNotSupported uint64 // 505
	Other               uint64
}

// AcceptErrors counts failed accepts by cause. A listener that fails to
// accept is retried after a back-off (5 ms, doubling up to 1 s, reset by
// the next accept that succeeds) and the error is logged, at most one line
// a second per server. Meanwhile new connections wait in the listen
// backlog. FDLimit is the one a deployment meets first: raise the file
// descriptor limit (ulimit -n, LimitNOFILE= in a systemd unit) or lower
// MaxConns.
type AcceptErrors struct {
	FDLimit uint64 // EMFILE, ENFILE: the process's or the system's file descriptor limit
	Memory  uint64 // ENOBUFS, ENOMEM: no kernel memory for the socket
	Other   uint64 // anything else (EPERM from a firewall rule, ...)
}

// Timeouts counts timeouts by kind.
type Timeouts struct {
	Header uint64 // ReadHeaderTimeout (the answer is 408 if part of a head came)
	Idle   uint64 // IdleTimeout between keep-alive requests
	Body   uint64 // ReadBodyTimeout
	Write  uint64 // WriteTimeout
}

// Histogram is a cumulative histogram: Buckets[i] counts observations of
// at most DurationBuckets[i]; Count counts all of them (the +Inf bucket).
type Histogram struct {
	Buckets [len(DurationBuckets)]uint64
	Count   uint64
	Sum     time.Duration
}

// statShards is the number of per-request counter shards of a Server.
const statShards = 16

// statShard holds per-request counters, padded to 256 bytes so that no
// two shards share a cache line (TestStatShardSize).
type statShard struct {
	responses [5]atomic.Uint64
	hist      [len(DurationBuckets) + 1]atomic.Uint64 // non-cumulative; last is +Inf
	durSum    atomic.Int64
	bytes     takeover.Counters // BytesIn, BytesOut
	_         [64]byte
}

// monoStart is the origin of monoNow.
var monoStart = time.Now()

// monoNow is a monotonic clock reading in nanoseconds: one clock read,
// where time.Now takes two (wall and monotonic).
func monoNow() int64 { return int64(time.Since(monoStart)) }

// serverStats is a Server's statistics state.
type serverStats struct {
	shards                   [statShards]statShard
	conns                    [5]atomic.Uint64
	parse                    [6]atomic.Uint64 // ParseErrors, in field order
	timeout                  [4]atomic.Uint64 // Timeouts, in field order
	acceptErrs               [3]atomic.Uint64 // AcceptErrors, in field order
	panics, hijacks          atomic.Uint64
	h2Resets, h2ClientResets atomic.Uint64
	xconnects                [2]atomic.Uint64 // extended CONNECTs: HTTP/2, HTTP/3
	// h2Streams is counted per stream, from every core: striped.
	h2Streams, h3Streams stripedCounter
}

// stripedCounter is a counter that goroutines on many cores add to without
// sharing a cache line: each Add goes to the current P's stripe
// (procShard), Load sums them.
type stripedCounter [statShards]struct {
	n atomic.Uint64
	_ [56]byte
}

// Add adds d to the current P's stripe.
func (c *stripedCounter) Add(d uint64) { c[procShard()].n.Add(d) }

// Load returns the sum of the stripes.
func (c *stripedCounter) Load() uint64 {
	var n uint64
	for i := range c {
		n += c[i].n.Load()
	}
	return n
}

// procShard returns the shard index of the P the caller runs on
// (workq.ProcIndex).
func procShard() uint32 { return uint32(workq.ProcIndex()) % statShards }

// Connection event counters (serverStats.conns).
const (
	statAccepted = iota
	statRefused
	statProxyRejected
	statClosed
)

// Timeout kinds (serverStats.timeout).
const (
	timeoutHeader = iota
	timeoutIdle
	timeoutBody
	timeoutWrite
)

// count adds one to a connection event counter.
func (s *Server) count(event int) { s.stats.conns[event].Add(1) }

// pickShard returns the current P's shard, for a connection a worker
// takes (or an HTTP/2 stream).
func (s *Server) pickShard() *statShard {
	return &s.stats.shards[procShard()]
}

// Stats fills st with the server's statistics. It does not allocate, so it
// can be called as often as needed; the connection gauges cost a pass over
// the open connections.
func (s *Server) Stats(st *Stats) {
	s.init()
	ss := &s.stats
	*st = Stats{
		Accepted: ss.conns[statAccepted].Load(), Refused: ss.conns[statRefused].Load(),
		ProxyRejected: ss.conns[statProxyRejected].Load(), Closed: ss.conns[statClosed].Load(),
		Hijacked: ss.hijacks.Load(), Panics: ss.panics.Load(),
		H2Streams: ss.h2Streams.Load(), H2Resets: ss.h2Resets.Load(), H2ClientResets: ss.h2ClientResets.Load(),
		H3Streams:          ss.h3Streams.Load(),
		H2ExtendedConnects: ss.xconnects[0].Load(), H3ExtendedConnects: ss.xconnects[1].Load(),
		ParseErrors: ParseErrors{ss.parse[0].Load(), ss.parse[1].Load(), ss.parse[2].Load(),
			ss.parse[3].Load(), ss.parse[4].Load(), ss.parse[5].Load()},
		Timeouts:     Timeouts{ss.timeout[0].Load(), ss.timeout[1].Load(), ss.timeout[2].Load(), ss.timeout[3].Load()},
		AcceptErrors: AcceptErrors{ss.acceptErrs[0].Load(), ss.acceptErrs[1].Load(), ss.acceptErrs[2].Load()},
	}
	var hist [len(DurationBuckets) + 1]uint64
	for i := range ss.shards {
		sh := &ss.shards[i]
		for k := range sh.responses {
			st.Responses[k] += sh.responses[k].Load()
		}
		for k := range sh.hist {
			hist[k] += sh.hist[k].Load()
		}
		st.Duration.Sum += time.Duration(sh.durSum.Load())
		st.BytesIn += sh.bytes.In.Load()
		st.BytesOut += sh.bytes.Out.Load()
	}
	var cum uint64
	for k := range DurationBuckets {
		cum += hist[k]
		st.Duration.Buckets[k] = cum
	}
	st.Duration.Count = cum + hist[len(DurationBuckets)]
	st.Requests = st.Duration.Count
	for _, cs := range s.connSets() {
		cs.countStates(st)
	}
}

// countConn adds a connection in state cs to the gauges.
func (st *Stats) countConn(cs ConnState) {
	switch cs {
	case StateNew:
		st.ConnsNew++
	case StateActive:
		st.ConnsActive++
	case StateIdle:
		st.ConnsIdle++
	}
}

// statRequestStart notes the start of a request (its head is parsed).
func (c *conn) statRequestStart() {
	if c.cfg.stats {
		c.reqStart = monoNow()
	}
}

// statRequestDone records a finished request: its status class, its
// duration, and the connection's bytes since the last flush.
func (c *conn) statRequestDone() {
	if !c.cfg.stats {
		return
	}
	if c.hijacked {
		c.srv.stats.hijacks.Add(1)
	}
	if c.h2up {
		// Counted once, as stream 1 of the HTTP/2 connection.
		c.statFlushBytes()
		return
	}
	c.shard.observe(c.ctx.resp.status, !c.hijacked, c.reqStart)
	c.statFlushBytes()
}

// observe records one finished request in sh: the class of its status
// (with answered set, no status means the default 200) and its duration
// since start (monoNow).
func (sh *statShard) observe(status int, answered bool, start int64) {
	if class := status/100 - 1; class >= 0 && class < 5 {
		sh.responses[class].Add(1)
	} else if answered {
		sh.responses[1].Add(1)
	}
	d := time.Duration(monoNow() - start)
	b := 0
	for b < len(DurationBuckets) && d > DurationBuckets[b] {
		b++
	}
	sh.hist[b].Add(1)
	sh.durSum.Add(int64(d))
}

// statFlushBytes moves the connection's byte counts to its shard.
func (c *conn) statFlushBytes() {
	if c.nin > 0 {
		c.shard.bytes.In.Add(c.nin)
		c.nin = 0
	}
	if c.nout > 0 {
		c.shard.bytes.Out.Add(c.nout)
		c.nout = 0
	}
}

// statParseError counts a request head rejected with status code.
func (c *conn) statParseError(code int) {
	k := 5
	switch code {
	case 400:
		k = 0
	case 414:
		k = 1
	case 431:
		k = 2
	case 501:
		k = 3
	case 505:
		k = 4
	}
	c.srv.stats.parse[k].Add(1)
	c.shard.responses[code/100-1].Add(1)
}

// statReadError classifies the read error that ends readRequest (and
// counts the 408 that readRequest answers a timed-out partial head with).
func (c *conn) statReadError(err error) {
	if !netx.DeadlineExceeded(err) || c.srv.draining.Load() {
		return
	}
	if c.nreq > 0 && c.r == c.w {
		c.srv.stats.timeout[timeoutIdle].Add(1)
	} else {
		c.srv.stats.timeout[timeoutHeader].Add(1)
		if c.r < c.w {
			c.shard.responses[3].Add(1) // answered 408
		}
	}
}

// statTimeout counts a timeout of kind.
func (s *Server) statTimeout(kind int) { s.stats.timeout[kind].Add(1) }

// statClose records a connection the engine closes.
func (c *conn) statClose() {
	c.srv.count(statClosed)
	if c.werr != nil && netx.DeadlineExceeded(c.werr) {
		c.srv.statTimeout(timeoutWrite)
	}
	c.statFlushBytes()
}
