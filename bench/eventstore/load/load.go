// Package load is the event-store benchmark's load generator: a mixed RPC
// workload on keep-alive connections (stream reads, appends with expected
// versions, category reads, over many streams) while SSE subscribers
// measure delivery latency, from the append's acknowledgement to the
// event's arrival.
package load

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riptide-http/riptide/bench/eventstore"
)

// Token is the bearer token the load uses.
const Token = "token-alpha"

// Categories is how many categories the streams fall into.
const Categories = 10

// Mix is the workload's composition in percent; the rest of 100 after
// Reads and Appends are category reads.
type Mix struct{ Reads, Appends int }

// DefaultMix is 70% stream reads, 20% appends, 10% category reads.
var DefaultMix = Mix{Reads: 70, Appends: 20}

// Config is one load run.
type Config struct {
	// Base is the server's URL, "http://127.0.0.1:PORT".
	Base string
	// Conns is the number of keep-alive connections, one worker each.
	Conns int
	// Subscribers is the number of SSE subscribers, each on one category.
	Subscribers int
	Duration    time.Duration
	Mix         Mix
}

// State is what the load knows of one server's data: every stream's last
// version and the highest position seen. It carries over between runs
// against the same server.
type State struct {
	versions []atomic.Int64
	maxPos   atomic.Int64
}

// StreamName names stream i; its category is c<i mod Categories>.
func StreamName(i int) string { return fmt.Sprintf("c%d-%d", i%Categories, i) }

