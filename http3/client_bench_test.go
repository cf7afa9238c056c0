package http3

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"testing"
	"time"

	qhttp3 "github.com/quic-go/quic-go/http3"
	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/client"
)

// BenchmarkClientH3 makes GET round trips to riptide's HTTP/3 server
// (native door, a 13-byte hello) over one QUIC connection: riptide's
// client through its native API (Do) and through RoundTrip, and quic-go's
// http3.Transport, each sequentially and with RunParallel's goroutines
// sharing the connection. It reports round trips per second (req/s) and
// allocations per request (client and server: they share the process).
//
//	cd http3 && go test -run '^$' -bench BenchmarkClientH3 -benchtime 3s .
func BenchmarkClientH3(b *testing.B) {
	srv := &riptide.Server{Handler: riptide.HandlerFunc(func(x *riptide.Ctx) {
		x.SetContentType("text/plain")
		x.Write(hello)
	})}
	addr, _ := startServe(b, srv, nil)
	url := "https://" + addr + "/hello"
	conf := &tls.Config{InsecureSkipVerify: true}

	native := func() func(pb func() bool) {
		tr := &Transport{TLSConfig: conf}
		b.Cleanup(func() { tr.Close() })
		c := NewClient(tr)
		return func(more func() bool) {
			var req client.Request
			var resp client.Response
			req.SetURL(url)
			for more() {
				if err := c.Do(context.Background(), &req, &resp); err != nil || resp.StatusCode() != 200 {
					b.Error(err)
					return
				}
			}
		}
	}
	roundTrip := func(rt http.RoundTripper) func(more func() bool) {
		return func(more func() bool) {
			req, _ := http.NewRequest("GET", url, nil)
			buf := make([]byte, 64)
			for more() {
				resp, err := rt.RoundTrip(req)
				if err != nil {
					b.Error(err)
					return
				}
				for {
					if _, err := resp.Body.Read(buf); err == io.EOF {
						break
					} else if err != nil {
						b.Error(err)
						return
					}
				}
				resp.Body.Close()
			}
		}
	}
	riptideRT := func() func(more func() bool) {
		tr := &Transport{TLSConfig: conf}
		b.Cleanup(func() { tr.Close() })
		return roundTrip(NewClient(tr))
	}
	quicgo := func() func(more func() bool) {
		tr := &qhttp3.Transport{TLSClientConfig: conf}
		b.Cleanup(func() { tr.Close() })
		return roundTrip(tr)
	}
	for _, tc := range []struct {
		name string
		make func() func(more func() bool)
	}{{"riptide-Do", native}, {"riptide-RoundTrip", riptideRT}, {"quicgo-Transport", quicgo}} {
		b.Run(tc.name+"/sequential", func(b *testing.B) {
			run := tc.make()
			b.ReportAllocs()
			start := time.Now()
			run(b.Loop)
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
		})
		b.Run(tc.name+"/parallel", func(b *testing.B) {
			run := tc.make()
			b.ReportAllocs()
			b.SetParallelism(8)
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) { run(pb.Next) })
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
		})
	}
}
