package riptide

import (
	"log/slog"
	"net/http"
	"strconv"
	"testing"
)

// plaintextHandlers returns the plaintext handler of the door benchmarks
// (BenchmarkCompatVsNative and its HTTP/2 forms) for each door: native,
// and net/http's (for FromHTTP).
func plaintextHandlers() (Handler, http.Handler) {
	hello := []byte("Hello, World!")
	native := HandlerFunc(func(c *Ctx) {
		c.SetHeader("Content-Type", "text/plain; charset=utf-8")
		c.Write(hello)
	})
	hh := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h := w.Header()
		h["Content-Type"] = []string{"text/plain; charset=utf-8"}
		h["Content-Length"] = []string{strconv.Itoa(len(hello))}
		w.Write(hello)
	})
	return native, hh
}

// BenchmarkCompatVsNativeH2Burst is BenchmarkCompatVsNativeH2 in bursts,
// as h2load -m10 sends: each op writes 10 HEADERS frames (new streams) on
// one h2c connection and reads their 10 responses, so that the hand-off
// of a burst to the workers, the connection's writes and its flushes are
// shared by 10 requests as in the harness. Both doors run on pooled
// workers (the native door is not inline by default). ns/req and
// cpu-ns/req are per request (the process's CPU, client included):
//
//	go test -run '^$' -bench CompatVsNativeH2Burst -benchmem -count 6 .
func BenchmarkCompatVsNativeH2Burst(b *testing.B) {
	native, hh := plaintextHandlers()
	for _, door := range []struct {
		name string
		h    Handler
	}{{"native", native}, {"compat", FromHTTP(hh)}} {
		b.Run(door.name, func(b *testing.B) {
			srv := &Server{Handler: door.h, Logger: slog.New(slog.DiscardHandler), HTTP2: &HTTP2Config{H2C: true}}
			bc := newH2BurstClient(b, serveTest(b, srv, testServeOptions{}).Addr, scaleH2Burst)
			for range 10 {
				bc.roundTrip()
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU()
			for b.Loop() {
				bc.roundTrip()
			}
			scaleReport(b, scaleH2Burst*b.N, cpu0)
		})
	}
}
