//go:build !unix

package rlimit

import (
	"errors"
	"runtime"
)

// RaiseNoFile cannot change the descriptor limit on this system: it
// returns Fallback and an error saying so.
func RaiseNoFile(want uint64) (uint64, error) {
	return Fallback, errors.New("rlimit: RLIMIT_NOFILE is not supported on " + runtime.GOOS)
}
