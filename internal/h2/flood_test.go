package h2

// HTTP/2 floods that make a server hold memory or burn CPU for the client:
// frames that each make the engine queue an answer while the client never
// reads (RST_STREAM, the reset flood of CVE-2019-9514), a request body sent
// faster than its handler reads it, SETTINGS frames with thousands of
// entries, and a well-behaved client that bursts more streams than the
// limit. Each runs on every target of forEachTarget (workers and inline;
// h2c and TLS). The tests that measure the live heap run alone (not
// parallel).

import (
	"errors"
	"testing"
	"time"

	"github.com/riptide-http/riptide/internal/h2test"
	"golang.org/x/net/http2"
)

// resetFloodHeapLimit bounds the live heap growth the reset floods may
// cause. The old server queued one 13-byte RST_STREAM per frame, about
// 20 MiB for the frames sent here; the fixed one holds at most
// h2MaxControlBytes (128 KiB) of them.
const resetFloodHeapLimit = 8 << 20

// resetFloodFrames is how many RST_STREAM-causing frames each flood
// sends (about 28 MB on the wire), in batches of resetFloodBatch.
const (
	resetFloodFrames = 2_000_000
	resetFloodBatch  = 4096
)

// TestResetFloodSelfDependentPriorityEndsConnection and its siblings send,
// without ever reading, frames that each make the engine answer
// RST_STREAM: PRIORITY making a stream depend on itself, WINDOW_UPDATE
// with increment 0 on an opened stream, empty DATA on a closed stream,
// HEADERS without :path (h2test.SelfDependentPriority and its
// siblings). The live heap must stay bounded, and the engine must end the
// connection (with GOAWAY(ENHANCE_YOUR_CALM) when the client is still
// there to read it) instead of answering a PING sent after the flood
// (h2test.Attacker.ResetFlood).
func TestResetFloodSelfDependentPriorityEndsConnection(t *testing.T) {
	resetFlood(t, false, h2test.SelfDependentPriority)
}

func TestResetFloodZeroWindowUpdateEndsConnection(t *testing.T) {
	resetFlood(t, true, h2test.ZeroWindowUpdate)
}

func TestResetFloodDataOnClosedStreamEndsConnection(t *testing.T) {
	resetFlood(t, true, h2test.EmptyDataOnStream1)
}

func TestResetFloodHeadersWithoutPathEndsConnection(t *testing.T) {
	resetFlood(t, false, h2test.HeadersWithoutPath)
}

// resetFlood runs the flood of frame on every target, after opening
// stream 1 if open says so.
func resetFlood(t *testing.T, open bool, frame func(b []byte, i int) []byte) {
	forEachTarget(t, func(t *testing.T, in *instance) {
		before := h2test.LiveHeap()
		a := newAttacker(t, in, 4096)
		if open {
			a.OpenStream1()
		}
		a.ResetFlood(before, resetFloodHeapLimit, resetFloodFrames, resetFloodBatch, stallWait, frame)
		h2test.CloseRaw(a.Conn)
		assertServes(t, in)
	})
}

// TestSlowReaderUploadHoldsAboutOneWindow uploads a body much larger than the stream
// window to a handler that always leaves the last byte received unread
// (POST /gated), so that its stream's buffer is never empty. The server
// must hold about a window of it, not the whole body: its live heap stays
// under slowReaderHeapLimit while 32 MiB go through, and it never grants
// the client more window than it has room for (the client never sees a
// FLOW_CONTROL reset).
func TestSlowReaderUploadHoldsAboutOneWindow(t *testing.T) {
	const body = 32 << 20
	const slowReaderHeapLimit = 8 << 20
	forEachTarget(t, func(t *testing.T, in *instance) {
		before := h2test.LiveHeap()
		a := newAttacker(t, in, 0)
		up := &uploader{a: a, connWin: 65535, streamWin: 65535, initWin: 65535}
		// The server's SETTINGS first: they set the stream window.
		for !up.settings {
			up.readFrame()
		}
		block := a.RequestBlock("/gated")
		block[0] = 0x83 // :method POST (static table)
		if err := a.Fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block, EndHeaders: true}); err != nil {
			t.Fatal(err)
		}
		chunk := make([]byte, 16<<10)
		var sent, peak int64
		measured := false
		for sent < body {
			if up.streamWin <= 0 || up.connWin <= 0 {
				// Blocked by flow control. Once a PING has come back
				// the server has all the DATA sent before it: let the
				// handler read all of it but the last byte, so that it
				// never finds the buffer empty, and wait for the window
				// it grants.
				up.pinged = false
				if err := a.Fr.WritePing(false, [8]byte{'u', 'p'}); err != nil {
					t.Fatal(err)
				}
				for !up.pinged {
					up.readFrame()
				}
				in.app.gate <- sent
				if !measured && sent >= body*3/4 {
					peak, measured = h2test.LiveHeap()-before, true
				}
				for up.streamWin <= 0 || up.connWin <= 0 {
					up.readFrame()
				}
				continue
			}
			n := min(int64(len(chunk)), up.streamWin, up.connWin, body-sent)
			if err := a.Fr.WriteData(1, sent+n == body, chunk[:n]); err != nil {
				t.Fatalf("after %d bytes: %v", sent, err)
			}
			sent += n
			up.streamWin -= n
			up.connWin -= n
		}
		in.app.gate <- -1 // the rest, to the end
		for !up.done {
			up.readFrame()
		}
		t.Logf("uploaded %d MiB to a handler that never empties the buffer; live heap grew %d KiB at 3/4; response %s",
			body>>20, peak>>10, up.status)
		if !measured {
			t.Fatal("flow control never blocked the upload: the server granted more window than a stream's buffer")
		}
		if peak > slowReaderHeapLimit {
			t.Errorf("the server's live heap grew by %d MiB during the upload (limit %d MiB): the read part of the body is kept",
				peak>>20, slowReaderHeapLimit>>20)
		}
		if up.status != "200" {
			t.Errorf("response :status %q, want 200", up.status)
		}
		h2test.CloseRaw(a.Conn)
	})
}

