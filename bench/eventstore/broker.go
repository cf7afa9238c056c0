package eventstore

import "sync"

// Broker fans appended events out to live subscribers.
type Broker struct {
	mu     sync.Mutex
	subs   map[*Subscription]bool
	closed bool
}

// Subscription receives the events of one stream or one category of one
// namespace. C is closed when the broker closes or the subscriber falls
// behind by more than its buffer (the subscriber must then resume from its
// last position).
type Subscription struct {
	C        chan Event
	ns       string
	stream   string // "" for a category subscription
	category string
}

// subscriptionBuffer is how many events a slow subscriber may lag.
const subscriptionBuffer = 256

// NewBroker returns a Broker without subscribers.
func NewBroker() *Broker { return &Broker{subs: map[*Subscription]bool{}} }

// Subscribe registers a subscription to stream (when not empty) or else to
// category in namespace ns.
func (b *Broker) Subscribe(ns, stream, category string) *Subscription {
	s := &Subscription{C: make(chan Event, subscriptionBuffer), ns: ns, stream: stream, category: category}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		close(s.C)
		return s
	}
	b.subs[s] = true
	return s
}

// Unsubscribe removes s; its channel is closed if it was not already.
func (b *Broker) Unsubscribe(s *Subscription) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.subs[s] {
		delete(b.subs, s)
		close(s.C)
	}
}

// Publish delivers ev, appended in namespace ns, to every matching
// subscription. It never blocks: a full subscriber is dropped.
func (b *Broker) Publish(ns string, ev Event) {
	cat := Category(ev.Stream)
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		if s.ns != ns || (s.stream != "" && s.stream != ev.Stream) || (s.stream == "" && s.category != cat) {
			continue
		}
		select {
		case s.C <- ev:
		default:
			delete(b.subs, s)
			close(s.C)
		}
	}
}

// Close ends every subscription, so SSE handlers return and servers can
// shut down.
func (b *Broker) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for s := range b.subs {
		close(s.C)
	}
	clear(b.subs)
}
