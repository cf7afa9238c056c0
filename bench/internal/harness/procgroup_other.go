//go:build !unix

package harness

import "os/exec"

// ownGroup does nothing here: there are no process groups to signal.
func ownGroup(*exec.Cmd) {}

// signalGroup kills cmd's process: without Unix signals there is no
// graceful SIGTERM, and no group.
func signalGroup(cmd *exec.Cmd, _ bool) { cmd.Process.Kill() }
