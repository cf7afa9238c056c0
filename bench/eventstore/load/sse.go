package load

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riptide-http/riptide/bench/eventstore"
)

// ackLog records when each appended position was acknowledged, and its
// category.
type ackLog struct {
	mu sync.Mutex
	at map[int64]ack
}

type ack struct {
	t        time.Time
	category string
}

// count returns how many acknowledged events are in category.
func (a *ackLog) count(category string) int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	var n int64
	for _, k := range a.at {
		if k.category == category {
			n++
		}
	}
	return n
}

// deliveryGrace bounds the wait, after the load stops, for the events
// still on their way to subscribers; one that has not arrived by then is
// lost.
const deliveryGrace = 5 * time.Second

// awaitDelivery waits until every subscriber has received as many events
// as were acknowledged in its category, or grace has passed.
func awaitDelivery(subs []*subscriber, acks *ackLog, grace time.Duration) {
	deadline := time.Now().Add(grace)
	for _, s := range subs {
		want := acks.count(s.category)
		for s.n.Load() < want && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func (a *ackLog) ack(pos int64, category string) {
	t := time.Now()
	a.mu.Lock()
	a.at[pos] = ack{t, category}
	a.mu.Unlock()
}

// join matches received events with their acknowledgements: delivery
// latencies in µs (0 for events that arrived first, counted in before),
// and lost, the acknowledged events of the subscriber's category that
// never arrived.
func (a *ackLog) join(category string, got []received) (lat []float64, before, lost int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	seen := make(map[int64]bool, len(got))
	for _, r := range got {
		seen[r.pos] = true
		k, ok := a.at[r.pos]
		if !ok {
			continue // appended by seeding or an earlier run
		}
		d := r.at.Sub(k.t)
		if d < 0 {
			before++
			d = 0
		}
		lat = append(lat, float64(d.Nanoseconds())/1e3)
	}
	for pos, k := range a.at {
		if k.category == category && !seen[pos] {
			lost++
		}
	}
	return lat, before, lost
}

type received struct {
	pos int64
	at  time.Time
}

// subscriber follows one category over SSE and timestamps every event.
type subscriber struct {
	category string
	n        atomic.Int64 // events received so far
	resp     *http.Response
	got      []received
	err      error
}

func subscribe(ctx context.Context, c *client, category string, from int64) (*subscriber, error) {
	u := fmt.Sprintf("%s/subscribe?category=%s&from=%d", c.base, category, from)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+Token)
	// A streaming client of its own: no overall timeout.
	resp, err := (&http.Client{Transport: c.hc.Transport}).Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("subscribe: status %d", resp.StatusCode)
	}
	return &subscriber{category: category, resp: resp}, nil
}

// read consumes the stream until it ends; only the id lines matter (the
// event's position), and the time is taken when its blank line arrives.
func (s *subscriber) read() {
	defer s.resp.Body.Close()
	sc := bufio.NewScanner(s.resp.Body)
	sc.Buffer(make([]byte, 64<<10), eventstore.MaxBodyBytes*2)
	var id int64 = -1
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if id >= 0 {
				s.got = append(s.got, received{pos: id, at: time.Now()})
				s.n.Add(1)
			}
			id = -1
		case strings.HasPrefix(line, "id: "):
			n, err := strconv.ParseInt(line[4:], 10, 64)
			if err != nil {
				s.err = fmt.Errorf("bad id line %q", line)
				return
			}
			id = n
		}
	}
	if err := sc.Err(); err != nil && s.resp.Request.Context().Err() == nil {
		s.err = err
	}
}
