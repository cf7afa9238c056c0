//go:build unix

package rlimit

import "syscall"

// RaiseNoFile raises the soft RLIMIT_NOFILE towards want, bounded by the
// hard limit (an unprivileged process cannot go past it), and returns the
// soft limit in force afterwards.
func RaiseNoFile(want uint64) (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return Fallback, err
	}
	var err error
	if uint64(lim.Cur) < want {
		set(&lim.Cur, min(want, uint64(lim.Max)))
		err = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
		syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	return uint64(lim.Cur), err
}

// set stores v in an Rlimit field, whose type is uint64 on most systems
// and int64 on some (freebsd).
func set[T int64 | uint64](p *T, v uint64) { *p = T(v) }
