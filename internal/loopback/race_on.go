//go:build race

package loopback

// Race reports whether the race detector is on; it allocates, so
// allocation tests skip under it.
const Race = true
