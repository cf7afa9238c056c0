//go:build unix

package riptide

import "syscall"

// getsockoptInt reads an integer socket option of descriptor fd.
func getsockoptInt(fd uintptr, level, opt int) (int, error) {
	return syscall.GetsockoptInt(int(fd), level, opt)
}
