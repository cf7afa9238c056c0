//go:build !unix

package listen

import (
	"errors"
	"runtime"
)

// errInheritUnsupported is returned where a process cannot inherit
// listening sockets as numbered descriptors (Restart and systemd socket
// activation need Unix).
var errInheritUnsupported = errors.New("listen: inherited descriptors are not supported on " + runtime.GOOS)

// inheritFD cannot take over a numbered descriptor on this system.
func inheritFD(int) error { return errInheritUnsupported }
