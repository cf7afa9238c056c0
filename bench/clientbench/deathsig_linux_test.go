package clientbench

import (
	"os/exec"
	"syscall"
)

// setDeathSignal has the kernel kill the server process if the benchmark
// process dies without stopping it.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
