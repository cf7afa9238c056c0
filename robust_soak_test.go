package riptide_test

// A soak of keep-alive requests with RSS, live heap and goroutines sampled,
// and a graceful shutdown under load.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
)

// soakRequest is one request of the soak mix and the response it expects.
type soakRequest struct {
	raw  []byte
	head bool
	body string
}

// soakMix covers the request and response paths: plain GET, bodies read by
// Body and ReadBody, chunked bodies with trailers, an unread body, streamed
// and declared-length responses, HEAD.
func soakMix() []soakRequest {
	body := strings.Repeat("x", 1000)
	return []soakRequest{
		{[]byte("GET /?a=1&b=2 HTTP/1.1\r\nHost: a\r\nCookie: c=1\r\n\r\n"), false, "read 0 body bytes, 3 args\n"},
		{[]byte("POST /readbody HTTP/1.1\r\nHost: a\r\nContent-Length: 1000\r\n\r\n" + body), false, "read 1000 body bytes, 0 args\n"},
		{[]byte("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3e8\r\n" + body + "\r\n0\r\nX-T: 1\r\n\r\n"), false, "read 1000 body bytes, 0 args\n"},
		{[]byte("POST /ignore HTTP/1.1\r\nHost: a\r\nContent-Length: 1000\r\n\r\n" + body), false, "read 0 body bytes, 0 args\n"},
		{[]byte("GET /stream HTTP/1.1\r\nHost: a\r\n\r\n"), false, "part 0 of a streamed body\npart 1 of a streamed body\npart 2 of a streamed body\n"},
		{[]byte("GET /length HTTP/1.1\r\nHost: a\r\n\r\n"), false, "fixed"},
		{[]byte("HEAD /big HTTP/1.1\r\nHost: a\r\n\r\n"), true, ""},
	}
}

func TestRobustSoak(t *testing.T) {
	if riptide.InOwnProcess(t) {
		return // ran in a process of its own
	}
	for _, api := range robustAPIs {
		t.Run(api.name, func(t *testing.T) {
			total := size(50_000, 5_000_000)
			if api.name == "compat" {
				total = size(20_000, 1_000_000)
			}
			soak(t, api.handler, int64(total))
		})
	}
}

