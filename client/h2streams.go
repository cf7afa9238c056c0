package client

import "iter"

// h2RingSize is the number of slots of a connection's stream table: stream
// IDs are odd and increasing, so up to this many streams opened one after
// another each take their own slot.
const h2RingSize = 256

// h2Streams is a connection's open streams by ID: a ring indexed by the
// ID, a stream whose slot is taken (by one opened h2RingSize IDs before and
// still open) going to a map. A stream's id is its key while it is in.
type h2Streams struct {
	ring []*h2Stream
	over map[uint32]*h2Stream
}

func ringSlot(id uint32) uint32 { return id >> 1 & (h2RingSize - 1) }

// get returns the stream of id, nil if none.
func (t *h2Streams) get(id uint32) *h2Stream {
	if t.ring != nil {
		if st := t.ring[ringSlot(id)]; st != nil && st.id == id {
			return st
		}
	}
	if t.over == nil {
		return nil
	}
	return t.over[id]
}

// put adds st, whose id no stream in t has.
func (t *h2Streams) put(st *h2Stream) {
	if t.ring == nil {
		t.ring = make([]*h2Stream, h2RingSize)
	}
	if s := &t.ring[ringSlot(st.id)]; *s == nil {
		*s = st
		return
	}
	if t.over == nil {
		t.over = make(map[uint32]*h2Stream)
	}
	t.over[st.id] = st
}

// del removes the stream of id.
func (t *h2Streams) del(id uint32) {
	if t.ring != nil {
		if s := &t.ring[ringSlot(id)]; *s != nil && (*s).id == id {
			*s = nil
			return
		}
	}
	delete(t.over, id)
}

// all yields every stream (one may be deleted meanwhile).
func (t *h2Streams) all() iter.Seq[*h2Stream] {
	return func(yield func(*h2Stream) bool) {
		for _, st := range t.ring {
			if st != nil && !yield(st) {
				return
			}
		}
		for _, st := range t.over {
			if !yield(st) {
				return
			}
		}
	}
}