// Seed appends perStream events to each of streams streams over conns
// connections and returns the resulting State.
func Seed(ctx context.Context, base string, streams, perStream, conns int) (*State, error) {
	st := &State{versions: make([]atomic.Int64, streams)}
	c := newClient(base, conns)
	defer c.hc.CloseIdleConnections()
	var next atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, conns)
	for range conns {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(rand.Uint64(), 1))
			for {
				i := int(next.Add(1) - 1)
				if i >= streams {
					return
				}
				st.versions[i].Store(eventstore.NoStream)
				for range perStream {
					if _, err := c.append(ctx, st, rng, i); err != nil {
						errc <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	return st, <-errc
}

// Result is one run's measurements.
type Result struct {
	Elapsed time.Duration
	// Ops counts completed RPCs of every kind; Reads, Appends, CategoryReads
	// and Refreshes (last_version after a conflict) split it.
	Ops, Reads, Appends, CategoryReads, Refreshes int64
	// Conflicts are appends refused for a stale expected version (a valid
	// answer: another worker appended first).
	Conflicts int64
	// Errors are failed requests and unexpected answers; FirstError shows one.
	Errors     int64
	FirstError string
	// P50US and P99US are RPC latency percentiles in microseconds.
	P50US, P99US float64
	// SSE: events delivered to subscribers and acknowledged in this run,
	// and delivery latency percentiles (acknowledged → received, 0 when the
	// event arrived before the append's response).
	SSEEvents             int64
	SSEP50US, SSEP99US    float64
	SSEBeforeAck, SSELost int64
}

// Run drives the workload for cfg.Duration and returns what it measured.
func Run(ctx context.Context, cfg Config, st *State) (Result, error) {
	c := newClient(cfg.Base, cfg.Conns)
	defer c.hc.CloseIdleConnections()
	acks := &ackLog{at: map[int64]ack{}}
	c.acks = acks

	subCtx, stopSubs := context.WithCancel(ctx)
	defer stopSubs()
	from := st.maxPos.Load() + 1
	subs := make([]*subscriber, cfg.Subscribers)
	var subWG sync.WaitGroup
	for i := range subs {
		s, err := subscribe(subCtx, c, fmt.Sprintf("c%d", i%Categories), from)
		if err != nil {
			return Result{}, err
		}
		subs[i] = s
		subWG.Go(s.read)
	}

	var res Result
	lat := make([][]float64, cfg.Conns)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	for w := range cfg.Conns {
		wg.Go(func() { lat[w] = c.work(ctx, cfg.Mix, st, &res, stop) })
	}
	select {
	case <-time.After(cfg.Duration):
	case <-ctx.Done():
	}
	close(stop)
	wg.Wait()
	res.Elapsed = time.Since(start)
	awaitDelivery(subs, acks, deliveryGrace)
	stopSubs()
	subWG.Wait()

	all := slices.Concat(lat...)
	res.P50US, res.P99US = percentile(all, 50), percentile(all, 99)
	var delivery []float64
	for _, s := range subs {
		if s.err != nil && res.FirstError == "" {
			res.Errors++
			res.FirstError = "subscriber: " + s.err.Error()
		}
		d, before, lost := acks.join(s.category, s.got)
		delivery = append(delivery, d...)
		res.SSEBeforeAck += before
		res.SSELost += lost
	}
	res.SSEEvents = int64(len(delivery))
	res.SSEP50US, res.SSEP99US = percentile(delivery, 50), percentile(delivery, 99)
	return res, ctx.Err()
}

// percentile of xs (sorted in place), nearest rank; 0 for none.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	i := int(float64(len(xs))*p/100+0.5) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}

// client sends RPCs with net/http's client (keep-alive, gzip accepted and
// decoded transparently, as a Go service's client would).
type client struct {
	base string
	hc   *http.Client
	acks *ackLog
}

func newClient(base string, conns int) *client {
	tr := &http.Transport{MaxIdleConnsPerHost: conns + 64, MaxConnsPerHost: 0, IdleConnTimeout: time.Minute}
	return &client{base: base, hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

// work is one worker's loop; it returns its RPC latencies in µs.
func (c *client) work(ctx context.Context, mix Mix, st *State, res *Result, stop <-chan struct{}) []float64 {
	rng := rand.New(rand.NewPCG(rand.Uint64(), 2))
	var lat []float64
	fail := func(err error) {
		if atomic.AddInt64(&res.Errors, 1) == 1 {
			res.FirstError = err.Error()
		}
	}
	for {
		select {
		case <-stop:
			return lat
		default:
		}
		t := time.Now()
		var err error
		var counter *int64
		switch n := rng.IntN(100); {
		case n < mix.Reads:
			counter, err = &res.Reads, c.readStream(ctx, st, rng)
		case n < mix.Reads+mix.Appends:
			var conflict bool
			counter = &res.Appends
			conflict, err = c.append(ctx, st, rng, rng.IntN(len(st.versions)))
			if conflict {
				atomic.AddInt64(&res.Conflicts, 1)
				atomic.AddInt64(&res.Refreshes, 1)
				atomic.AddInt64(&res.Ops, 1)
			}
		default:
			counter, err = &res.CategoryReads, c.readCategory(ctx, st, rng)
		}
		if err != nil {
			if ctx.Err() != nil {
				return lat
			}
			fail(err)
			continue
		}
		lat = append(lat, float64(time.Since(t).Nanoseconds())/1e3)
		atomic.AddInt64(counter, 1)
		atomic.AddInt64(&res.Ops, 1)
	}
}

// eventData is a realistic event body: an amount, a reference, a note.
func eventData(rng *rand.Rand) string {
	return fmt.Sprintf(`{"amount":%d,"currency":"EUR","reference":"INV-%08d","note":"%s"}`,
		rng.IntN(100000), rng.IntN(1e8), strings.Repeat("lorem ipsum ", 1+rng.IntN(8)))
}

// append appends one event to stream i with its last known version as the
// expected version; on a conflict it refreshes that version with
// last_version and reports the conflict.
func (c *client) append(ctx context.Context, st *State, rng *rand.Rand, i int) (conflict bool, err error) {
	stream := StreamName(i)
	expected := st.versions[i].Load()
	body := fmt.Sprintf(`{"id":%d,"method":"append","params":{"stream":%q,"type":"Deposited","data":%s,`+
		`"metadata":{"correlation_id":"%016x","user":"loadgen"},"expected_version":%d}}`,
		rng.IntN(1e9), stream, eventData(rng), rng.Uint64(), expected)
	var r struct {
		Result *eventstore.AppendResult `json:"result"`
		Error  *eventstore.Error        `json:"error"`
	}
	if err := c.call(ctx, body, &r); err != nil {
		return false, err
	}
	if r.Error != nil && r.Error.Code == eventstore.CodeWrongVersion {
		var v struct {
			Result eventstore.VersionResult `json:"result"`
		}
		if err := c.call(ctx, fmt.Sprintf(`{"id":1,"method":"last_version","params":{"stream":%q}}`, stream), &v); err != nil {
			return true, err
		}
		st.versions[i].Store(v.Result.Version)
		return true, nil
	}
	if r.Result == nil {
		return false, fmt.Errorf("append: unexpected reply %+v", r.Error)
	}
	if c.acks != nil {
		c.acks.ack(r.Result.Position, eventstore.Category(stream))
	}
	st.versions[i].CompareAndSwap(expected, r.Result.Version)
	for {
		m := st.maxPos.Load()
		if r.Result.Position <= m || st.maxPos.CompareAndSwap(m, r.Result.Position) {
			break
		}
	}
	return false, nil
}

// Reads check the reply's shape instead of decoding every event: decoding
// whole pages would take the two shared vCPUs from the server under test.
var nonEmptyEvents = []byte(`"result":{"events":[{"position":`)

// readStream reads the last ten events of a random stream.
func (c *client) readStream(ctx context.Context, st *State, rng *rand.Rand) error {
	i := rng.IntN(len(st.versions))
	from := max(0, st.versions[i].Load()-9)
	body := fmt.Sprintf(`{"id":%d,"method":"read_stream","params":{"stream":%q,"from":%d,"limit":10}}`,
		rng.IntN(1e9), StreamName(i), from)
	b, err := c.post(ctx, body)
	if err == nil && !bytes.Contains(b, nonEmptyEvents) {
		err = fmt.Errorf("read_stream: unexpected reply %.200s", b)
	}
	return err
}

// readCategory reads a page of 50 events of a random category from a
// random position.
func (c *client) readCategory(ctx context.Context, st *State, rng *rand.Rand) error {
	from := 1 + rng.Int64N(max(st.maxPos.Load()-500, 1))
	body := fmt.Sprintf(`{"id":%d,"method":"read_category","params":{"category":"c%d","from":%d,"limit":50}}`,
		rng.IntN(1e9), rng.IntN(Categories), from)
	b, err := c.post(ctx, body)
	if err == nil && !bytes.Contains(b, nonEmptyEvents) {
		err = fmt.Errorf("read_category: unexpected reply %.200s", b)
	}
	return err
}

// call posts one RPC and decodes a 200 reply into out.
func (c *client) call(ctx context.Context, body string, out any) error {
	b, err := c.post(ctx, body)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// post posts one RPC and returns the body of a 200 reply.
func (c *client) post(ctx context.Context, body string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/rpc", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(b))
	}
	return b, nil
}
