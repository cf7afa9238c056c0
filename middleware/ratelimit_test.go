package middleware

import (
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/israce"
	"github.com/riptide-http/riptide/internal/loopback"
)

// fakeClock is an injected clock that moves only when told to.
type fakeClock struct{ ns atomic.Int64 }

func (f *fakeClock) now() time.Time          { return time.Unix(0, f.ns.Load()) }
func (f *fakeClock) advance(d time.Duration) { f.ns.Add(int64(d)) }

func newFakeClock() *fakeClock {
	f := &fakeClock{}
	f.ns.Store(time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC).UnixNano())
	return f
}

// TestRateLimitTable: one row per rule of the token bucket, on an injected
// clock. Each step advances the clock, then sends n requests for a key
// and expects how many pass and the wait reported for the first refused.
func TestRateLimitTable(t *testing.T) {
	type step struct {
		advance time.Duration
		key     string
		n       int
		pass    int
		wait    time.Duration // of the first refused, when pass < n
	}
	const s = time.Second
	for _, tc := range []struct {
		name   string
		burst  int
		refill time.Duration
		steps  []step
	}{
		{"burst then refused", 3, s, []step{{0, "a", 5, 3, s}}},
		{"burst of one", 1, s, []step{{0, "a", 2, 1, s}}},
		{"the wait shrinks with time", 2, s, []step{{0, "a", 2, 2, 0}, {s / 4, "a", 1, 0, 3 * s / 4}}},
		{"one token back per refill", 3, s, []step{{0, "a", 3, 3, 0}, {s, "a", 2, 1, s}}},
		{"refill stops at the burst", 2, s, []step{{0, "a", 2, 2, 0}, {10 * s, "a", 3, 2, s}}},
		{"partial refills add up", 2, s, []step{{0, "a", 2, 2, 0}, {s / 2, "a", 1, 0, s / 2}, {s / 2, "a", 2, 1, s}}},
		{"keys are independent", 2, s, []step{{0, "a", 3, 2, s}, {0, "b", 3, 2, s}, {0, "a", 1, 0, s}}},
		{"a refused request takes no token", 1, s, []step{{0, "a", 1, 1, 0}, {s / 2, "a", 5, 0, s / 2}, {s / 2, "a", 1, 1, 0}}},
		{"sustained rate", 1, 100 * time.Millisecond, []step{{0, "a", 1, 1, 0}, {100 * time.Millisecond, "a", 1, 1, 0}, {100 * time.Millisecond, "a", 1, 1, 0}, {50 * time.Millisecond, "a", 1, 0, 50 * time.Millisecond}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock()
			l := NewRateLimiter(RateLimitOptions{Burst: tc.burst, Refill: tc.refill, Now: clk.now})
			for i, st := range tc.steps {
				clk.advance(st.advance)
				pass, wait := 0, time.Duration(0)
				for range st.n {
					ok, w := l.Allow([]byte(st.key))
					if ok {
						pass++
					} else if wait == 0 {
						wait = w
					}
				}
				if pass != st.pass || wait != st.wait {
					t.Errorf("step %d (%q after %v): %d of %d passed, first wait %v; want %d, %v", i, st.key, st.advance, pass, st.n, wait, st.pass, st.wait)
				}
			}
		})
	}
}

// TestRateLimitManyKeys: the table never tracks more keys than MaxKeys
// however many come, a flood of new keys does not push out a key that
// used its burst up (its bucket is the farthest from full), and the
// limiter allocates nothing per key.
func TestRateLimitManyKeys(t *testing.T) {
	clk := newFakeClock()
	const maxKeys = 64
	l := NewRateLimiter(RateLimitOptions{Burst: 5, Refill: time.Second, MaxKeys: maxKeys, Now: clk.now})
	if got := len(l.sets) * 8; got != maxKeys {
		t.Fatalf("table of %d slots, want %d", got, maxKeys)
	}
	heavy := []byte("heavy")
	for range 5 {
		l.Allow(heavy)
	}
	if ok, _ := l.Allow(heavy); ok {
		t.Fatal("heavy key passed beyond its burst")
	}
	var key [8]byte
	for i := range 100000 {
		k := strconv.AppendInt(key[:0], int64(i), 10)
		if ok, _ := l.Allow(k); !ok {
			t.Fatalf("new key %q refused", k)
		}
	}
	if n := l.tracked(); n > maxKeys || n < maxKeys/2 {
		t.Errorf("%d keys tracked after 100000, want at most MaxKeys=%d (and most slots in use)", n, maxKeys)
	}
	if ok, _ := l.Allow(heavy); ok {
		t.Error("the flood of new keys reset the heavy key's bucket")
	}
	// Once every bucket is full again, nothing is tracked.
	clk.advance(5 * time.Second)
	if n := l.tracked(); n != 0 {
		t.Errorf("%d keys tracked once every bucket refilled, want 0", n)
	}
	if ok, _ := l.Allow(heavy); !ok {
		t.Error("heavy key refused after its bucket refilled")
	}
	if !israce.Enabled {
		i := 0
		if a := testing.AllocsPerRun(10000, func() {
			i++
			l.Allow(strconv.AppendInt(key[:0], int64(i), 10))
		}); a != 0 {
			t.Errorf("Allow with new keys: %v allocs, want 0", a)
		}
	}
}

