//go:build linux && !race

package riptide

// raceRelease is a no-op without the race detector (see elrace_linux.go).
func raceRelease(int) {}

// raceAcquire is a no-op without the race detector (see elrace_linux.go).
func raceAcquire(int) {}
