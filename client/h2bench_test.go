package client_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/riptide-http/riptide/client"
)

// BenchmarkH2ConcurrentGET: concurrent GETs over one HTTP/2 (h2c)
// connection to riptide's server in the same process, riptide's native API
// and net/http's Transport side by side. In-process and on a shared
// machine the numbers are indicative only; the comparison wants
// the server in its own process (bench/).
func BenchmarkH2ConcurrentGET(b *testing.B) {
	addr := h2cHello(b)
	url := "http://" + addr + "/plaintext"
	b.Run("riptide", func(b *testing.B) {
		c := &client.Client{H2CHosts: []string{addr}}
		defer c.CloseIdleConnections()
		b.ReportAllocs()
		b.SetParallelism(32) // 64 streams in flight on 2 CPUs
		b.RunParallel(func(pb *testing.PB) {
			var req client.Request
			var resp client.Response
			req.SetURL(url)
			for pb.Next() {
				if err := c.Do(context.Background(), &req, &resp); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("net-http", func(b *testing.B) {
		tr := &http.Transport{Protocols: new(http.Protocols)}
		tr.Protocols.SetUnencryptedHTTP2(true)
		defer tr.CloseIdleConnections()
		b.ReportAllocs()
		b.SetParallelism(32) // 64 streams in flight on 2 CPUs
		b.RunParallel(func(pb *testing.PB) {
			req, _ := http.NewRequest("GET", url, nil)
			for pb.Next() {
				resp, err := tr.RoundTrip(req)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	})
}