// uploader tracks what the server sends an uploading attacker.
type uploader struct {
	a                           *attacker
	settings                    bool // the server's SETTINGS arrived
	connWin, streamWin, initWin int64
	status                      string
	done                        bool // the response ended
	pinged                      bool // a PING ACK arrived
}

// readFrame reads one frame and applies it; anything that ends the upload
// early fails the test.
func (u *uploader) readFrame() {
	t := u.a.T
	f, err := u.a.Fr.ReadFrame()
	if err != nil {
		t.Fatalf("reading the server's frames: %v", err)
	}
	switch f := f.(type) {
	case *http2.SettingsFrame:
		if f.IsAck() {
			return
		}
		u.settings = true
		if v, ok := f.Value(http2.SettingInitialWindowSize); ok {
			u.streamWin += int64(v) - u.initWin
			u.initWin = int64(v)
		}
	case *http2.WindowUpdateFrame:
		if f.StreamID == 0 {
			u.connWin += int64(f.Increment)
		} else if f.StreamID == 1 {
			u.streamWin += int64(f.Increment)
		}
	case *http2.MetaHeadersFrame:
		u.status = f.PseudoValue("status")
		u.done = u.done || f.StreamEnded()
	case *http2.DataFrame:
		u.done = u.done || f.StreamEnded()
	case *http2.PingFrame:
		u.pinged = u.pinged || f.IsAck()
	case *http2.RSTStreamFrame:
		t.Fatalf("the server reset the upload: %v", f.ErrCode)
	case *http2.GoAwayFrame:
		t.Fatalf("the server sent GOAWAY(%v) during the upload", f.ErrCode)
	}
}

// TestSettingsWithManyEntriesEnhanceYourCalm sends one SETTINGS frame with 2,730
// INITIAL_WINDOW_SIZE entries (a 16 KiB frame), each of which would walk
// every open stream. The engine must answer GOAWAY(ENHANCE_YOUR_CALM)
// (more than 100 settings in a frame).
func TestSettingsWithManyEntriesEnhanceYourCalm(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, in *instance) {
		a := newAttacker(t, in, 0)
		seenCh := a.Drain()
		settings := make([]http2.Setting, 16380/6)
		for i := range settings {
			settings[i] = http2.Setting{ID: http2.SettingInitialWindowSize, Val: uint32(65535 + i%2)}
		}
		if err := a.Fr.WriteSettings(settings...); err != nil {
			t.Fatal(err)
		}
		s := a.Wait(seenCh)
		t.Logf("sent SETTINGS with %d entries; server: %v", len(settings), s)
		want := http2.ErrCodeEnhanceYourCalm
		if !s.GoAway || s.GoAwayCode != want {
			t.Errorf("server: %v; want GOAWAY(%v)", s, want)
		}
		assertServes(t, in)
	})
}

