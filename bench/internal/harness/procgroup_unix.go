//go:build unix

package harness

import (
	"os/exec"
	"syscall"
)

// ownGroup makes cmd start in its own process group, so that signalGroup
// reaches nginx's workers too, and (on Linux) killed if the harness dies
// without running its cleanup.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
}

// signalGroup sends SIGTERM, or SIGKILL if kill, to the process group led
// by cmd's process.
func signalGroup(cmd *exec.Cmd, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	syscall.Kill(-cmd.Process.Pid, sig)
}
