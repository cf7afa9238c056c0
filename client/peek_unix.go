//go:build unix && (!linux || 386)

package client

import "syscall"

// peekFD reports whether a non-blocking one-byte MSG_PEEK receive would
// block, i.e. the peer has neither sent data nor closed. linux/386 uses it
// too: it has no recvfrom system call for peek_linux.go, only socketcall.
func peekFD(fd uintptr, probe *[1]byte) bool {
	_, _, err := syscall.Recvfrom(int(fd), probe[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
}
