//go:build !unix

package rlimit

import "testing"

// Without RLIMIT_NOFILE, RaiseNoFile says so and returns Fallback.
func TestRaiseNoFile(t *testing.T) {
	if got, err := RaiseNoFile(4096); got != Fallback || err == nil {
		t.Errorf("RaiseNoFile = %d, %v; want %d and an error", got, err, Fallback)
	}
}
