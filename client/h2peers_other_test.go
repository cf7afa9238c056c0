//go:build !linux

package client_test

import (
	"os/exec"
	"syscall"
)

// peerProcAttr: the external peers are Debian packages, run on Linux; elsewhere
// a peer found on PATH runs as a plain child.
func peerProcAttr() *syscall.SysProcAttr { return nil }

// killPeer kills the peer's process.
func killPeer(cmd *exec.Cmd) { cmd.Process.Kill() }
