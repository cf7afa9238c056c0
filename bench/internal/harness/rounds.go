package harness

import "iter"

// Slot is one measured run's place in a benchmark: its round and position
// (both 1-based) and the index of the server that runs there.
type Slot struct {
	Round, Position, Server int
}

// Rounds yields the slots of rounds interleaved rounds over n servers, the
// order rotated by one each round so that no server always runs first
// (right after a warm-up) or last: the method every runner here follows.
func Rounds(rounds, n int) iter.Seq[Slot] {
	return func(yield func(Slot) bool) {
		for r := range rounds {
			for pos := range n {
				if !yield(Slot{Round: r + 1, Position: pos + 1, Server: (pos + r) % n}) {
					return
				}
			}
		}
	}
}
