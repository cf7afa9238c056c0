//go:build windows

package riptide

import "syscall"

// getsockoptInt reads an integer socket option of socket handle fd.
func getsockoptInt(fd uintptr, level, opt int) (int, error) {
	return syscall.GetsockoptInt(syscall.Handle(fd), level, opt)
}
