//go:build race

package h3srv

// raceEnabled: sync.Pool drops items at random under the race detector,
// so allocation counts are not pinned then.
const raceEnabled = true
