//go:build !linux

package clientbench

import "os/exec"

// setDeathSignal does nothing here: stop kills the server process.
func setDeathSignal(cmd *exec.Cmd) {}
