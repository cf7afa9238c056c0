package websocket

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/israce"
	"github.com/riptide-http/riptide/internal/memprof"
)

// The event mode over TLS (wss://) on the event loop's TLS engine. The
// tests of event_features_linux_test.go and event_attack_linux_test.go
// that concern the connection's bytes (keep-alive and timeouts, the close
// handshake, Shutdown, a long echo, the write queue's bound) run over
// cleartext and TLS (evNet); here, the echo of every kind of message,
// broadcast, allocations and idle memory over TLS.

// evNet is how a test reaches the event mode: over cleartext (ws://) or
// over TLS (wss://, on the event loop's TLS engine, the default there).
// The tests that take one run over both (eachNet).
type evNet struct {
	tls bool
	tc  *tls.Config // the client's, once serve started a TLS server
}

// tlsRecordOverhead is what TLS 1.3 with AES-GCM adds to each record: its
// header, the content type and the tag.
const tlsRecordOverhead = 5 + 1 + 16

// eachNet runs f as subtests over cleartext ("tcp") and TLS ("tls").
func eachNet(t *testing.T, f func(*testing.T, *evNet)) {
	for _, secure := range []bool{false, true} {
		t.Run(map[bool]string{false: "tcp", true: "tls"}[secure], func(t *testing.T) { f(t, &evNet{tls: secure}) })
	}
}

// serve starts srv (serveServer or serveWSS) and returns its URL.
func (en *evNet) serve(t *testing.T, srv *riptide.Server) string {
	t.Helper()
	if !en.tls {
		return serveServer(t, srv)
	}
	url, tc := serveWSS(t, srv)
	en.tc = tc
	return url
}

// serveEvents is the package's serveEvents over en.
func (en *evNet) serveEvents(t *testing.T, o *Options, h Handler) (string, <-chan error) {
	t.Helper()
	eh, closed := eventsHandler(t, o, h)
	return en.serve(t, &riptide.Server{Handler: eh}), closed
}

// dial is the package's dial over en.
func (en *evNet) dial(t *testing.T, url string, o *Options) *Conn {
	t.Helper()
	if !en.tls {
		return dial(t, url, o)
	}
	var oo Options
	if o != nil {
		oo = *o
	}
	oo.TLSClientConfig = en.tc
	return dial(t, url, &oo)
}

// conns is idleConns over en: n upgraded connections that read and write
// nothing more.
func (en *evNet) conns(t *testing.T, url string, n int) []net.Conn {
	t.Helper()
	if !en.tls {
		return idleConns(t, url, n)
	}
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "wss://"), "/")
	conns := make([]net.Conn, 0, n)
	for range n {
		cfg := en.tc.Clone()
		cfg.NextProtos = []string{"http/1.1"}
		nc, err := tls.Dial("tcp", addr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, nc)
		nc.Write(upgradeRequest(addr))
		resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
		if err != nil || resp.StatusCode != 101 {
			t.Fatalf("upgrade: %v %v", resp, err)
		}
	}
	return conns
}

// Serve over TLS echoes text, binary, fragmented and compressed messages,
// answers a ping and closes with the handshake: event-driven on the event
// loop's TLS engine (the default there), with a goroutine on the
// goroutine engine or with TLS on the goroutine engine; OnClose sees the
// client's code.
func TestEventTLSEcho(t *testing.T) {
	for _, tt := range []struct {
		name      string
		e, tlsEng riptide.Engine
		event     bool
	}{
		{"eventloop", riptide.EngineAuto, riptide.EngineAuto, true},
		{"goroutine", riptide.EngineGoroutine, riptide.EngineAuto, false},
		{"tls-goroutine", riptide.EngineAuto, riptide.EngineGoroutine, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opened, closed := make(chan *Peer, 2), make(chan error, 2)
			srv := &riptide.Server{Handler: eventEcho(echoOpts, opened, closed), Engine: tt.e, TLSEngine: tt.tlsEng}
			url, tc := serveWSS(t, srv)
			for _, compress := range []bool{false, true} {
				exerciseDial(t, url, compress, tc, false)
				p := <-opened
				if p.EventDriven() != tt.event {
					t.Errorf("EventDriven() = %v, want %v", p.EventDriven(), tt.event)
				}
				if p.Subprotocol() != "echo" {
					t.Errorf("subprotocol %q", p.Subprotocol())
				}
				if err := waitClosed(t, closed); CloseStatus(err) != 4000 {
					t.Errorf("compress %v: OnClose %v, want the client's 4000", compress, err)
				}
			}
		})
	}
}

