//go:build linux && !386

package client

import (
	"syscall"
	"unsafe"
)

// peekFD reports whether a non-blocking one-byte MSG_PEEK receive would
// block, i.e. the peer has neither sent data nor closed. It uses
// RawSyscall: the call cannot block, so the scheduler need not be told, and
// this check runs before every reuse of a pooled connection.
func peekFD(fd uintptr, probe *[1]byte) bool {
	_, _, errno := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(probe)), 1,
		syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
	return errno == syscall.EAGAIN || errno == syscall.EWOULDBLOCK
}
