//go:build !race

package evloop

// RaceRelease is a no-op without the race detector (see race_linux.go).
func RaceRelease(int) {}

// raceAcquire is a no-op without the race detector (see race_linux.go).
func raceAcquire(int) {}
