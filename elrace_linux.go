//go:build linux && race

package riptide

import "syscall"

// raceRelease tells the race detector that what this goroutine did so far
// happens before what a reader of the socket does next, as syscall.Write
// does itself (raw writev has no such annotation). An empty write(2) is
// how to reach syscall's annotation.
func raceRelease(fd int) { syscall.Write(fd, nil) }

// raceAcquire is raceRelease's counterpart for a raw read: an empty read(2)
// through syscall.Read reaches its acquire annotation.
func raceAcquire(fd int) { syscall.Read(fd, nil) }
