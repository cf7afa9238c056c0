package riptide

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/riptide-http/riptide/internal/h2"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// The HTTP/2 flood property (issue 23): whatever frames a client sends
// without ever reading what the server answers, the server's live heap for
// the connection stays under h2FloodConnHeap. FuzzH2Flood turns its input
// into such a frame sequence (h2FloodProgram); TestH2FloodProperty runs a
// bounded number of random ones in the normal suite.

// h2FloodConnHeap is the bound on one connection's live heap: the output
// cap (h2MaxOutput) and control budget (h2MaxControlBytes) twice over (one
// batch queued, one being written), the connection window of unread body
// (1 MiB) and a frame, and h2FloodMaxStreams held streams.
const h2FloodConnHeap = 4 << 20

// h2FloodMaxStreams is the stream limit of the property's server: each
// held native stream costs about 7.5 KB, 22 KB with a body buffered
// (BenchmarkH2HeldStream, TestH2HeldStreamMemory).
const h2FloodMaxStreams = 8

// h2FloodStall is how long a client write may block before the client
// takes the server as no longer reading and stops sending.
const h2FloodStall = time.Second

// h2FloodProgram turns data into frames, at most maxWire bytes of them.
// The input is read as pairs (op, n): op picks one of the frame kinds
// below, n how many times it is repeated (1<<(n%18), so that a short input
// can flood).
func h2FloodProgram(data []byte, maxWire int) []byte {
	var out []byte
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	block := func(method string, path bool) []byte {
		hb.Reset()
		_ = enc.WriteField(hpack.HeaderField{Name: ":method", Value: method})
		_ = enc.WriteField(hpack.HeaderField{Name: ":scheme", Value: "http"})
		_ = enc.WriteField(hpack.HeaderField{Name: ":authority", Value: "x"})
		if path {
			_ = enc.WriteField(hpack.HeaderField{Name: ":path", Value: "/"})
		}
		return hb.Bytes()
	}
	next := uint32(1) // the next client stream ID
	last := uint32(1) // the last stream opened with a body to come
	payload := make([]byte, 16<<10)
	frame := func(typ http2.FrameType, flags http2.Flags, id uint32, p []byte) {
		out = h2.AppendFrameHeader(out, len(p), h2.FrameType(typ), h2.Flags(flags), id)
		out = append(out, p...)
	}
	for i := 0; i+1 < len(data) && len(out) < maxWire; i += 2 {
		op, reps := data[i]%13, 1<<(data[i+1]%18)
		for r := 0; r < reps && len(out) < maxWire; r++ {
			switch op {
			case 0: // PRIORITY: a stream depending on itself
				frame(http2.FramePriority, 0, last, []byte{byte(last >> 24), byte(last >> 16), byte(last >> 8), byte(last), 15})
			case 1: // WINDOW_UPDATE with increment 0 on a stream
				frame(http2.FrameWindowUpdate, 0, last, []byte{0, 0, 0, 0})
			case 2: // empty DATA, on a stream that may be closed
				frame(http2.FrameData, 0, last, nil)
			case 3: // HEADERS without :path
				frame(http2.FrameHeaders, http2.FlagHeadersEndHeaders|http2.FlagHeadersEndStream, next, block("GET", false))
				next += 2
			case 4: // a POST whose body follows
				frame(http2.FrameHeaders, http2.FlagHeadersEndHeaders, next, block("POST", true))
				last, next = next, next+2
			case 5: // 16 KiB of request body
				frame(http2.FrameData, 0, last, payload)
			case 6: // SETTINGS full of INITIAL_WINDOW_SIZE entries
				n := 1 + reps%2730
				p := make([]byte, 0, 6*n)
				for k := 0; k < n; k++ {
					p = append(p, 0, byte(http2.SettingInitialWindowSize), 0, 0, byte(k), 0xff)
				}
				frame(http2.FrameSettings, 0, 0, p)
				r = reps // once per op
			case 7: // PING
				frame(http2.FramePing, 0, 0, []byte{1, 2, 3, 4, 5, 6, 7, 8})
			case 8: // empty SETTINGS
				frame(http2.FrameSettings, 0, 0, nil)
			case 9: // RST_STREAM on the last stream
				frame(http2.FrameRSTStream, 0, last, []byte{0, 0, 0, 8})
			case 10: // WINDOW_UPDATE on the connection
				frame(http2.FrameWindowUpdate, 0, 0, []byte{0, 0, 0x40, 0})
			case 11: // a whole GET
				frame(http2.FrameHeaders, http2.FlagHeadersEndHeaders|http2.FlagHeadersEndStream, next, block("GET", true))
				next += 2
			case 12: // the end of the last body
				frame(http2.FrameData, http2.FlagDataEndStream, last, payload[:1])
			}
		}
	}
	return out
}

