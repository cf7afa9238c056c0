//go:build !linux

package harness

import "syscall"

// dieWithParent does nothing here: only Linux has a parent-death signal.
// Stop, or the harness's cleanup, ends the child.
func dieWithParent(*syscall.SysProcAttr) {}
