package eventstore

import (
	"context"
	"slices"
	"sync"
	"time"
)

// MemoryStore is the in-memory Store: the light variant of the benchmark,
// where the HTTP layer's share of the work is larger.
type MemoryStore struct {
	mu  sync.RWMutex
	nss map[string]*memNamespace
}

type memNamespace struct {
	log        []Event          // by position-1
	streams    map[string][]int // stream → indexes into log, by version
	categories map[string][]int // category → indexes into log, increasing
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{nss: map[string]*memNamespace{}} }

// Append implements Store.
func (m *MemoryStore) Append(_ context.Context, ns string, e NewEvent) (Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.nss[ns]
	if n == nil {
		n = &memNamespace{streams: map[string][]int{}, categories: map[string][]int{}}
		m.nss[ns] = n
	}
	idx := n.streams[e.Stream]
	if e.Expected != AnyVersion && e.Expected != int64(len(idx))-1 {
		return Event{}, ErrWrongVersion
	}
	ev := Event{Position: int64(len(n.log)) + 1, Stream: e.Stream, Version: int64(len(idx)),
		Type: e.Type, Data: e.Data, Metadata: e.Metadata, Time: time.Now().UTC()}
	n.log = append(n.log, ev)
	n.streams[e.Stream] = append(idx, len(n.log)-1)
	c := Category(e.Stream)
	n.categories[c] = append(n.categories[c], len(n.log)-1)
	return ev, nil
}

// ReadStream implements Store.
func (m *MemoryStore) ReadStream(_ context.Context, ns, stream string, from int64, limit int) ([]Event, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	n := m.nss[ns]
	if n == nil {
		return nil, nil
	}
	idx := n.streams[stream]
	var out []Event
	for v := max(from, 0); v < int64(len(idx)) && len(out) < limit; v++ {
		out = append(out, n.log[idx[v]])
	}
	return out, nil
}

// ReadCategory implements Store.
func (m *MemoryStore) ReadCategory(_ context.Context, ns, category string, from int64, limit int) ([]Event, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	n := m.nss[ns]
	if n == nil {
		return nil, nil
	}
	idx := n.categories[category]
	// Log indexes are positions-1, so the first index ≥ from-1 starts the page.
	i, _ := slices.BinarySearch(idx, int(max(from, 1)-1))
	var out []Event
	for ; i < len(idx) && len(out) < limit; i++ {
		out = append(out, n.log[idx[i]])
	}
	return out, nil
}

// LastVersion implements Store.
func (m *MemoryStore) LastVersion(_ context.Context, ns, stream string) (int64, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if n := m.nss[ns]; n != nil {
		return int64(len(n.streams[stream])) - 1, nil
	}
	return NoStream, nil
}

// Close implements Store.
func (m *MemoryStore) Close() error { return nil }
