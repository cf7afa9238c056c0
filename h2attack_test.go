package riptide_test

// Known HTTP/2 attacks, played by a hostile client built on x/net/http2's
// Framer against every target in h2c and TLS mode. Each test checks that the
// server limits or closes the abusive connection, never lets a handler see
// more than the configured limits, and still serves a fresh connection
// afterwards. Every attack is bounded in frames sent and in time.

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2AttackBound is the most time any single attack connection may take; it
// is a safety net for a hung server, not a performance threshold.
const h2AttackBound = 60 * time.Second

// h2Attacker is a raw HTTP/2 client connection that writes whatever frames
// a test asks for.
type h2Attacker struct {
	t    testing.TB
	in   *h2Instance
	conn net.Conn
	fr   *http2.Framer
}

// newH2Attacker dials in, sends the client preface and an empty SETTINGS
// frame. readBuf > 0 shrinks the socket receive buffer (see h2Dial).
func newH2Attacker(t testing.TB, in *h2Instance, readBuf int) *h2Attacker {
	t.Helper()
	c := h2Dial(t, in, readBuf)
	t.Cleanup(func() { closeRaw(c) })
	_ = c.SetDeadline(time.Now().Add(h2AttackBound))
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	a := &h2Attacker{t: t, in: in, conn: c, fr: http2.NewFramer(c, c)}
	a.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	a.fr.MaxHeaderListSize = 1 << 20
	var parked <-chan struct{}
	if in.parks {
		parked = riptide.H2ParkWatch(c.LocalAddr().String())
	}
	if err := a.fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	if parked != nil {
		// The attack starts on a parked connection (no goroutine, no
		// buffer): the frames that follow resume it.
		select {
		case <-parked:
		case <-time.After(h2AttackBound):
			t.Fatalf("the idle HTTP/2 connection (%s) never parked on the event loop", in.mode())
		}
	}
	return a
}

// closeRaw closes c without a TLS close_notify, which would wait on a
// server that no longer reads.
func closeRaw(c net.Conn) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	c.Close()
}

