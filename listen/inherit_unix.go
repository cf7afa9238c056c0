//go:build unix

package listen

import "syscall"

// inheritFD takes over descriptor fd, passed by the parent process or by
// systemd: it is marked close-on-exec, so that it is not passed on to
// this process's own children by accident.
func inheritFD(fd int) error {
	syscall.CloseOnExec(fd)
	return nil
}
