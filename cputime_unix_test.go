//go:build unix

package riptide

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system, every thread: the
// GC's included) the process has used so far, or 0 where unknown.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