// requestBlock is an HPACK block for GET path with the extra fields, encoded
// without indexing so that the same bytes may be sent any number of times.
func (a *h2Attacker) requestBlock(path string, extra ...hpack.HeaderField) []byte {
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	scheme := "http"
	if a.in.tls {
		scheme = "https"
	}
	fields := append([]hpack.HeaderField{
		{Name: ":method", Value: "GET"},
		{Name: ":scheme", Value: scheme},
		{Name: ":authority", Value: a.in.addr, Sensitive: true},
		{Name: ":path", Value: path, Sensitive: true},
	}, extra...)
	for _, f := range fields {
		if err := enc.WriteField(f); err != nil {
			a.t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// h2Seen is what the server sent on an attack connection.
type h2Seen struct {
	ended      bool          // the server ended the connection (GOAWAY, EOF or reset)
	goAway     bool          // a GOAWAY frame arrived
	goAwayCode http2.ErrCode // its error code
	rsts       int           // RST_STREAM frames received
	acks       int           // SETTINGS and PING acknowledgements received
	statuses   map[string]int
	endErr     error // the read error that ended the connection
}

func (s h2Seen) String() string {
	var b strings.Builder
	if s.goAway {
		b.WriteString("GOAWAY(" + s.goAwayCode.String() + ") ")
	}
	if s.endErr != nil {
		b.WriteString("end(" + s.endErr.Error() + ") ")
	}
	b.WriteString("rst=")
	b.WriteString(itoa(s.rsts))
	for k, v := range s.statuses {
		b.WriteString(" :status " + k + "×" + itoa(v))
	}
	return b.String()
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	if n == 0 {
		return "0"
	}
	for ; n > 0; n /= 10 {
		i--
		b[i] = byte('0' + n%10)
	}
	return string(b[i:])
}

// drain reads frames in a goroutine until the connection ends, and delivers
// what it saw. It ends at the latest when the connection deadline passes.
func (a *h2Attacker) drain() <-chan h2Seen { return a.drainUntil(-1) }

// drainUntil is drain that also stops, with the connection still open, once
// acks acknowledgements (SETTINGS or PING) have arrived; -1 means never.
func (a *h2Attacker) drainUntil(acks int) <-chan h2Seen {
	ch := make(chan h2Seen, 1)
	go func() {
		seen := h2Seen{statuses: map[string]int{}}
		for {
			f, err := a.fr.ReadFrame()
			if err != nil {
				var ne net.Error
				seen.ended = !(errors.As(err, &ne) && ne.Timeout())
				seen.endErr = err
				ch <- seen
				return
			}
			switch f := f.(type) {
			case *http2.GoAwayFrame:
				seen.goAway, seen.goAwayCode = true, f.ErrCode
			case *http2.RSTStreamFrame:
				seen.rsts++
			case *http2.SettingsFrame:
				if f.IsAck() {
					seen.acks++
				}
			case *http2.PingFrame:
				if f.IsAck() {
					seen.acks++
				}
			case *http2.MetaHeadersFrame:
				seen.statuses[f.PseudoValue("status")]++
			}
			if seen.acks == acks {
				ch <- seen
				return
			}
		}
	}()
	return ch
}

// wait returns what drain saw, closing the connection from the client side
// if the server has not ended it within h2AttackBound.
func (a *h2Attacker) wait(ch <-chan h2Seen) h2Seen {
	select {
	case s := <-ch:
		return s
	case <-time.After(h2AttackBound):
		closeRaw(a.conn)
		s := <-ch
		s.ended = false // the client gave up, the server did not end it
		return s
	}
}

// TestH2RapidReset plays CVE-2023-44487: a stream of HEADERS each followed at
// once by RST_STREAM, to slow handlers. The server must never run more
// handlers at once than its stream limit (reset streams included: their
// handlers still run), must stop the flood by closing the connection or
// limiting it, and must clean up and keep serving.
func TestH2RapidReset(t *testing.T) {
	t.Parallel()
	forEachH2(t, func(t *testing.T, in *h2Instance) {
		pairs := 20000
		// InlineHandlers run each handler on the connection's reader, one
		// at a time: the reset that follows a HEADERS is read only once its
		// handler has returned, so every handler runs, in turn, never more
		// than one at once. That is a client's serial requests, not the
		// attack's amplification; the concurrency bound below is what the
		// test holds it to. 500 pairs of 5 ms handlers take 2.5 s, where
		// 20,000 waited out the attack bound (60 s) on each transport.
		inline := in.name == "riptide-inline"
		if inline {
			pairs = 500
		}
		a := newH2Attacker(t, in, 0)
		seenCh := a.drain()
		block := a.requestBlock("/slow")
		sent := 0
		for ; sent < pairs; sent++ {
			id := uint32(2*sent + 1)
			err := a.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block, EndStream: true, EndHeaders: true})
			if err == nil {
				err = a.fr.WriteRSTStream(id, http2.ErrCodeCancel)
			}
			if err != nil {
				break
			}
		}
		if sent == pairs {
			// The server took every pair without closing: end politely so
			// that the connection ends; the checks below still apply.
			_ = a.fr.WriteGoAway(0, http2.ErrCodeNo, nil)
		}
		seen := a.wait(seenCh)
		t.Logf("sent %d HEADERS+RST_STREAM pairs; server: %v; /slow handlers started %d, at most %d at once",
			sent, seen, in.app.slowCalls.Load(), in.app.maxInflight.Load())
		if m := in.app.maxInflight.Load(); m > h2TestMaxStreams {
			t.Errorf("%d handlers ran at once, more than the %d concurrent streams allowed", m, h2TestMaxStreams)
		}
		if !inline && sent == pairs && in.app.slowCalls.Load() == int64(pairs) {
			t.Errorf("the server ran a handler for each of the %d reset streams and never pushed back", pairs)
		}
		waitIdle(t, in)
		assertServes(t, in)
	})
}

// waitIdle waits (bounded) until no /slow handler runs any more.
func waitIdle(t testing.TB, in *h2Instance) {
	t.Helper()
	deadline := time.Now().Add(h2AttackBound)
	for in.app.inflight.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d handlers still running long after the attack", in.app.inflight.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestH2ContinuationFlood plays the CONTINUATION flood (CVE-2024-27316 and
// kin): a HEADERS frame without END_HEADERS followed by CONTINUATION frames
// that never end, full of valid HPACK. The server must end the connection
// long before the client runs out of frames, and no handler may run.
func TestH2ContinuationFlood(t *testing.T) {
	t.Parallel()
	const frames = 4096 // 64 MiB of header block at 16 KiB per frame
	forEachH2(t, func(t *testing.T, in *h2Instance) {
		a := newH2Attacker(t, in, 0)
		seenCh := a.drain()
		// One fragment of whole header fields, about 16 KiB, repeated.
		var frag bytes.Buffer
		enc := hpack.NewEncoder(&frag)
		field := hpack.HeaderField{Name: "x-flood", Value: strings.Repeat("a", 100), Sensitive: true}
		for frag.Len() < 16000 {
			_ = enc.WriteField(field)
		}
		err := a.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: a.requestBlock("/bomb"), EndStream: true})
		sent := 0
		for ; err == nil && sent < frames; sent++ {
			err = a.fr.WriteContinuation(1, false, frag.Bytes())
		}
		seen := a.wait(seenCh)
		t.Logf("sent %d CONTINUATION frames (%d KiB); write error: %v; server: %v", sent, sent*frag.Len()>>10, err, seen)
		if !seen.ended {
			t.Errorf("the server kept the connection open through %d CONTINUATION frames (%d MiB of headers)", sent, sent*frag.Len()>>20)
		}
		if n := in.app.bombCalls.Load(); n != 0 {
			t.Errorf("a handler ran for the flooded stream (%d times)", n)
		}
		assertServes(t, in)
	})
}

