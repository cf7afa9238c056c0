package load_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/riptide-http/riptide/bench/eventstore/load"
	"github.com/riptide-http/riptide/bench/eventstore/serve"
)

// TestRunAgainstServer drives a short load against an in-process server:
// every operation accounted for, no errors, every acknowledged event of a
// followed category delivered over SSE.
func TestRunAgainstServer(t *testing.T) {
	e, err := serve.Open(serve.Options{Store: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	run, stop := serve.Servers["nethttp"](e)
	go run(ln)
	defer func() { e.App.Broker.Close(); stop() }()
	base := "http://" + ln.Addr().String()

	ctx := context.Background()
	st, err := load.Seed(ctx, base, 40, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	res, err := load.Run(ctx, load.Config{Base: base, Conns: 4, Subscribers: 3, Duration: 300 * time.Millisecond,
		Mix: load.DefaultMix}, st)
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 0 {
		t.Fatalf("%d errors, first: %s", res.Errors, res.FirstError)
	}
	if res.Ops == 0 || res.Ops != res.Reads+res.Appends+res.CategoryReads+res.Refreshes {
		t.Errorf("ops %d ≠ reads %d + appends %d + category reads %d + refreshes %d",
			res.Ops, res.Reads, res.Appends, res.CategoryReads, res.Refreshes)
	}
	if res.Appends == 0 || res.SSEEvents == 0 || res.SSELost != 0 {
		t.Errorf("appends %d, SSE events delivered %d, lost %d", res.Appends, res.SSEEvents, res.SSELost)
	}
	if res.P99US < res.P50US || res.SSEP99US < res.SSEP50US {
		t.Errorf("percentiles out of order: %+v", res)
	}
}
