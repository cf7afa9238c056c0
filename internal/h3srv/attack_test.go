package h3srv

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/h3"
	"github.com/riptide-http/riptide/internal/quicxtest"
)

// TestRapidReset: a client that opens streams and resets them at once
// cannot run more handlers at a time than its stream limit, because the
// credit for a stream comes back only after its handler returned.
func TestRapidReset(t *testing.T) {
	base := takeBaseline()
	const limit, n = 10, 1000
	var inflight quicxtest.Gauge
	var ran atomic.Int32
	gate := make(chan struct{})
	p := start(t, quicxtest.Options{MaxStreams: limit}, nil, HandlerFunc(func(s *Stream) {
		inflight.Inc()
		ran.Add(1)
		<-s.Done() // the reset is noticed...
		<-gate     // ...but the handler takes a while to return
		inflight.Dec()
	}), false)
	// Registered after start's cleanup, so it runs first: a failure before
	// the release below ends the test instead of leaving the cleanup
	// waiting for the handlers held on gate.
	release := sync.OnceFunc(func() { close(gate) })
	t.Cleanup(release)
	req := reqHead("GET", "/")
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for range n {
			s := p.open(req, false)
			// Reset once the engine has the HEADERS (a reset that arrives
			// first drops them, and no handler runs).
			for s.Unread() > 0 {
				runtime.Gosched()
			}
			s.CancelWrite(uint64(h3.CodeRequestCancelled))
			s.CancelRead(uint64(h3.CodeRequestCancelled))
		}
	}()
	// The client fills its stream limit with handlers in flight, and then
	// cannot open another stream while they run.
	for i := 0; inflight.Load() < limit; i++ {
		if i == 10000 {
			t.Fatalf("%d handlers in flight, want %d", inflight.Load(), limit)
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := p.cli.OpenStream(); !errors.Is(err, quicxtest.ErrNoCredit) {
		t.Errorf("client opened a stream with %d handlers in flight: %v", limit, err)
	}
	release()
	<-sent
	if got := inflight.Peak(); got > limit {
		t.Errorf("%d handlers in flight at once, limit %d", got, limit)
	}
	t.Logf("%d streams reset, %d handlers ran, at most %d at once", n, ran.Load(), inflight.Peak())
	p.closeAndCheck(base)
}

// TestUnfinishedHeadersFlood: streams that send the start of a large
// HEADERS frame and stall hold at most the header budget between them,
// not MaxHeaderBytes each; the streams beyond it are refused with
// H3_REQUEST_REJECTED.
func TestUnfinishedHeadersFlood(t *testing.T) {
	base := takeBaseline()
	const streams, maxHeader = 100, 1 << 20
	cfg := &Config{MaxHeaderBytes: maxHeader, HeaderBudget: 2 << 20}
	p := start(t, quicxtest.Options{MaxStreams: streams, Window: 1 << 20}, cfg, HandlerFunc(func(s *Stream) {
		t.Error("handler ran for an unfinished HEADERS")
	}), false)
	frame := h3.AppendFrameHeader(nil, h3.FrameHeaders, maxHeader-100)
	part := make([]byte, 256<<10) // a quarter of the frame, then nothing
	ss := make([]*quicxtest.Stream, streams)
	for i := range ss {
		ss[i] = p.open(append(frame, part...), false)
	}
	// Every stream is either refused or read by the engine into its
	// (bounded) buffers.
	rejected := 0
	for _, s := range ss {
		for i := 0; ; i++ {
			_, stop, _, hasStop := s.ResetCode()
			if hasStop {
				if stop != uint64(h3.CodeRequestRejected) {
					t.Fatalf("stream stopped with %#x", stop)
				}
				rejected++
				break
			}
			if s.Unread() == 0 {
				break
			}
			if i == 1000 {
				t.Fatal("stream neither read nor refused")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	grown := int64(quicxtest.LiveHeap()) - int64(base.heap)
	t.Logf("%d streams stalled in HEADERS: %d refused, live heap +%d KiB", streams, rejected, grown>>10)
	if rejected < streams-2 {
		t.Errorf("%d of %d streams refused, want all but 2 (budget 2 MiB, frames of 1 MiB)", rejected, streams)
	}
	// The admitted streams hold their frame's reservation; the refused
	// ones nothing. Without the budget the engine would hold 100 buffers.
	if limit := int64(cfg.HeaderBudget) + 2<<20; grown > limit {
		t.Errorf("live heap grew %d bytes, want at most %d", grown, limit)
	}
	p.closeAndCheck(base)
}

// TestUniStreamFlood: unidirectional streams of unknown type are stopped
// with H3_STREAM_CREATION_ERROR and their count is bounded; silent ones
// are bounded by the QUIC limit.
func TestUniStreamFlood(t *testing.T) {
	base := takeBaseline()
	p := start(t, quicxtest.Options{MaxUniStreams: 8}, nil, echo, false)
	var first *quicxtest.Stream
	opened := 0
	for opened < 100 && p.cli.CloseCode() == nil {
		s, err := p.cli.OpenUni()
		if errors.Is(err, quicxtest.ErrNoCredit) {
			time.Sleep(time.Millisecond)
			continue
		}
		if err != nil {
			break
		}
		opened++
		if first == nil {
			first = s
		}
		s.Write([]byte{0x21}) // a reserved (grease) stream type
	}
	if code := p.waitClosed(); code != h3.CodeExcessiveLoad {
		t.Errorf("closed with %v after %d streams, want H3_EXCESSIVE_LOAD", code, opened)
	}
	if _, stop, _, ok := first.ResetCode(); !ok || stop != uint64(h3.CodeStreamCreationError) {
		t.Errorf("unknown stream stopped: %v %#x", ok, stop)
	}
	if opened > DefaultMaxUniStreams+8 {
		t.Errorf("%d unknown streams accepted", opened)
	}
	p.closeAndCheck(base)

	// Silent streams (no type) hold the QUIC credit: no more than the
	// limit can be open, whatever the client tries.
	p = start(t, quicxtest.Options{MaxUniStreams: 8}, nil, echo, false)
	n := 1 // the control stream
	for ; n < 100; n++ {
		if _, err := p.cli.OpenUni(); err != nil {
			break
		}
	}
	if n != 8 {
		t.Errorf("%d unidirectional streams open at once, want 8", n)
	}
}

// TestZeroRTT: a request received as 0-RTT before the handshake completed
// runs only if its method is safe; a POST is answered 425 (RFC 8470), or
// with Wait0RTT waits for the handshake.
func TestZeroRTT(t *testing.T) {
	base := takeBaseline()
	var ran atomic.Int32
	h := HandlerFunc(func(s *Stream) {
		ran.Add(1)
		io.ReadAll(s)
		s.WriteHeaders(200, nil)
	})
	p := start(t, quicxtest.Options{Used0RTT: true}, nil, h, false)
	r := readResponse(t, p.open(append(reqHead("POST", "/transfer", "content-length", "3"), data([]byte("abc"))...), true))
	if r.status != 425 || ran.Load() != 0 {
		t.Fatalf("0-RTT POST: status %d, handler ran %d times", r.status, ran.Load())
	}
	r = readResponse(t, p.open(reqHead("GET", "/"), true))
	if r.status != 200 || ran.Load() != 1 {
		t.Fatalf("0-RTT GET: status %d, handler ran %d times", r.status, ran.Load())
	}
	p.srv.CompleteHandshake()
	r = readResponse(t, p.open(append(reqHead("POST", "/transfer"), data([]byte("abc"))...), true))
	if r.status != 200 || ran.Load() != 2 {
		t.Fatalf("POST after the handshake: status %d, handler ran %d times", r.status, ran.Load())
	}

	p.cli.CloseWithError(0, "")
	<-p.served
	p.served <- nil
	p = start(t, quicxtest.Options{Used0RTT: true}, &Config{Wait0RTT: true}, h, false)
	s := p.open(append(reqHead("POST", "/transfer"), data([]byte("abc"))...), true)
	done := make(chan *response)
	go func() { done <- readResponse(t, s) }()
	select {
	case r := <-done:
		t.Fatalf("answered %d before the handshake", r.status)
	case <-time.After(50 * time.Millisecond):
	}
	p.srv.CompleteHandshake()
	if r := <-done; r.status != 200 || ran.Load() != 3 {
		t.Fatalf("POST waiting for the handshake: status %d, handler ran %d times", r.status, ran.Load())
	}
	p.closeAndCheck(base)
}

// TestShutdown: GOAWAY names the next stream; later streams are refused
// with H3_REQUEST_REJECTED; the stream in progress completes; then the
// connection closes with H3_NO_ERROR.
func TestShutdown(t *testing.T) {
	release := make(chan struct{})
	var releaseOnce sync.Once
	p := start(t, quicxtest.Options{}, nil, HandlerFunc(func(s *Stream) {
		<-release
		s.WriteHeaders(200, nil)
		s.WriteData([]byte("done"))
	}), false)
	// Registered after start's cleanup, so it runs first: a failure
	// before close(release) below ends the test instead of leaving the
	// cleanup waiting for a handler that never returns.
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	a := p.open(reqHead("GET", "/slow"), true)
	for p.engine.activeStreams() == 0 {
		runtime.Gosched()
	}
	shut := make(chan error)
	go func() { shut <- p.engine.Shutdown(context.Background()) }()

	us, err := p.cli.AcceptUniStream(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := append(append(h3.AppendVarint(nil, 0), h3.AppendSettings(nil, &h3.Settings{MaxFieldSectionSize: DefaultMaxHeaderBytes, HasMaxFieldSectionSize: true})...), h3.AppendGoaway(nil, uint64(a.StreamID()+4))...)
	got := make([]byte, 0, 64)
	for len(got) < len(want) {
		n, err := us.Read(got[len(got):cap(got)])
		if err != nil {
			t.Fatal(err)
		}
		got = got[:len(got)+n]
	}
	if string(got) != string(want) {
		t.Fatalf("control stream % x, want % x", got, want)
	}
	// The engine refuses the stream by its ID as soon as it is accepted,
	// which the fake does at open: a request written after that would
	// fail with the STOP_SENDING, so the stream is opened empty.
	b := p.open(nil, false)
	if reset := waitReset(t, b); reset != uint64(h3.CodeRequestRejected) {
		t.Errorf("stream after GOAWAY: reset %#x", reset)
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v with a stream in progress", err)
	default:
	}
	releaseOnce.Do(func() { close(release) })
	if r := readResponse(t, a); r.status != 200 || string(r.body) != "done" {
		t.Errorf("stream in progress: %+v", r)
	}
	if err := <-shut; err != nil {
		t.Error(err)
	}
	if code := p.waitClosed(); code != h3.CodeNoError {
		t.Errorf("closed with %v", code)
	}
}

// TestEngineAllocs: serving a request (head decoded, handler, HEADERS and
// DATA written, credit released) allocates nothing in the engine. The
// fake's streams are made before measuring.
func TestEngineAllocs(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts in -short mode or under the race detector are not pinned")
	}
	hello := []byte("Hello, World!")
	ct := []h1.Header{hdr("content-type", "text/plain"), hdr("content-length", "13")}
	p := start(t, quicxtest.Options{MaxStreams: 1 << 20}, nil, HandlerFunc(func(s *Stream) {
		if string(s.Request().Path) != "/plaintext" {
			t.Error("bad path")
		}
		s.WriteHeaders(200, ct)
		s.WriteData(hello)
	}), false)
	req := reqHead("GET", "/plaintext", "accept", "*/*", "user-agent", "bench")
	const runs = 200
	p.srv.Hold()
	ss := make([]*quicxtest.Stream, runs+1)
	for i := range ss {
		ss[i] = p.open(req, true)
		ss[i].Reserve(512)
	}
	i := 0
	n := testing.AllocsPerRun(runs, func() {
		p.srv.Deliver()
		<-ss[i].Released()
		i++
	})
	r := readResponse(t, ss[0])
	if r.status != 200 || string(r.body) != string(hello) {
		t.Fatalf("response %+v", r)
	}
	if n != 0 {
		t.Errorf("%v allocs per request, want 0", n)
	}
}

// TestQPACKStreamBudget: a client repeating an instruction that changes
// nothing on its QPACK encoder stream (Set Dynamic Table Capacity 0) or
// decoder stream (Stream Cancellation) has its connection closed with
// H3_EXCESSIVE_LOAD once it passes the stream's budget, and the server
// reads no more than the budget and a read buffer of it: the CPU an
// attacker's byte costs stays bounded. A decoder stream's budget grows
// with the request streams (one cancellation each): after requests, as
// many cancellations as streams pass. Before, both streams were read
// without end (a client sent 307 MiB in 3 s).
func TestQPACKStreamBudget(t *testing.T) {
	const flood = 8 << 20 // what the client tries to send
	for _, tc := range []struct {
		name string
		typ  h3.StreamType
		ins  byte // one instruction, one byte
	}{
		{"encoder: Set Dynamic Table Capacity 0", h3.StreamQPACKEncoder, 0x20},
		{"decoder: Stream Cancellation 0", h3.StreamQPACKDecoder, 0x40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := takeBaseline()
			var in atomic.Uint64
			// No control stream: every byte the server reads from the
			// client after the requests is the QPACK stream's.
			p := start(t, quicxtest.Options{}, &Config{BytesIn: &in}, HandlerFunc(func(s *Stream) {}), true)
			requests := 0
			if tc.typ == h3.StreamQPACKDecoder {
				// Requests whose streams the client may cancel.
				for range 100 {
					readResponse(t, p.open(reqHead("GET", "/"), true))
				}
				requests = 100
			}
			before := in.Load()
			s := p.uni(h3.AppendVarint(nil, uint64(tc.typ)), false)
			legit := bytes.Repeat([]byte{tc.ins}, requests)
			if _, err := s.Write(legit); err != nil {
				t.Fatal(err)
			}
			if tc.typ == h3.StreamQPACKDecoder {
				// A cancellation per stream is no excess.
				for s.Unread() > 0 {
					time.Sleep(time.Millisecond)
				}
				if p.cli.Context().Err() != nil {
					t.Fatalf("closed after %d cancellations for %d streams: %v", requests, requests, p.cli.CloseCode())
				}
			}
			chunk := bytes.Repeat([]byte{tc.ins}, 4<<10)
			sent := 0
			for sent < flood {
				n, err := s.Write(chunk)
				sent += n
				if err != nil {
					break
				}
			}
			if p.cli.Context().Err() == nil {
				t.Fatalf("%d bytes of no-op instructions sent and the connection is open; the server read %d", sent, in.Load()-before)
			}
			if code := p.waitClosed(); code != h3.CodeExcessiveLoad {
				t.Errorf("closed with %v, want H3_EXCESSIVE_LOAD", code)
			}
			read := int64(in.Load() - before)
			limit := int64(1 + qpackBudget + qpackPerStream*requests + critBufSize)
			t.Logf("client sent %d bytes; the server read %d of them before closing (limit %d)", sent+len(legit), read, limit)
			if read > limit {
				t.Errorf("the server read %d bytes of the stream, want at most %d (type, budget, a buffer)", read, limit)
			}
			p.closeAndCheck(base)
		})
	}
}