// A prepared message broadcast over TLS to parked peers, from as many
// goroutines at once, arrives whole on each client, compressed or not as
// each negotiated.
func TestEventTLSBroadcast(t *testing.T) {
	peers := make(chan *Peer, 16)
	en := &evNet{tls: true}
	url, _ := en.serveEvents(t, &Options{Compression: true}, Handler{
		OnOpen: func(p *Peer) { peers <- p },
	})
	const n = 8
	var clients []*Conn
	var servers []*Peer
	for i := range n {
		clients = append(clients, en.dial(t, url, &Options{Compression: i%2 == 0}))
		servers = append(servers, <-peers)
	}
	msg := bytes.Repeat([]byte("broadcast "), 100)
	pm, err := NewPreparedMessage(TextMessage, msg, true)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // parked
	const rounds = 20
	var wg sync.WaitGroup
	for _, p := range servers {
		wg.Go(func() {
			for range rounds {
				if err := p.WritePreparedMessage(pm); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for i, c := range clients {
		for range rounds {
			mt, got, err := c.ReadMessage()
			if err != nil || mt != TextMessage || !bytes.Equal(got, msg) {
				t.Fatalf("client %d: %v, %d bytes, %v", i, mt, len(got), err)
			}
		}
	}
	wg.Wait()
}

// Steady state an echoed message over TLS costs the server no allocation
// of its own, end to end over loopback: the 3 per message are crypto/tls's
// (readFromUntil's reader, one per record read: the client's read of the
// echo, the server's read of the message and its read that finds the
// socket empty before parking; an HTTP/1.1 request over TLS costs the same
// two). A copy of the message, a queue entry or a goroutine per message
// would show here. A prepared message written to the parked peer costs
// the server none either: its gathered frames are sealed by a turn that
// does not read; the one allocation is the client's record read.
func TestEventTLSMessageAllocs(t *testing.T) {
	const tlsRecordAllocs = 3
	if israce.Enabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	opened := make(chan *Peer, 1)
	en := &evNet{tls: true}
	c := en.dial(t, en.serve(t, &riptide.Server{Handler: eventEcho(nil, opened, nil)}), nil)
	p := <-opened
	if !p.EventDriven() {
		t.Fatal("not event-driven")
	}
	for _, msg := range [][]byte{[]byte("hello, event loop"), bytes.Repeat([]byte("0123456789abcdef"), 64)} {
		run := func() {
			if err := c.WriteMessage(BinaryMessage, msg); err != nil {
				t.Fatal(err)
			}
			if _, got, err := c.ReadMessage(); err != nil || !bytes.Equal(got, msg) {
				t.Fatalf("echo: %d bytes, %v", len(got), err)
			}
		}
		if n := steadyAllocs(run); n > tlsRecordAllocs {
			t.Errorf("%d-byte messages: %v allocations per echoed message, want at most crypto/tls's %d", len(msg), n, tlsRecordAllocs)
		}
	}
	pm, err := NewPreparedMessage(TextMessage, []byte("to every subscriber"), false)
	if err != nil {
		t.Fatal(err)
	}
	const clientRecordAllocs = 1
	if n := steadyAllocs(func() {
		waitParked(t, p)
		if err := p.WritePreparedMessage(pm); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.ReadMessage(); err != nil {
			t.Fatal(err)
		}
	}); n > clientRecordAllocs {
		t.Errorf("%v allocations per message written to the parked peer, want at most %d (the client's record read)", n, clientRecordAllocs)
	}
}

// eventTLSIdleLimit is the most an idle event-driven connection over TLS
// may keep in the server, heap and stacks: its tls.Conn (keys, the record
// buffers crypto/tls keeps at the size they reached), the engine's
// connection and the Peer (TestEventTLSIdleMemory measured 7,199 and
// 7,242 bytes, 6,570 of them crypto/tls's, at 2,000 connections).
const eventTLSIdleLimit = 8 << 10

// N idle event-driven connections over TLS (wss://) on the event loop's
// TLS engine, the client in a child process: none keeps a goroutine and
// each keeps at most eventTLSIdleLimit bytes of heap and stacks; the part
// that crypto/tls allocated (a heap profile's live bytes with a crypto/tls
// frame) is logged beside it, and so is the cost with TLS on the
// goroutine engine, where the same API runs a goroutine per connection.
func TestEventTLSIdleMemory(t *testing.T) {
	if israce.Enabled || testing.Short() {
		t.Skip("memory figures need a build without -race, and time")
	}
	const n = 2000
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = old }()
	for _, tlsEng := range []riptide.Engine{riptide.EngineAuto, riptide.EngineGoroutine} {
		event := tlsEng == riptide.EngineAuto
		t.Run(map[bool]string{true: "event", false: "tls-goroutine"}[event], func(t *testing.T) {
			var live atomic.Int64
			h := countedEcho(t, &live, event)
			perConn := map[bool]int{true: 0, false: 1}[event]
			cost := idleCostOf(t, &riptide.Server{Handler: h, TLSEngine: tlsEng}, true, n, perConn, live.Load, cryptoTLSHeap)
			t.Logf("TLSEngine %v: %.0f bytes of heap and stacks (crypto/tls's %.0f), %.3f goroutines per idle connection (%d connections, client in a child process)", tlsEng, cost.bytes, cost.part, cost.goroutines, n)
			if !event {
				return
			}
			if cost.bytes > eventTLSIdleLimit {
				t.Errorf("%.0f bytes per idle event-driven connection over TLS, want at most %d", cost.bytes, eventTLSIdleLimit)
			}
			if cost.bytes <= 0 || cost.part <= 0 {
				t.Errorf("%.0f bytes per idle connection, %.0f of crypto/tls: the baseline held memory freed later", cost.bytes, cost.part)
			}
			if cost.goroutines > 0.01 {
				t.Errorf("%.3f goroutines per idle event-driven connection over TLS, want none", cost.goroutines)
			}
		})
	}
}

// cryptoTLSHeap is the live heap allocated inside crypto/tls, from the
// heap profile (exact at MemProfileRate 1 for what was allocated since).
func cryptoTLSHeap() int64 {
	recs := memprof.Records()
	var total int64
	for i := range recs {
		r := &recs[i]
		frames := runtime.CallersFrames(r.Stack())
		for {
			f, more := frames.Next()
			if strings.HasPrefix(f.Function, "crypto/tls.") {
				total += r.AllocBytes - r.FreeBytes
				break
			}
			if !more {
				break
			}
		}
	}
	return total
}

// heldWrites is a net.Conn whose writes wait while hold is set, until
// flush sends them in one write: TLS records written one by one leave in
// one TCP segment.
type heldWrites struct {
	net.Conn
	hold bool
	buf  []byte
}

func (h *heldWrites) Write(p []byte) (int, error) {
	if h.hold {
		h.buf = append(h.buf, p...)
		return len(p), nil
	}
	return h.Conn.Write(p)
}

func (h *heldWrites) flush() error {
	_, err := h.Conn.Write(h.buf)
	h.buf, h.hold = nil, false
	return err
}

// Messages in TLS records that arrive together, in one segment, are all
// served: a short read of the socket does not mean that crypto/tls holds
// no record, so a wss Peer must not park on it (an earlier version parked
// after a short read, and the second message waited for more bytes).
func TestEventTLSRecordsInOneSegment(t *testing.T) {
	srv := &riptide.Server{Handler: eventEcho(nil, nil, nil)}
	url, tc := serveWSS(t, srv)
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "wss://"), "/")
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(10 * time.Second))
	hw := &heldWrites{Conn: raw}
	cfg := tc.Clone()
	cfg.NextProtos = []string{"http/1.1"}
	nc := tls.Client(hw, cfg)
	if _, err := nc.Write(upgradeRequest(addr)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v, %v", resp, err)
	}
	const n = 4
	hw.hold = true
	for i := range n {
		if _, err := nc.Write(maskedText(fmt.Sprintf("message %d of a segment", i))); err != nil { // a record each
			t.Fatal(err)
		}
	}
	if err := hw.flush(); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		want := fmt.Sprintf("message %d of a segment", i)
		var hb [2]byte
		if _, err := io.ReadFull(br, hb[:]); err != nil {
			t.Fatalf("echo %d of %d: %v", i+1, n, err)
		}
		got := make([]byte, hb[1]&0x7f)
		if _, err := io.ReadFull(br, got); err != nil || string(got) != want {
			t.Fatalf("echo %d: %q, %v; want %q", i+1, got, err, want)
		}
	}
}

// steadyAllocs is run's allocations per call in steady state: after ten
// calls that grow the buffers and fill the pools.
func steadyAllocs(run func()) float64 {
	for range 10 {
		run()
	}
	return testing.AllocsPerRun(200, run)
}
