package http3

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/h3"
)

// TestContentLengthZeroTrailers: a request declaring content-length 0 and
// followed by trailers (an empty body, then a trailer section) gets a body
// that reads empty and then the trailers' values, through both doors: the
// compat door's Request.Body is not http.NoBody and Request.Trailer holds
// the value, the native door's Ctx.Trailers has the field; as quic-go's
// server and riptide's HTTP/2 deliver them. The trailers come in the same
// write as the head, after it (likely read by then), or after an empty
// DATA frame. Before, the body was NoBody and the value lost
// (Request.Trailer held the declared name with no value).
func TestContentLengthZeroTrailers(t *testing.T) {
	type got struct {
		noBody bool // the compat door's Request.Body was http.NoBody
		body   int
		value  string
	}
	forDoors(t, func(t *testing.T, d door) {
		ch := make(chan got, 1)
		srv := &riptide.Server{}
		if d == doorCompat {
			srv.Handler = riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				ch <- got{r.Body == http.NoBody, len(b), r.Trailer.Get("X-Checksum")}
			}))
		} else {
			srv.Handler = riptide.HandlerFunc(func(x *riptide.Ctx) {
				b, _ := io.ReadAll(x.Body())
				g := got{body: len(b)}
				for _, f := range x.Trailers() {
					if string(f.Name) == "x-checksum" {
						g.value = string(f.Value)
					}
				}
				ch <- g
			})
		}
		addr, _ := startServe(t, srv, nil)
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
	})
}
