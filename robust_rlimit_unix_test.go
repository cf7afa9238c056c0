//go:build unix

package riptide_test

import (
	"syscall"
	"testing"
)

// raiseNoFile raises the soft RLIMIT_NOFILE towards want, bounded by the
// hard limit (an unprivileged process cannot go past it), and returns the
// soft limit in force afterwards.
func raiseNoFile(t testing.TB, want uint64) uint64 {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Logf("getrlimit: %v", err)
		return 1024
	}
	if lim.Cur < want {
		lim.Cur = min(want, lim.Max)
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Logf("setrlimit: %v", err)
		}
		syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	return lim.Cur
}
