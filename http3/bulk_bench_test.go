package http3

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"

	qhttp3 "github.com/quic-go/quic-go/http3"
	"github.com/riptide-http/riptide"
)

// BenchmarkServeBulk downloads a 16 MiB body over loopback QUIC (quic-go's
// client, one connection) from the native door, the compat door and
// quic-go's http3.Server, the body written in one slice (as the harness's
// h3bulk route) or in 32 KiB pieces (as io.Copy from a file), with a
// Content-Length.
func BenchmarkServeBulk(b *testing.B) {
	body := make([]byte, 16<<20)
	for i := range body {
		body[i] = byte(i * 7)
	}
	clen := strconv.Itoa(len(body))
	std := func(piece int) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Length", clen)
			for p := body; len(p) > 0; p = p[min(piece, len(p)):] {
				w.Write(p[:min(piece, len(p))])
			}
		})
	}
	native := func(piece int) riptide.Handler {
		return riptide.HandlerFunc(func(c *riptide.Ctx) {
			c.SetContentType("application/octet-stream")
			c.SetContentLength(int64(len(body)))
			for p := body; len(p) > 0; p = p[min(piece, len(p)):] {
				c.Write(p[:min(piece, len(p))])
			}
		})
	}
	for _, piece := range []int{len(body), 32 << 10} {
		pieceName := "one"
		if piece < len(body) {
			pieceName = "32KiB"
		}
		for _, server := range []string{"native", "compat", "quicgo"} {
			b.Run(server+"/"+pieceName, func(b *testing.B) {
				var addr string
				switch server {
				case "native", "compat":
					srv := &riptide.Server{Handler: native(piece)}
					if server == "compat" {
						srv.Handler = riptide.FromHTTP(std(piece))
					}
					addr, _ = startServe(b, srv, nil)
				case "quicgo":
					pc, err := net.ListenPacket("udp", "127.0.0.1:0")
					if err != nil {
						b.Fatal(err)
					}
					qs := &qhttp3.Server{Handler: std(piece), TLSConfig: testTLS(b)}
					go qs.Serve(pc)
					b.Cleanup(func() { qs.Close(); pc.Close() })
					addr = pc.LocalAddr().String()
				}
				c := h3Client(b)
				get := func() {
					resp, err := c.Get("https://" + addr + "/")
					if err != nil {
						b.Fatal(err)
					}
					n, err := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err != nil || n != int64(len(body)) {
						b.Fatalf("read %d bytes, %v", n, err)
					}
				}
				get() // the connection's handshake, outside the timing
				b.SetBytes(int64(len(body)))
				b.ResetTimer()
				for range b.N {
					get()
				}
			})
		}
	}
}
