package riptide

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/riptide-http/riptide/internal/israce"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// TestH2Allocs measures the server's allocations per HTTP/2 request over a
// real h2c connection, for both doors. As in TestZeroAllocs the client does
// not allocate (prebuilt frames, a fixed read buffer, frame headers parsed
// by hand), so every allocation counted in the process is the server's. The
// request is what a real client sends after its first: every field an index
// into the HPACK dynamic table.
//
// Measured (go test -run TestH2Allocs -v): see the log lines. The
// project's targets: native ≤ 2 (0 measured; the bound leaves room for a
// stray runtime allocation in the exact count), compat 6 (TestCompatAllocs
// holds it to 6 with AllocsPerRun; here the exact count gets half an
// allocation of room for the same reason) (net/http's HTTP/2: 34).
func TestH2Allocs(t *testing.T) {
	if testing.Short() || israce.Enabled {
		t.Skip("allocation counts need a build without -race")
	}
	native := HandlerFunc(func(c *Ctx) {
		c.SetHeader("Content-Type", "text/plain")
		c.WriteString("Hello, World!")
	})
	compat := FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "Hello, World!")
	}))
	for _, tc := range []struct {
		name   string
		h      Handler
		max    float64
		inline bool // HTTP2Config.InlineHandlers
	}{
		{"native", native, 2, false},
		{"compat", compat, 6.5, false},
		{"native-inline", native, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ac := startH2AllocServer(t, &Server{Handler: tc.h, HTTP2: &HTTP2Config{H2C: true, InlineHandlers: tc.inline}})
			allocs := testing.AllocsPerRun(2000, ac.roundTrip)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			const n = 2000
			for range n {
				ac.roundTrip()
			}
			runtime.ReadMemStats(&after)
			exact := float64(after.Mallocs-before.Mallocs) / n
			t.Logf("%s: AllocsPerRun %v; %.2f mallocs per request over %d requests", tc.name, allocs, exact, n)
			if exact > tc.max {
				t.Errorf("%s: %.2f allocations per request, want at most %v", tc.name, exact, tc.max)
			}
		})
	}
}

// startH2AllocServer serves srv (with h2c on) on a loopback port for the
// test's life and returns a client of it that has made 100 requests, to
// warm up pools, workers and the HPACK tables.
func startH2AllocServer(t testing.TB, srv *Server) *h2AllocClient {
	ac := newH2AllocClient(t, serveTest(t, srv, testServeOptions{}).Addr)
	for range 100 {
		ac.roundTrip()
	}
	return ac
}

// h2AllocClient is an HTTP/2 client that allocates nothing per request.
type h2AllocClient struct {
	t    testing.TB
	c    net.Conn
	req  []byte // a HEADERS frame; the stream ID is patched in
	buf  []byte
	r, w int
	id   uint32
}

func newH2AllocClient(t testing.TB, addr string) *h2AllocClient {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ac := &h2AllocClient{t: t, c: c, buf: make([]byte, 64<<10), id: 1}
	var pre bytes.Buffer
	pre.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(&pre, nil)
	fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 30})
	fr.WriteWindowUpdate(0, 1<<30)
	// The first request indexes its fields; every later one refers to
	// them, as real clients do.
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	fields := []hpack.HeaderField{
		{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "http"},
		{Name: ":authority", Value: "localhost"}, {Name: ":path", Value: "/plaintext"},
		{Name: "user-agent", Value: "alloc-client"}, {Name: "accept", Value: "*/*"},
	}
	for _, f := range fields {
		enc.WriteField(f)
	}
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block.Bytes(), EndStream: true, EndHeaders: true})
	if _, err := c.Write(pre.Bytes()); err != nil {
		t.Fatal(err)
	}
	ac.wait()
	block.Reset()
	for _, f := range fields {
		enc.WriteField(f)
	}
	var req bytes.Buffer
	http2.NewFramer(&req, nil).WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block.Bytes(), EndStream: true, EndHeaders: true})
	ac.req = req.Bytes()
	return ac
}

// roundTrip sends one request and reads frames until its stream ends.
func (ac *h2AllocClient) roundTrip() {
	ac.id += 2
	id := ac.id
	ac.req[5], ac.req[6], ac.req[7], ac.req[8] = byte(id>>24), byte(id>>16), byte(id>>8), byte(id)
	if _, err := ac.c.Write(ac.req); err != nil {
		ac.t.Fatal(err)
	}
	ac.wait()
}

// wait reads frames until one of stream ac.id carries END_STREAM.
func (ac *h2AllocClient) wait() {
	_ = ac.c.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		for ac.w-ac.r >= 9 {
			h := ac.buf[ac.r:]
			length := int(h[0])<<16 | int(h[1])<<8 | int(h[2])
			if ac.w-ac.r < 9+length {
				break
			}
			typ, flags := http2.FrameType(h[3]), http2.Flags(h[4])
			sid := uint32(h[5]&0x7f)<<24 | uint32(h[6])<<16 | uint32(h[7])<<8 | uint32(h[8])
			ac.r += 9 + length
			if sid == ac.id && (typ == http2.FrameHeaders || typ == http2.FrameData) && flags&http2.FlagDataEndStream != 0 {
				return
			}
			if sid == ac.id && typ == http2.FrameRSTStream {
				ac.t.Fatal("stream reset")
			}
		}
		if ac.r > 0 {
			ac.w = copy(ac.buf, ac.buf[ac.r:ac.w])
			ac.r = 0
		}
		n, err := ac.c.Read(ac.buf[ac.w:])
		if err != nil {
			ac.t.Fatal(err)
		}
		ac.w += n
	}
}
