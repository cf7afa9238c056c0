//go:build !unix

package listen

import "errors"

func setReusePort(uintptr) error {
	return errors.New("listen: SO_REUSEPORT is not supported on this system")
}