// TestRateLimitMiddleware: over a real connection, the third request of a
// burst of 2 gets 429 with Retry-After in whole seconds rounded up; keys
// come from a header when set (else the address), and Limited shapes the
// answer.
func TestRateLimitMiddleware(t *testing.T) {
	clk := newFakeClock()
	h := RateLimit(RateLimitOptions{Burst: 2, Refill: 1500 * time.Millisecond, Header: "X-Api-Key", Now: clk.now})(hello)
	addr := loopback.Serve(t, h)
	c := loopback.DialConn(t, addr)
	req := func(key string) string {
		hdr := ""
		if key != "" {
			hdr = "X-Api-Key: " + key + "\r\n"
		}
		resp, body := c.Send("GET / HTTP/1.1\r\nHost: x\r\n" + hdr + "\r\n")
		return strconv.Itoa(resp.StatusCode) + " " + resp.Header.Get("Retry-After") + " " + body
	}
	for i, tc := range []struct {
		advance time.Duration
		key     string
		want    string
	}{
		{0, "k1", "200  hello"},
		{0, "k1", "200  hello"},
		{0, "k1", "429 2 Too Many Requests\n"}, // 1.5 s rounds up to 2
		{0, "k2", "200  hello"},                // another key
		{0, "", "200  hello"},                  // no header: the address's bucket
		{0, "", "200  hello"},
		{0, "", "429 2 Too Many Requests\n"},
		{time.Second, "k1", "429 1 Too Many Requests\n"}, // 0.5 s left
		{time.Second / 2, "k1", "200  hello"},
	} {
		clk.advance(tc.advance)
		if got := req(tc.key); got != tc.want {
			t.Errorf("request %d (key %q): %q, want %q", i, tc.key, got, tc.want)
		}
	}

	custom := RateLimit(RateLimitOptions{Burst: 1, Refill: time.Minute, Now: clk.now,
		Limited: riptide.HandlerFunc(func(c *riptide.Ctx) { c.SetStatus(503); c.WriteString("slow down") })})(hello)
	c = loopback.DialConn(t, loopback.Serve(t, custom))
	c.Send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, body := c.Send("GET / HTTP/1.1\r\nHost: x\r\n\r\n"); resp.StatusCode != 503 || body != "slow down" || resp.Header.Get("Retry-After") != "60" {
		t.Errorf("Limited: %d %q Retry-After %q, want 503 \"slow down\" 60", resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}
}

// TestRateLimitZeroAllocs: requests through RateLimit allocate nothing in
// the whole process, passed (keyed by address or header) or refused.
func TestRateLimitZeroAllocs(t *testing.T) {
	if israce.Enabled {
		t.Skip("the race detector allocates")
	}
	clk := newFakeClock()
	for _, tc := range []struct {
		name  string
		opts  RateLimitOptions
		req   string
		burst int
		want  string // the status line
	}{
		{"address, passed", RateLimitOptions{Burst: 1 << 30, Refill: time.Hour}, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 0, "HTTP/1.1 200 OK"},
		{"header, passed", RateLimitOptions{Burst: 1 << 30, Refill: time.Hour, Header: "X-Api-Key"}, "GET / HTTP/1.1\r\nHost: x\r\nX-Api-Key: abc\r\n\r\n", 0, "HTTP/1.1 200 OK"},
		{"refused", RateLimitOptions{Burst: 1, Refill: time.Hour}, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 1, "HTTP/1.1 429 Too Many Requests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Now = clk.now
			addr := loopback.Serve(t, RateLimit(tc.opts)(hello))
			if tc.burst > 0 { // use the burst up, so that the rest are refused
				first := loopback.Dial(t, addr, tc.req)
				for range tc.burst {
					first.RoundTrip()
				}
			}
			c := loopback.Dial(t, addr, tc.req)
			if a := testing.AllocsPerRun(2000, c.RoundTrip); a != 0 {
				t.Errorf("%v allocs per request, want 0", a)
			}
			if got := string(c.Response()); !strings.HasPrefix(got, tc.want+"\r\n") {
				t.Errorf("response %.40q, want %q", got, tc.want)
			}
		})
	}
}