func soak(t *testing.T, h riptide.Handler, total int64) {
	clients := size(8, 64)
	samples := 20
	ls := startLive(t, &riptide.Server{Handler: h})
	healthy(t, ls.addr)
	mix := soakMix()

	var done, errs atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	var sampled []usage
	var sampleAt []int64
	stop := make(chan struct{})
	start := time.Now()
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			var c *keepAliveClient
			defer func() {
				if c != nil {
					c.Close()
				}
			}()
			for k := 0; ; k++ {
				if c == nil || k%5000 == 0 { // reconnect now and then: conn pooling too
					if c != nil {
						c.Close()
					}
					var err error
					if c, err = dialClient(ls.addr); err != nil {
						errs.Add(1)
						firstErr.CompareAndSwap(nil, err.Error())
						return
					}
				}
				// Pipeline 1..4 requests per write.
				depth := 1 + rng.IntN(4)
				var batch []byte
				reqs := make([]soakRequest, depth)
				for i := range reqs {
					reqs[i] = mix[rng.IntN(len(mix))]
					batch = append(batch, reqs[i].raw...)
				}
				c.nc.SetDeadline(time.Now().Add(60 * time.Second))
				if _, err := c.nc.Write(batch); err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					return
				}
				for _, rq := range reqs {
					r, err := finalResponse(c.br, rq.head)
					if err == nil {
						err = expectBody(r, 200, []byte(rq.body))
					}
					if err != nil {
						errs.Add(1)
						firstErr.CompareAndSwap(nil, fmt.Sprintf("%.60q: %v", rq.raw, err))
						return
					}
				}
				if done.Add(int64(depth)) >= total {
					return
				}
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	// Sample while the clients run.
	sampler := make(chan struct{})
	go func() {
		defer close(sampler)
		next := int64(0)
		for {
			n := done.Load()
			if n >= next {
				sampled = append(sampled, measure(true))
				sampleAt = append(sampleAt, n)
				next += total / int64(samples)
			}
			if n >= total || errs.Load() > 0 {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	wg.Wait()
	close(stop)
	<-sampler
	elapsed := time.Since(start)
	final := measure(true)
	if e := errs.Load(); e > 0 {
		t.Fatalf("%d errors, first: %v", e, firstErr.Load())
	}
	var lines []string
	for i, u := range sampled {
		lines = append(lines, fmt.Sprintf("%9d requests: %v", sampleAt[i], u))
	}
	t.Logf("%d keep-alive requests on %d connections in %v (%.0f req/s), 0 errors\n%s\nafter closing: %v",
		done.Load(), clients, elapsed.Round(time.Millisecond), float64(done.Load())/elapsed.Seconds(), strings.Join(lines, "\n"), final)
	// Flat: compare the end with the state after the first tenth (warm-up:
	// pools and buffers filled). The bounds are generous on purpose; a leak
	// of even a few bytes per request exceeds them over the long variant.
	if len(sampled) < 3 {
		return
	}
	warm, last := sampled[min(2, len(sampled)-1)], sampled[len(sampled)-1]
	if last.goroutines > warm.goroutines+goroutineSlack {
		t.Errorf("goroutines grew from %d to %d during the soak", warm.goroutines, last.goroutines)
	}
	if last.heapKB > 2*warm.heapKB+32<<10 {
		t.Errorf("live heap grew from %d KiB to %d KiB during the soak", warm.heapKB, last.heapKB)
	}
	if warm.rssKB > 0 && last.rssKB > 2*warm.rssKB+64<<10 {
		t.Errorf("RSS grew from %d KiB to %d KiB during the soak", warm.rssKB, last.rssKB)
	}
}

// TestRobustGracefulShutdown: clients keep requests flowing on keep-alive
// connections (some requests slow, so that many are in flight), Shutdown is
// called in the middle, and every request whose handler started must have
// received its complete response. Requests the server never read may fail
// (the connection is closed under them); that is the keep-alive race every
// client retries.
func TestRobustGracefulShutdown(t *testing.T) {
	if riptide.InOwnProcess(t) {
		return // ran in a process of its own
	}
	rounds := size(3, 20)
	for round := range rounds {
		shutdownRound(t, round)
	}
}

func shutdownRound(t *testing.T, round int) {
	clients := size(32, 256)
	load := time.Duration(size(200, 2000)) * time.Millisecond
	var started sync.Map // request id -> struct{}
	var inFlight, maxInFlight atomic.Int64
	srv := &riptide.Server{Handler: riptide.HandlerFunc(func(c *riptide.Ctx) {
		id := string(c.Header("X-Id"))
		started.Store(id, struct{}{})
		if n := inFlight.Add(1); n > maxInFlight.Load() {
			maxInFlight.Store(n)
		}
		defer inFlight.Add(-1)
		b, err := c.ReadBody()
		if err != nil {
			c.SetStatus(400)
			return
		}
		if id[len(id)-1] == '0' {
			time.Sleep(50 * time.Millisecond) // one in ten is slow
		}
		if id[len(id)-1] == '1' {
			// Streamed, so that a response is half sent when Shutdown starts.
			for range 4 {
				fmt.Fprintf(c, "%s|", id)
				c.Flush()
				time.Sleep(5 * time.Millisecond)
			}
		}
		c.WriteString("done " + id + " " + strconv.Itoa(len(b)))
	})}
	ls := startLive(t, srv)
	base := measure(false)

	var completed sync.Map
	var sent, okN, refused atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, 1000)
	report := func(err error) {
		select {
		case errc <- err:
		default: // enough to go on
		}
	}
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ; k++ {
				nc, err := net.Dial("tcp", ls.addr)
				if err != nil {
					refused.Add(1)
					return // the listener is closed: shutdown has begun
				}
				br := bufio.NewReader(nc)
				alive := true
				for j := 0; alive && j < 50; j++ {
					id := fmt.Sprintf("r%d-c%d-k%d-j%d", round, w, k, j)
					req := fmt.Sprintf("POST / HTTP/1.1\r\nHost: a\r\nX-Id: %s\r\nContent-Length: 4\r\n\r\nbody", id)
					nc.SetDeadline(time.Now().Add(30 * time.Second))
					sent.Add(1)
					if _, err := io.WriteString(nc, req); err != nil {
						alive = false
						break
					}
					r, err := finalResponse(br, false)
					if err != nil {
						if isTimeoutErr(err) {
							report(fmt.Errorf("%s: no response and no close in 30s", id))
						}
						alive = false // closed under us; judged below
						break
					}
					body := string(r.body)
					if r.status != 200 || !strings.HasSuffix(body, "done "+id+" 4") {
						report(fmt.Errorf("%s: got %d %q", id, r.status, body))
						alive = false
						break
					}
					completed.Store(id, struct{}{})
					okN.Add(1)
					if r.hasToken("Connection", "close") {
						alive = false
					}
				}
				nc.Close()
			}
		}()
	}
	time.Sleep(load)
	inAtShutdown := inFlight.Load()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	t0 := time.Now()
	if err := ls.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	took := time.Since(t0)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	lost := 0
	started.Range(func(k, _ any) bool {
		if _, ok := completed.Load(k); !ok {
			lost++
			if lost <= 5 {
				t.Errorf("request %s was started by its handler but its response never arrived complete", k)
			}
		}
		return true
	})
	if lost > 0 {
		t.Errorf("%d accepted requests lost their response", lost)
	}
	backToBaseline(t, base, "after shutdown")
	// The test keeps each round's server until it ends (t.Cleanup): drop
	// the per-request bookkeeping its handler holds, so that the heap
	// figure shows what riptide keeps.
	started.Clear()
	completed.Clear()
	after := measure(true)
	t.Logf("round %d: %d requests sent, %d completed, %d in flight at Shutdown (max %d), Shutdown took %v, %d accepted requests lost; before %v, after %v",
		round, sent.Load(), okN.Load(), inAtShutdown, maxInFlight.Load(), took.Round(time.Millisecond), lost, base, after)
}
