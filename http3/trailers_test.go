package http3

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	qhttp3 "github.com/quic-go/quic-go/http3"
	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/h3"
)

// got is what a handler of TestContentLengthZeroTrailers read.
type got struct {
	noBody bool // the compat door's Request.Body was http.NoBody
	body   int
	value  string
}

// TestContentLengthZeroTrailers: a request declaring content-length 0 and
// followed by trailers (an empty body, then a trailer section) gets a body
// that reads empty and then the trailers' values, through both doors: the
// compat door's Request.Body is not http.NoBody and Request.Trailer holds
// the value, the native door's Ctx.Trailers has the field; as quic-go's
// server (run here as the reference, with the compat handler) and
// riptide's HTTP/2 deliver them. The trailers come in the same
// write as the head, after it (likely read by then), or after an empty
// DATA frame. Before, the body was NoBody and the value lost
// (Request.Trailer held the declared name with no value).
func TestContentLengthZeroTrailers(t *testing.T) {
	compat := func(ch chan<- got) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			ch <- got{r.Body == http.NoBody, len(b), r.Trailer.Get("X-Checksum")}
		})
	}
	for _, target := range []string{"native", "compat", "quic-go"} {
		t.Run(target, func(t *testing.T) {
			ch := make(chan got, 1)
			var addr string
			switch target {
			case "native":
				addr, _ = startServe(t, &riptide.Server{Handler: riptide.HandlerFunc(func(x *riptide.Ctx) {
					b, _ := io.ReadAll(x.Body())
					g := got{body: len(b)}
					for _, f := range x.Trailers() {
						if string(f.Name) == "x-checksum" {
							g.value = string(f.Value)
						}
					}
					ch <- g
				})}, nil)
			case "compat":
				addr, _ = startServe(t, &riptide.Server{Handler: riptide.FromHTTP(compat(ch))}, nil)
			default: // the reference
				addr = startQuicGo(t, compat(ch))
			}
			checkCL0Trailers(t, addr, ch)
		})
	}
}

// checkCL0Trailers sends addr's server requests of content-length 0 with
// trailers, and checks what the handler reported on ch.
func checkCL0Trailers(t *testing.T, addr string, ch <-chan got) {
	qc := dialH3(t, addr, false)
	head := func() []byte {
		fs := [][2]string{{":method", "POST"}, {":scheme", "https"}, {":authority", "localhost"}, {":path", "/"}, {"content-length", "0"}, {"trailer", "x-checksum"}}
		sec := h3.AppendFieldSectionPrefix(nil)
		for _, f := range fs {
			sec = h3.AppendField(sec, f[0], f[1], false)
		}
		return append(h3.AppendFrameHeader(nil, h3.FrameHeaders, uint64(len(sec))), sec...)
	}
	sec := h3.AppendField(h3.AppendFieldSectionPrefix(nil), "x-checksum", "abc123", false)
	trailers := append(h3.AppendFrameHeader(nil, h3.FrameHeaders, uint64(len(sec))), sec...)
	for _, tc := range []struct {
		name  string
		parts [][]byte
		want  got
	}{
		{"trailers with the head", [][]byte{append(head(), trailers...)}, got{value: "abc123"}},
		{"trailers after the head", [][]byte{head(), trailers}, got{value: "abc123"}},
		{"empty DATA and trailers", [][]byte{append(append(head(), h3.AppendFrameHeader(nil, h3.FrameData, 0)...), trailers...)}, got{value: "abc123"}},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		s, err := qc.OpenStreamSync(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range tc.parts {
			if i > 0 {
				time.Sleep(20 * time.Millisecond) // the head is read first
			}
			if _, err := s.Write(p); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		var g got
		select {
		case g = <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: handler did not run", tc.name)
		}
		io.ReadAll(s)
		if g != tc.want {
			t.Errorf("%s: body NoBody %v, %d bytes, trailer %q; want NoBody %v, 0 bytes, trailer %q", tc.name, g.noBody, g.body, g.value, tc.want.noBody, tc.want.value)
		}
	}
}

// startQuicGo serves h with quic-go's HTTP/3 server (the reference) on a
// loopback UDP socket until the test ends and returns its address.
func startQuicGo(t *testing.T, h http.Handler) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	qs := &qhttp3.Server{Handler: h, TLSConfig: testTLS(t)}
	go qs.Serve(pc)
	t.Cleanup(func() { qs.Close(); pc.Close() })
	return pc.LocalAddr().String()
}
