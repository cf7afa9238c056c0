//go:build race

package evloop

import "syscall"

// RaceRelease tells the race detector that what this goroutine did so far
// happens before what a reader of the socket does next, as syscall.Write
// does itself (a raw write or writev has no such annotation). An empty
// write(2) is how to reach syscall's annotation.
func RaceRelease(fd int) { syscall.Write(fd, nil) }

// raceAcquire is RaceRelease's counterpart for a raw read: an empty read(2)
// through syscall.Read reaches its acquire annotation.
func raceAcquire(fd int) { syscall.Read(fd, nil) }
