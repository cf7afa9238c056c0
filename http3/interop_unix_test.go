//go:build unix

package http3

import (
	"os/exec"
	"syscall"
	"time"
)

// chromiumSysProcAttr starts Chromium in its own process group, so that
// stopChromium ends its helper processes too.
func chromiumSysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// stopChromium asks Chromium's process group to terminate (SIGTERM: the
// browser then finishes its NetLog), and kills it after 10 s.
func stopChromium(cmd *exec.Cmd, exited <-chan error) {
	pgid := cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-exited
	}
	// Helpers that outlived the browser.
	syscall.Kill(-pgid, syscall.SIGKILL)
}
