package riptide

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// Benchmarks of how the per-request cost holds as cores are added (issue
// 27): each runs scaleConnsPerP client connections per P with b.RunParallel against an
// in-process server, so at -cpu N the server's loops, workers and writers
// run on N Ps. The clients allocate nothing and parse nothing beyond frame
// headers; they share the CPUs with the server, as the load generator does
// on the 2-vCPU harness. ns/req is wall time per request: at -cpu 2 with
// both CPUs busy, 2 × ns/req is the CPU a request costs, to compare with
// ns/req at -cpu 1 (a ratio of 1 is perfect scaling). On a machine shared
// with other work the wall time is not the CPU's, so cpu-ns/req is measured
// too: the process's CPU time (getrusage: server, client, GC and the
// scheduler's spinning threads) per request.
//
//	go test -run '^$' -bench 'Scale' -cpu 1,2 -benchmem .

// scaleConnsPerP is the client connections per P (b.SetParallelism): a
// few, so that the server sees batches of ready connections as under wrk
// or h2load, rather than one round trip's latency.
const scaleConnsPerP = 8

// scalePipelineDepth is the pipelined requests per write (wrk's pipelined
// workload sends 16).
const scalePipelineDepth = 16

// BenchmarkScalePipelined is the pipelined HTTP/1.1 path: each op is a
// write of 16 GETs and the read of their 16 responses.
func BenchmarkScalePipelined(b *testing.B) {
	_, addr := startServer(b, nil, func(c *Ctx) {
		c.SetHeader("Content-Type", "text/plain")
		c.WriteString("Hello, World!")
	})
	one := "GET /plaintext HTTP/1.1\r\nHost: localhost\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n"
	b.ReportAllocs()
	b.SetParallelism(scaleConnsPerP)
	b.ResetTimer()
	cpu0 := processCPU()
	b.RunParallel(func(pb *testing.PB) {
		ac := newAllocClient(b, addr, one)
		ac.req = []byte(strings.Repeat(one, scalePipelineDepth))
		ac.size *= scalePipelineDepth
		ac.buf = make([]byte, ac.size)
		for pb.Next() {
			ac.roundTrip()
		}
	})
	scaleReport(b, scalePipelineDepth*b.N, cpu0)
}

// scaleH2Burst is the streams a client opens per write (h2load -m10).
const scaleH2Burst = 10

// BenchmarkScaleH2 is the HTTP/2 path over h2c, in the default dispatch
// (handlers on pooled workers) and with InlineHandlers: each op is a write
// of 10 HEADERS frames (new streams, every field indexed in HPACK) and the
// read of their 10 responses.
func BenchmarkScaleH2(b *testing.B) {
	for _, inline := range []bool{false, true} {
		name := map[bool]string{false: "default", true: "inline"}[inline]
		b.Run(name, func(b *testing.B) {
			srv := &Server{HTTP2: &HTTP2Config{H2C: true, InlineHandlers: inline}}
			_, addr := startServer(b, srv, func(c *Ctx) {
				c.SetHeader("Content-Type", "text/plain")
				c.WriteString("Hello, World!")
			})
			b.ReportAllocs()
			b.SetParallelism(scaleConnsPerP)
			b.ResetTimer()
			cpu0 := processCPU()
			b.RunParallel(func(pb *testing.PB) {
				bc := newH2BurstClient(b, addr, scaleH2Burst)
				for pb.Next() {
					bc.roundTrip()
				}
			})
			scaleReport(b, scaleH2Burst*b.N, cpu0)
		})
	}
}

// h2BurstClient opens n streams per write on an h2AllocClient's
// connection and reads until all n have ended, allocating nothing.
type h2BurstClient struct {
	*h2AllocClient
	burst []byte // n copies of the HEADERS frame, IDs patched per write
	one   int    // one frame's length
	n     int
}

func newH2BurstClient(t testing.TB, addr string, n int) *h2BurstClient {
	ac := newH2AllocClient(t, addr)
	bc := &h2BurstClient{h2AllocClient: ac, one: len(ac.req), n: n}
	for range n {
		bc.burst = append(bc.burst, ac.req...)
	}
	return bc
}

// roundTrip sends n requests in one write and waits for their n ends.
func (bc *h2BurstClient) roundTrip() {
	for i := range bc.n {
		bc.id += 2
		f := bc.burst[i*bc.one:]
		f[5], f[6], f[7], f[8] = byte(bc.id>>24), byte(bc.id>>16), byte(bc.id>>8), byte(bc.id)
	}
	if _, err := bc.c.Write(bc.burst); err != nil {
		bc.t.Fatal(err)
	}
	_ = bc.c.SetReadDeadline(time.Now().Add(30 * time.Second))
	for ended := 0; ended < bc.n; {
		for bc.w-bc.r >= 9 {
			h := bc.buf[bc.r:]
			length := int(h[0])<<16 | int(h[1])<<8 | int(h[2])
			if bc.w-bc.r < 9+length {
				break
			}
			typ, flags := http2.FrameType(h[3]), http2.Flags(h[4])
			bc.r += 9 + length
			switch {
			case (typ == http2.FrameHeaders || typ == http2.FrameData) && flags&http2.FlagDataEndStream != 0:
				ended++
			case typ == http2.FrameRSTStream || typ == http2.FrameGoAway:
				bc.t.Fatalf("frame type %v from the server", typ)
			}
		}
		if bc.r > 0 {
			bc.w = copy(bc.buf, bc.buf[bc.r:bc.w])
			bc.r = 0
		}
		if ended == bc.n {
			return
		}
		n, err := bc.c.Read(bc.buf[bc.w:])
		if err != nil {
			bc.t.Fatal(err)
		}
		bc.w += n
	}
}

// scaleReport adds ns/req (wall) and cpu-ns/req (the process's CPU time
// since cpu0, processCPU) for reqs requests.
func scaleReport(b *testing.B, reqs int, cpu0 time.Duration) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(reqs), "ns/req")
	if cpu := processCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(reqs), "cpu-ns/req")
	}
}

// BenchmarkScaleStatsDispatch is what the statistics cost each time a
// worker takes a connection (attach picks a shard) or an HTTP/2 stream
// starts (the streams counter), on every P at once: any write to a cache
// line all Ps share shows here as a cost that grows with -cpu.
func BenchmarkScaleStatsDispatch(b *testing.B) {
	s := &Server{}
	s.init()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			sh := s.pickShard()
			sh.bytes.In.Add(1)
			s.stats.h2Streams.Add(1)
		}
	})
}
