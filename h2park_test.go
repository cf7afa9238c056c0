package riptide_test

import (
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"golang.org/x/net/http2"
)

// BenchmarkH2Engines compares h2c throughput on the event loop, where an
// idle connection parks between bursts (internal/h2's park.go), with the
// goroutine engine, where it keeps its goroutines: the same native server
// on each, measured in interleaved rounds (the order rotating), the
// in-process Go client the same for all. "serial" is one request at a
// time on one connection, so that every request finds the connection
// parked and resumes it: parking's worst case; "parallel" is 16 client
// goroutines sharing one connection. A third server runs on the event
// loop with a 100 ms park delay (h2ParkDelay), under which a busy
// connection does not park. It reports each server's median requests per
// second and the ratios to the goroutine engine.
//
//	go test -run '^$' -bench BenchmarkH2Engines -benchtime 1x
func BenchmarkH2Engines(b *testing.B) {
	const rounds, perRound = 7, 2000
	for _, mode := range []struct {
		name    string
		clients int
	}{{"serial", 1}, {"parallel", 16}} {
		b.Run(mode.name, func(b *testing.B) {
			engines := []riptide.Engine{riptide.EngineEventLoop, riptide.EngineGoroutine, riptide.EngineEventLoop}
			urls := make([]string, len(engines))
			clients := make([]*http.Client, len(engines))
			for i, e := range engines {
				srv := &riptide.Server{Engine: e, HTTP2: &riptide.HTTP2Config{H2C: true},
					Handler: riptide.HandlerFunc(func(c *riptide.Ctx) { c.WriteString("Hello, World!") })}
				if i == 2 {
					srv.SetH2ParkDelay(100 * time.Millisecond)
				}
				in := &h2Instance{addr: riptide.ServeTest(b, srv, riptide.TestServeOptions{}).Addr}
				urls[i], clients[i] = in.url("/"), h2Client(b, in)
			}
			get := func(i int) {
				resp, err := clients[i].Get(urls[i])
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			run := func(i int) float64 {
				start := time.Now()
				var wg sync.WaitGroup
				for range mode.clients {
					wg.Go(func() {
						for range perRound / mode.clients {
							get(i)
						}
					})
				}
				wg.Wait()
				return float64(perRound) / time.Since(start).Seconds()
			}
			for i := range engines {
				run(i) // warm up: connection, pools, workers
			}
			rates := make([][]float64, len(engines))
			for b.Loop() {
				for r := range rounds {
					for k := range engines {
						i := (k + r) % len(engines)
						rates[i] = append(rates[i], run(i))
					}
				}
			}
			med := make([]float64, len(engines))
			for i := range engines {
				slices.Sort(rates[i])
				med[i] = rates[i][len(rates[i])/2]
			}
			b.ReportMetric(med[0]/med[1], "eventloop/goroutine")
			b.ReportMetric(med[2]/med[1], "eventloop-delay/goroutine")
			b.Logf("%s: event loop %.0f req/s (%.3f×), with a 100 ms park delay %.0f req/s (%.3f×), goroutine engine %.0f req/s (medians of %d interleaved rounds)",
				mode.name, med[0], med[0]/med[1], med[2], med[2]/med[1], med[1], len(rates[0]))
		})
	}
}

// TestH2ParkDelay: with a park delay, a quiet h2c connection on the event
// loop still parks (once the delay has passed), and a parked one resumes
// and serves its next request.
func TestH2ParkDelay(t *testing.T) {
	if !riptide.H2Parks() {
		t.Skip("parking needs the event loop")
	}
	in, _ := startRiptideH2(t, riptide.HandlerFunc(func(c *riptide.Ctx) { c.WriteString("ok") }), func(s *riptide.Server) {
		s.SetH2ParkDelay(50 * time.Millisecond)
	})
	a := newH2Attacker(t, in, 0) // waits until the connection parked
	block := a.RequestBlock("/")
	for id := uint32(1); id <= 5; id += 2 {
		parked := riptide.H2ParkWatch(a.Conn.LocalAddr().String())
		if err := a.Fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block, EndStream: true, EndHeaders: true}); err != nil {
			t.Fatal(err)
		}
		for ended := false; !ended; {
			f, err := a.Fr.ReadFrame()
			if err != nil {
				t.Fatalf("stream %d: %v", id, err)
			}
			if d, ok := f.(*http2.DataFrame); ok && d.StreamID == id {
				ended = d.StreamEnded()
			}
		}
		select {
		case <-parked:
		case <-time.After(h2AttackBound):
			t.Fatalf("after stream %d the quiet connection never parked", id)
		}
	}
}