// TestH2HPACKBomb sends header blocks that are small on the wire but decode
// to a huge header list: one 4000-byte field put in the HPACK dynamic table,
// then thousands of one-byte references to it (about 48 MB decoded per
// request). The server must refuse each request (431, RST_STREAM or
// GOAWAY), no handler may see more than the header limit, and the server
// must keep serving.
func TestH2HPACKBomb(t *testing.T) {
	t.Parallel()
	const requests = 8
	forEachH2(t, func(t *testing.T, in *h2Instance) {
		a := newH2Attacker(t, in, 0)
		seenCh := a.drain()
		// The first block indexes the big field (dynamic index 62); every
		// block then references it over and over.
		var first bytes.Buffer
		enc := hpack.NewEncoder(&first)
		_ = enc.WriteField(hpack.HeaderField{Name: "x-bomb", Value: strings.Repeat("b", 4000)})
		refs := bytes.Repeat([]byte{0x80 | 62}, 12000)
		var err error
		sent := 0
		for ; err == nil && sent < requests; sent++ {
			block := append(a.requestBlock("/bomb"), refs...)
			if sent == 0 {
				block = append(append(a.requestBlock("/bomb"), first.Bytes()...), refs...)
			}
			err = a.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: uint32(2*sent + 1), BlockFragment: block, EndStream: true, EndHeaders: true})
		}
		_ = a.fr.WriteGoAway(0, http2.ErrCodeNo, nil)
		seen := a.wait(seenCh)
		t.Logf("sent %d bomb requests (%d MB decoded each); write error: %v; server: %v",
			sent, (4000+len("x-bomb"))*12000/1e6, err, seen)
		if n := in.app.bombMaxHdr.Load(); n > h2TestMaxHeaderBytes {
			t.Errorf("a handler received a %d-byte header list, over the %d-byte limit", n, h2TestMaxHeaderBytes)
		}
		if n := seen.statuses["200"]; n > 0 {
			t.Errorf("%d bomb requests were answered 200", n)
		}
		if seen.statuses["431"]+seen.rsts == 0 && !seen.goAway {
			t.Errorf("the server neither refused the bomb requests (431 or RST_STREAM) nor sent GOAWAY")
		}
		assertServes(t, in)
	})
}

// TestH2SettingsFlood and TestH2PingFlood send control frames that each
// demand an answer (a SETTINGS ACK, a PING ACK) while never reading, with a
// tiny receive buffer, so that the answers pile up in the server. The server
// must keep what it holds for the connection bounded: it closes the
// connection (x/net/http2 does past 10,000 queued control frames) or stops
// reading it. Since the kernel may buffer tens of MiB of the flood either
// way, the test checks the server's live heap rather than the socket: a
// server that queued one answer per frame would hold ~100 MB for the
// million frames sent.
func TestH2SettingsFlood(t *testing.T) {
	if riptide.InOwnProcess(t) {
		return // ran in a process of its own
	}
	h2ControlFlood(t, func(fr *http2.Framer) error {
		return fr.WriteSettings(http2.Setting{ID: http2.SettingEnablePush, Val: 0})
	})
}

func TestH2PingFlood(t *testing.T) {
	if riptide.InOwnProcess(t) {
		return // ran in a process of its own
	}
	h2ControlFlood(t, func(fr *http2.Framer) error {
		return fr.WritePing(false, [8]byte{1, 2, 3, 4, 5, 6, 7, 8})
	})
}

// h2StallWait is how long a blocked write must last for the flood tests to
// take it as the server no longer reading. A slow server mistaken for one
// applying backpressure still passes the other checks.
const h2StallWait = 2 * time.Second

// h2FloodHeapLimit bounds the live heap growth a control flood may cause.
const h2FloodHeapLimit = 32 << 20

func h2ControlFlood(t *testing.T, write func(*http2.Framer) error) {
	const frames = 1_000_000
	forEachH2(t, func(t *testing.T, in *h2Instance) {
		before := liveHeap()
		a := newH2Attacker(t, in, 4096)
		var err error
		sent := 0
		for ; err == nil && sent < frames; sent++ {
			if sent%256 == 0 {
				_ = a.conn.SetWriteDeadline(time.Now().Add(h2StallWait))
			}
			err = write(a.fr)
		}
		grown := liveHeap() - before
		how := "the server stopped reading (backpressure)"
		if ne := net.Error(nil); err == nil {
			how = "every frame was written (into kernel buffers, at least)"
		} else if !errors.As(err, &ne) || !ne.Timeout() {
			how = "the server closed the connection: " + err.Error()
		}
		t.Logf("sent %d frames without reading; %s; live heap grew %d KiB", sent, how, grown>>10)
		if grown > h2FloodHeapLimit {
			t.Errorf("the server's live heap grew by %d MiB during the flood (limit %d MiB): answers are piling up",
				grown>>20, h2FloodHeapLimit>>20)
		}
		closeRaw(a.conn)
		assertServes(t, in)
	})
}

// liveHeap returns the bytes of live heap after a full collection.
func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