// h2FloodRun serves one connection (net.Pipe, in process) with a server
// whose handlers read request bodies slowly, writes frames to it without
// ever reading, and returns the live heap the connection held once the
// frames were sent, while it is still being served.
func h2FloodRun(t testing.TB, frames []byte, compat bool) int64 {
	slowRead := func(r io.Reader) {
		buf := make([]byte, 1<<10)
		for {
			if _, err := r.Read(buf); err != nil {
				return
			}
			runtime.Gosched()
		}
	}
	var h Handler = HandlerFunc(func(c *Ctx) {
		slowRead(c.Body())
		c.WriteString("ok")
	})
	if compat {
		h = FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			slowRead(r.Body)
			io.WriteString(w, "ok")
		}))
	}
	srv := &Server{Handler: h, HTTP2: &HTTP2Config{H2C: true, MaxConcurrentStreams: h2FloodMaxStreams},
		ReadHeaderTimeout: 10 * time.Second}
	srv.init()
	wire := append([]byte(http2.ClientPreface), h2.AppendFrameHeader(nil, 0, h2.FrameSettings, 0, 0)...)
	wire = append(wire, frames...)
	before := h2LiveHeap()
	cs, ss := net.Pipe()
	c := newConn(srv, ss)
	srv.trackConn(c, true)
	done := make(chan struct{})
	go func() { c.serve(); close(done) }()
	for off := 0; off < len(wire); {
		n := min(len(wire)-off, 64<<10)
		_ = cs.SetWriteDeadline(time.Now().Add(h2FloodStall))
		if _, err := cs.Write(wire[off : off+n]); err != nil {
			break // the server stopped reading, or closed
		}
		off += n
	}
	during := h2LiveHeap()
	cs.Close()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the connection did not end after the client hung up")
	}
	srv.connsDone.Wait()
	// An earlier connection's memory may still have been live before
	// (a stopped timer releases what it points at lazily): the heap once
	// this connection is gone is the baseline too.
	after := h2LiveHeap()
	runtime.KeepAlive(wire) // the client's bytes are not the server's heap
	runtime.KeepAlive(frames)
	return during - min(before, after)
}

// h2LiveHeap is the live heap after two collections: the first moves
// sync.Pool contents to the victim cache (a pooled object may still point
// at an earlier run's connection), the second frees them.
func h2LiveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// FuzzH2Flood checks the flood property on frame sequences made from the
// fuzzer's input, up to 6 MiB of them (testdata/fuzz/FuzzH2Flood holds
// the seeds: each finding of issue 23 as a program, and mixes).
func FuzzH2Flood(f *testing.F) {
	f.Add([]byte{0, 17, 0, 17, 0, 17}, false) // PRIORITY on its own stream
	f.Fuzz(func(t *testing.T, data []byte, compat bool) {
		if inOwnProcess(t) {
			return // ran in a process of its own
		}
		frames := h2FloodProgram(data, 6<<20)
		grown := h2FloodRun(t, frames, compat)
		t.Logf("%d bytes of frames; live heap grew %d KiB", len(frames), grown>>10)
		if grown > h2FloodConnHeap {
			t.Fatalf("%d bytes of frames sent without reading grew the live heap by %d KiB (bound %d KiB)",
				len(frames), grown>>10, h2FloodConnHeap>>10)
		}
	})
}

// TestH2FloodProperty is FuzzH2Flood's short mode for the normal suite:
// random programs from a fixed seed, both doors, 2 MiB of frames each.
func TestH2FloodProperty(t *testing.T) {
	if inOwnProcess(t) {
		return // ran in a process of its own
	}
	rng := rand.New(rand.NewPCG(23, 7))
	for i := 0; i < 8; i++ {
		data := make([]byte, 2*(1+rng.IntN(6)))
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		frames := h2FloodProgram(data, 2<<20)
		compat := i%2 == 1
		grown := h2FloodRun(t, frames, compat)
		t.Logf("program %x (compat %v): %d bytes of frames; live heap grew %d KiB", data, compat, len(frames), grown>>10)
		if grown > h2FloodConnHeap {
			t.Errorf("program %x (compat %v): %d bytes of frames grew the live heap by %d KiB (bound %d KiB)",
				data, compat, len(frames), grown>>10, h2FloodConnHeap>>10)
		}
	}
}
