package riptide_test

import (
	"bytes"
	"crypto/tls"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// TestH2InlineHandlers checks HTTP2Config.InlineHandlers over h2c and TLS
// with a client whose stream window is tiny (1000 bytes): a bodiless
// request's handler runs on the connection's reading goroutine, a request
// with a body on a worker; an inline handler whose response outgrows the
// window reads the connection's WINDOW_UPDATEs itself until it is done,
// and a stream opened meanwhile is served after it; a panicking inline
// handler gets a 500 and the connection goes on. (Every other HTTP/2
// test, h2spec included, also runs against the "riptide-inline" target.)
func TestH2InlineHandlers(t *testing.T) {
	const bigSize = 200_000
	h := riptide.HandlerFunc(func(c *riptide.Ctx) {
		buf := make([]byte, 64<<10)
		stack := string(buf[:runtime.Stack(buf, false)])
		where := "worker"
		if strings.Contains(stack, "readLoop") {
			where = "inline"
		}
		if string(c.Path()) == "/panic" {
			panic("inline handler panics") // recovered: 500, the connection goes on
		}
		c.SetHeader("X-Where", where)
		_, _ = c.ReadBody()
		if string(c.Path()) == "/big" {
			_, _ = c.Write(bytes.Repeat([]byte("b"), bigSize))
			return
		}
		_, _ = c.WriteString("ok")
	})
	for _, useTLS := range []bool{false, true} {
		t.Run(map[bool]string{false: "h2c", true: "tls"}[useTLS], func(t *testing.T) {
			target := h2Target{name: "inline", serve: func(t testing.TB, tc *tls.Config, _ *h2App) string {
				return serveRiptideConfig(t, tc, h, h2Inline)
			}}
			in := startH2(t, target, useTLS)
			c := h2Dial(t, in, 0)
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(30 * time.Second))
			if _, err := c.Write([]byte(http2.ClientPreface)); err != nil {
				t.Fatal(err)
			}
			fr := http2.NewFramer(c, c)
			fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1000})
			var hb bytes.Buffer
			enc := hpack.NewEncoder(&hb)
			headers := func(id uint32, method, path string, end bool) {
				hb.Reset()
				for _, f := range [][2]string{{":method", method}, {":scheme", map[bool]string{false: "http", true: "https"}[useTLS]},
					{":authority", in.addr}, {":path", path}} {
					enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
				}
				if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb.Bytes(), EndStream: end, EndHeaders: true}); err != nil {
					t.Fatal(err)
				}
			}
			headers(1, "GET", "/big", true)
			headers(3, "GET", "/small", true)
			headers(5, "POST", "/small", false)
			fr.WriteData(5, true, []byte("request body"))
			headers(7, "GET", "/panic", true)
			headers(9, "GET", "/small", true)

			where := map[uint32]string{}
			status := map[uint32]string{}
			bodies := map[uint32]int{}
			var ended []uint32
			dec := hpack.NewDecoder(4096, nil)
			for len(ended) < 5 {
				f, err := fr.ReadFrame()
				if err != nil {
					t.Fatalf("after %v ended (%v bytes): %v", ended, bodies, err)
				}
				switch f := f.(type) {
				case *http2.HeadersFrame:
					fields, err := dec.DecodeFull(f.HeaderBlockFragment())
					if err != nil {
						t.Fatal(err)
					}
					for _, hf := range fields {
						switch hf.Name {
						case "x-where":
							where[f.StreamID] = hf.Value
						case ":status":
							status[f.StreamID] = hf.Value
						}
					}
					if f.StreamEnded() {
						ended = append(ended, f.StreamID)
					}
				case *http2.DataFrame:
					n := len(f.Data())
					bodies[f.StreamID] += n
					if n > 0 { // grant back what was read, as a client does
						fr.WriteWindowUpdate(0, uint32(n))
						if !f.StreamEnded() {
							fr.WriteWindowUpdate(f.StreamID, uint32(n))
						}
					}
					if f.StreamEnded() {
						ended = append(ended, f.StreamID)
					}
				case *http2.RSTStreamFrame:
					t.Fatalf("stream %d reset: %v", f.StreamID, f.ErrCode)
				case *http2.GoAwayFrame:
					t.Fatalf("GOAWAY %v", f.ErrCode)
				}
			}
			if where[1] != "inline" || where[3] != "inline" || where[5] != "worker" {
				t.Errorf("handlers ran: GET /big %q, GET /small %q, POST /small %q; want inline, inline, worker", where[1], where[3], where[5])
			}
			if status[7] != "500" || where[9] != "inline" || bodies[9] != 2 {
				t.Errorf("after a panicking inline handler: status %q; next stream ran %q with %d bytes; want 500, then inline with 2", status[7], where[9], bodies[9])
			}
			if bodies[1] != bigSize || bodies[3] != 2 || bodies[5] != 2 {
				t.Errorf("body bytes per stream %v, want 1:%d 3:2 5:2", bodies, bigSize)
			}
			// Stream 3 arrived while /big waited for window: it runs
			// inline after /big's handler returns, so it ends after it.
			if i1, i3 := indexOf(ended, 1), indexOf(ended, 3); i1 < 0 || i3 < i1 {
				t.Errorf("streams ended in order %v; want 1 before 3", ended)
			}
		})
	}
}

func indexOf(s []uint32, v uint32) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}
