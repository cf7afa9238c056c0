package client_test

import (
	"os/exec"
	"syscall"
)

// peerProcAttr starts an external peer in its own process group, killed
// with the test process if that dies first.
func peerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killPeer kills the peer's process group: the peer and its workers.
func killPeer(cmd *exec.Cmd) { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
