package h3srv

import (
	"context"
	"io"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/riptide-http/riptide/h3"
	"github.com/riptide-http/riptide/internal/quicxtest"
)

// peer is a test client on an in-memory connection to an engine.
type peer struct {
	t      *testing.T
	srv    *quicxtest.Conn
	cli    *quicxtest.Conn
	engine *Conn
	served chan error
}

// start serves h on a new in-memory connection. Unless noControl, the
// client opens its control stream with SETTINGS.
func start(t *testing.T, o quicxtest.Options, cfg *Config, h Handler, noControl bool) *peer {
	t.Helper()
	srv, cli := quicxtest.Pair(o)
	p := &peer{t: t, srv: srv, cli: cli, engine: NewConn(srv, cfg, h), served: make(chan error, 1)}
	go func() { p.served <- p.engine.Serve() }()
	if !noControl {
		p.uni(append(h3.AppendVarint(nil, 0), h3.AppendSettings(nil, &h3.Settings{})...), false)
	}
	t.Cleanup(func() {
		cli.CloseWithError(0, "test over")
		<-p.served
	})
	return p
}

// uni opens a unidirectional stream and writes b, with a FIN if fin.
func (p *peer) uni(b []byte, fin bool) *quicxtest.Stream {
	p.t.Helper()
	s, err := p.cli.OpenUni()
	if err != nil {
		p.t.Fatal(err)
	}
	if _, err := s.Write(b); err != nil {
		p.t.Fatal(err)
	}
	if fin {
		s.Close()
	}
	return s
}

// headers encodes a HEADERS frame.
func headers(fields ...string) []byte {
	sec := h3.AppendFieldSectionPrefix(nil)
	for i := 0; i+1 < len(fields); i += 2 {
		sec = h3.AppendField(sec, fields[i], fields[i+1], i%4 == 0)
	}
	return append(h3.AppendFrameHeader(nil, h3.FrameHeaders, uint64(len(sec))), sec...)
}

// data encodes a DATA frame.
func data(p []byte) []byte {
	return append(h3.AppendFrameHeader(nil, h3.FrameData, uint64(len(p))), p...)
}

// reqHead is a request's pseudo-header fields and then extra ones.
func reqHead(method, path string, extra ...string) []byte {
	return headers(append([]string{":method", method, ":scheme", "https", ":authority", "example.com", ":path", path}, extra...)...)
}

// open opens a request stream and writes b, with a FIN if fin.
func (p *peer) open(b []byte, fin bool) *quicxtest.Stream {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := p.cli.OpenStreamSync(ctx)
	if err != nil {
		p.t.Fatal(err)
	}
	if len(b) > 0 {
		if _, err := s.Write(b); err != nil {
			p.t.Fatal(err)
		}
	}
	if fin {
		s.Close()
	}
	return s
}

// response is a response as the client read it.
type response struct {
	interim  []int
	status   int
	fields   map[string]string
	body     []byte
	frames   int // DATA frames
	trailers map[string]string
	err      error // the stream's read error other than EOF
}

// readResponse reads a response to the stream's end.
func readResponse(t *testing.T, s io.Reader) *response {
	t.Helper()
	b, err := io.ReadAll(s)
	r := &response{err: err}
	for len(b) > 0 {
		h, k, err := h3.ParseFrameHeader(b)
		if err != nil || uint64(len(b)-k) < h.Length {
			t.Fatalf("truncated frame in response: % x", b)
		}
		payload := b[k : k+int(h.Length)]
		b = b[k+int(h.Length):]
		switch h.Type {
		case h3.FrameHeaders:
			fs, _, err := h3.DecodeFieldSection(nil, make([]byte, 0, 64<<10), payload, 64<<10)
			if err != nil {
				t.Fatal(err)
			}
			m := map[string]string{}
			for _, f := range fs {
				m[string(f.Name)] = string(f.Value)
			}
			switch {
			case m[":status"] == "":
				r.trailers = m
			default:
				st, _ := strconv.Atoi(m[":status"])
				if st < 200 {
					r.interim = append(r.interim, st)
					continue
				}
				r.status, r.fields = st, m
			}
		case h3.FrameData:
			r.body = append(r.body, payload...)
			r.frames++
		default:
			t.Fatalf("frame type %#x in a response", h.Type)
		}
	}
	return r
}

// waitClosed waits for the connection to be closed and returns its code
// as the client sees it.
func (p *peer) waitClosed() h3.ErrorCode {
	p.t.Helper()
	select {
	case <-p.cli.Context().Done():
	case <-time.After(10 * time.Second):
		p.t.Fatal("connection not closed")
	}
	return h3.ErrorCode(p.cli.CloseCode().Code)
}

// waitStopped waits until the server stopped reading s (STOP_SENDING) or
// reset it, and returns the codes.
func waitStopped(t *testing.T, s *quicxtest.Stream) (reset, stop uint64, hasReset, hasStop bool) {
	t.Helper()
	for range 1000 {
		reset, stop, hasReset, hasStop = s.ResetCode()
		if hasReset || hasStop {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("stream neither reset nor stopped")
	return
}

// waitReset waits (bounded) until the server reset s's sending side and
// returns the code. The server's STOP_SENDING and RESET_STREAM are two
// events, seen in either order: waiting for either one, as waitStopped
// does, can return before the reset arrives.
func waitReset(t *testing.T, s *quicxtest.Stream) uint64 {
	t.Helper()
	for range 1000 {
		if reset, _, hasReset, _ := s.ResetCode(); hasReset {
			return reset
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("stream not reset")
	return 0
}

// baseline records the goroutines and live heap before a test; check
// waits (bounded) for them to come back.
type baseline struct {
	goroutines int
	heap       uint64
}

func takeBaseline() baseline {
	return baseline{goroutines: runtime.NumGoroutine(), heap: quicxtest.LiveHeap()}
}

// check waits for goroutines to return to the baseline and the live heap
// to within slack of it.
func (b baseline) check(t *testing.T, slack uint64) {
	t.Helper()
	var g int
	var h uint64
	for range 500 {
		g, h = runtime.NumGoroutine(), quicxtest.LiveHeap()
		if g <= b.goroutines && h <= b.heap+slack {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	buf := make([]byte, 1<<20)
	t.Fatalf("goroutines %d (baseline %d), live heap %d (baseline %d + %d)\n%s", g, b.goroutines, h, b.heap, slack, buf[:runtime.Stack(buf, true)])
}

// closeAndCheck closes the connection, waits for Serve to return and
// checks that goroutines and the live heap are back to base.
func (p *peer) closeAndCheck(base baseline) {
	p.t.Helper()
	p.cli.CloseWithError(0, "")
	<-p.served
	p.served <- nil
	base.check(p.t, 1<<20)
}
