package compress

import (
	"io"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
)

// TestMaxEncodersBoundsStalledResponses: the memory compressed responses
// that do not end (a client that stopped reading, a handler that waits)
// can pin is bounded across the middleware, not only in time: with
// MaxEncoders 2, of 16 such responses at once 2 are compressed and hold
// an encoder, the other 14 go out uncompressed (identity, Vary still set);
// the heap they hold stays under a bound 16 zstd encoders (~2.6 MiB each)
// would break, and once they end the slots are free again. Over HTTP/1.1
// and h2c.
func TestMaxEncodersBoundsStalledResponses(t *testing.T) {
	const (
		n       = 16
		max     = 2
		maxHeap = 16 << 20 // 16 encoders: ~41 MiB; 2: ~5 MiB
	)
	for _, proto := range protocols {
		t.Run(proto.name, func(t *testing.T) {
			m := newMiddleware(Config{MaxEncoders: max, Encodings: []Encoding{Zstd}})
			hold := make(chan struct{})
			body := jsonBody(4 << 10)
			next := riptide.HandlerFunc(func(c *riptide.Ctx) {
				c.SetContentType("application/json")
				c.Write(body)
				c.Flush() // the head goes out, with or without an encoder
				<-hold
			})
			addr := serve(t, riptide.HandlerFunc(func(c *riptide.Ctx) { m.serve(c, next) }))
			cl := client(proto.h2)
			t.Cleanup(cl.CloseIdleConnections)

			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			resps := make(chan *http.Response, n)
			for range n {
				go func() {
					req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
					req.Header.Set("Accept-Encoding", "zstd")
					resp, err := cl.Do(req)
					if err != nil {
						t.Error(err)
					}
					resps <- resp
				}()
			}
			compressed := 0
			var got []*http.Response
			for range n {
				resp := <-resps
				if resp == nil {
					continue
				}
				got = append(got, resp)
				switch ce := resp.Header.Get("Content-Encoding"); ce {
				case "zstd":
					compressed++
				case "":
				default:
					t.Errorf("Content-Encoding %q", ce)
				}
				if resp.Header.Get("Vary") != "Accept-Encoding" {
					t.Errorf("Vary %q, want Accept-Encoding", resp.Header.Get("Vary"))
				}
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			held := m.held.Load()
			grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
			close(hold)
			for _, resp := range got {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			if compressed != max || held != max {
				t.Errorf("%d of %d responses compressed, %d encoders held; want %d and %d", compressed, n, held, max, max)
			}
			if grown > maxHeap {
				t.Errorf("%d responses in progress hold %d KiB of heap, want at most %d KiB", n, grown>>10, maxHeap>>10)
			}
			t.Logf("%d responses in progress: %d compressed, heap +%d KiB", n, compressed, grown>>10)
			// Ended responses give their slots back (each as its handler
			// returns, which may come after the client read the end):
			// the next is compressed.
			for deadline := time.Now().Add(10 * time.Second); m.held.Load() != 0; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%d encoders still held 10s after every response ended", m.held.Load())
				}
			}
			resp := get(t, proto.h2, addr, "zstd")
			if ce := resp.Header.Get("Content-Encoding"); ce != "zstd" {
				t.Errorf("after the slots came back: Content-Encoding %q, want zstd", ce)
			}
		})
	}
}
