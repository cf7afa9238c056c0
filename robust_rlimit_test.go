package riptide_test

import (
	"testing"

	"github.com/riptide-http/riptide/internal/rlimit"
)

// raiseNoFile raises the soft RLIMIT_NOFILE towards want, bounded by the
// hard limit (an unprivileged process cannot go past it), and returns the
// soft limit in force afterwards (rlimit.Fallback where there is none).
func raiseNoFile(t testing.TB, want uint64) uint64 {
	t.Helper()
	lim, err := rlimit.RaiseNoFile(want)
	if err != nil {
		t.Logf("raising RLIMIT_NOFILE: %v", err)
	}
	return lim
}
