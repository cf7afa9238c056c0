package client

import (
	"slices"
	"testing"
)

// TestH2Streams: the stream table finds, deletes and lists streams whose
// ring slot they share (IDs h2RingSize*2 apart) as a map would.
func TestH2Streams(t *testing.T) {
	var tab h2Streams
	a, b, c := &h2Stream{id: 1}, &h2Stream{id: 1 + 2*h2RingSize}, &h2Stream{id: 3}
	if tab.get(1) != nil {
		t.Fatal("empty table has stream 1")
	}
	for _, st := range []*h2Stream{a, b, c} {
		tab.put(st)
	}
	ids := func() []uint32 {
		var ids []uint32
		for st := range tab.all() {
			ids = append(ids, st.id)
		}
		slices.Sort(ids)
		return ids
	}
	if got := ids(); !slices.Equal(got, []uint32{1, 3, 1 + 2*h2RingSize}) {
		t.Fatalf("all: %v", got)
	}
	if tab.get(1) != a || tab.get(b.id) != b || tab.get(3) != c || tab.get(5) != nil {
		t.Fatal("get: wrong stream")
	}
	tab.del(1)
	if tab.get(1) != nil || tab.get(b.id) != b {
		t.Fatal("after deleting 1: wrong stream")
	}
	tab.del(b.id)
	tab.put(&h2Stream{id: 1 + 4*h2RingSize})
	if got := ids(); !slices.Equal(got, []uint32{3, 1 + 4*h2RingSize}) {
		t.Fatalf("after deleting %d, adding %d: %v", b.id, 1+4*h2RingSize, got)
	}
	for st := range tab.all() { // deleting while listing
		tab.del(st.id)
	}
	if got := ids(); len(got) != 0 {
		t.Fatalf("after deleting all: %v", got)
	}
}
