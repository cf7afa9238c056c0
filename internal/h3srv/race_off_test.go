//go:build !race

package h3srv

const raceEnabled = false
