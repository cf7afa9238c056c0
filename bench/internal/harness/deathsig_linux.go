package harness

import "syscall"

// dieWithParent has the kernel kill the child when the harness dies.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
