//go:build !race

package http3

const raceEnabled = false
