package riptide

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// FuzzH2Conn feeds random bytes after the client preface to a live HTTP/2
// connection in memory (net.Pipe), for both doors, with the client reading
// whatever the server sends. The connection must end, by itself or when the
// client hangs up, with every handler returned: no panic, no leak, no
// deadlock. Seeds are well-formed frame sequences (testdata/fuzz keeps
// what the fuzzer finds).
func FuzzH2Conn(f *testing.F) {
	for _, seed := range h2FuzzSeeds() {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	native := HandlerFunc(func(c *Ctx) {
		b, _ := c.ReadBody()
		c.SetTrailer("X-T", "1")
		c.Write(b)
	})
	compat := FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-T")
		io.Copy(w, r.Body)
		w.Header().Set("X-T", "1")
	}))
	f.Fuzz(func(t *testing.T, data []byte, useCompat bool) {
		h := Handler(native)
		if useCompat {
			h = compat
		}
		srv := &Server{Handler: h, HTTP2: &HTTP2Config{H2C: true}, ReadHeaderTimeout: 5 * time.Second}
		srv.init()
		cs, ss := net.Pipe()
		c := newConn(srv, ss)
		srv.trackConn(c, true)
		done := make(chan struct{})
		go func() { c.serve(); close(done) }()
		go io.Copy(io.Discard, cs)
		cs.SetWriteDeadline(time.Now().Add(2 * time.Second))
		cs.Write([]byte(http2.ClientPreface))
		cs.Write(data)
		time.Sleep(time.Millisecond)
		cs.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the connection did not end after the client hung up")
		}
		srv.connsDone.Wait()
	})
}

// h2FuzzSeeds returns frame sequences that open streams, send bodies,
// trailers, settings, pings, window updates and resets.
func h2FuzzSeeds() [][]byte {
	var seeds [][]byte
	block := func(path string, extra ...hpack.HeaderField) []byte {
		var b bytes.Buffer
		enc := hpack.NewEncoder(&b)
		for _, f := range append([]hpack.HeaderField{
			{Name: ":method", Value: "POST"}, {Name: ":scheme", Value: "http"},
			{Name: ":authority", Value: "x"}, {Name: ":path", Value: path},
		}, extra...) {
			enc.WriteField(f)
		}
		return b.Bytes()
	}
	build := func(fn func(fr *http2.Framer)) []byte {
		var b bytes.Buffer
		fr := http2.NewFramer(&b, nil)
		fr.WriteSettings()
		fn(fr)
		return b.Bytes()
	}
	seeds = append(seeds, build(func(fr *http2.Framer) {
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block("/"), EndHeaders: true})
		fr.WriteData(1, false, []byte("hello"))
		var t bytes.Buffer
		hpack.NewEncoder(&t).WriteField(hpack.HeaderField{Name: "x-sum", Value: "1"})
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: t.Bytes(), EndStream: true, EndHeaders: true})
	}))
	seeds = append(seeds, build(func(fr *http2.Framer) {
		fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1})
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block("/", hpack.HeaderField{Name: "content-length", Value: "3"}), EndHeaders: true})
		fr.WritePing(false, [8]byte{1})
		fr.WriteData(1, true, []byte("abc"))
		fr.WriteWindowUpdate(1, 100)
		fr.WriteWindowUpdate(0, 100)
		fr.WriteRSTStream(1, http2.ErrCodeCancel)
	}))
	seeds = append(seeds, build(func(fr *http2.Framer) {
		b := block("/")
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: b[:3]})
		fr.WriteContinuation(3, true, b[3:])
		fr.WritePriority(3, http2.PriorityParam{StreamDep: 1, Weight: 5})
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 5, BlockFragment: b, EndStream: true, EndHeaders: true})
		fr.WriteGoAway(5, http2.ErrCodeNo, nil)
	}))
	return seeds
}
