//go:build race

package http3

// raceEnabled: sync.Pool drops items at random under the race detector,
// so allocation counts are not pinned then.
const raceEnabled = true