// TestSettingsInitialWindowLastEntryWins checks that a SETTINGS frame with
// several INITIAL_WINDOW_SIZE entries leaves the windows as if each were
// applied in turn (RFC 9113 §6.5.3): the last one, 1 byte, is the stream
// window a response gets.
func TestSettingsInitialWindowLastEntryWins(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, in *instance) {
		a := newAttacker(t, in, 0)
		err := a.Fr.WriteSettings(
			http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 20},
			http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0},
			http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1})
		if err == nil {
			err = a.Fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: a.RequestBlock("/"), EndStream: true, EndHeaders: true})
		}
		if err != nil {
			t.Fatal(err)
		}
		var data int
		for data == 0 {
			f, err := a.Fr.ReadFrame()
			if err != nil {
				t.Fatal(err)
			}
			switch f := f.(type) {
			case *http2.DataFrame:
				data = len(f.Data())
			case *http2.RSTStreamFrame, *http2.GoAwayFrame:
				t.Fatalf("unexpected %v", f)
			}
		}
		if data != 1 {
			t.Errorf("first DATA frame has %d bytes; want 1 (the last INITIAL_WINDOW_SIZE)", data)
		}
	})
}

// TestRefusedBurstsDoNotCloseConnection plays a client that bursts 150 requests
// at a server allowing 100 concurrent streams, 12 times on one connection,
// without ever resetting a stream. The streams over the limit are refused
// each time (at least 50: a server may still count a stream whose response
// has ended until its handler is released), but the connection must not be
// closed for it (the old server counted every refusal for the connection's
// life and sent GOAWAY(ENHANCE_YOUR_CALM) in the 9th burst), and no more
// than 100 handlers may hold streams at once.
func TestRefusedBurstsDoNotCloseConnection(t *testing.T) {
	t.Parallel()
	const bursts, burst = 12, testMaxStreams + 50
	forEachTarget(t, func(t *testing.T, in *instance) {
		if in.name == "inline" {
			// /hold blocks, and an inline handler blocks the reading
			// goroutine: the burst would never be read.
			t.Skip("blocking handlers do not belong on InlineHandlers")
		}
		a := newAttacker(t, in, 0)
		events := a.burstEvents()
		block := a.RequestBlock("/hold")
		id := uint32(1)
		deadline := time.After(attackBound)
		next := func(b int) burstEvent {
			select {
			case ev := <-events:
				if ev.err != nil {
					t.Fatalf("burst %d: %v", b+1, ev.err)
				}
				return ev
			case <-deadline:
				t.Fatalf("burst %d: no answer", b+1)
			}
			return burstEvent{}
		}
		for b := 0; b < bursts; b++ {
			base := in.app.holdEntered.Load()
			for i := 0; i < burst; i++ {
				if err := a.Fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block, EndStream: true, EndHeaders: true}); err != nil {
					t.Fatalf("burst %d: %v", b+1, err)
				}
				id += 2
			}
			// Every stream is either refused or has a handler waiting
			// in /hold until released.
			rsts, ended := 0, 0
			held := func() int { return int(in.app.holdEntered.Load() - base) }
			for rsts+held() < burst {
				select {
				case ev := <-events:
					if ev.err != nil {
						t.Fatalf("burst %d: %v", b+1, ev.err)
					}
					rsts += ev.rst
					ended += ev.ended
				case <-time.After(time.Millisecond):
				case <-deadline:
					t.Fatalf("burst %d: %d refused, %d handlers held, of %d", b+1, rsts, held(), burst)
				}
			}
			n := held()
			if n > testMaxStreams {
				t.Fatalf("burst %d: %d handlers held streams at once, over the limit of %d", b+1, n, testMaxStreams)
			}
			for i := 0; i < n; i++ {
				in.app.hold <- struct{}{}
			}
			for ended < n {
				ev := next(b)
				rsts += ev.rst
				ended += ev.ended
			}
			if rsts+n != burst {
				t.Fatalf("burst %d: %d refused and %d answered, of %d", b+1, rsts, n, burst)
			}
		}
	})
}

// burstEvent is one frame of TestRefusedBurstsDoNotCloseConnection's
// connection: a RST_STREAM, the end of a response, or the end of the
// connection (GOAWAY or a read error) as err.
type burstEvent struct {
	rst, ended int
	err        error
}

// burstEvents reads the connection's frames in a goroutine until it ends.
func (a *attacker) burstEvents() <-chan burstEvent {
	ch := make(chan burstEvent, 1024)
	go func() {
		for {
			f, err := a.Fr.ReadFrame()
			var ev burstEvent
			switch f := f.(type) {
			case *http2.GoAwayFrame:
				ev.err = errors.New("the server sent GOAWAY(" + f.ErrCode.String() + ")")
			case *http2.RSTStreamFrame:
				ev.rst = 1
			case *http2.MetaHeadersFrame:
				if f.StreamEnded() {
					ev.ended = 1
				}
			case *http2.DataFrame:
				if f.StreamEnded() {
					ev.ended = 1
				}
			}
			if err != nil {
				ev.err = err
			}
			if ev != (burstEvent{}) {
				ch <- ev
			}
			if ev.err != nil {
				return
			}
		}
	}()
	return ch
}
