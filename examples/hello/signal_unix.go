//go:build unix

package main

import (
	"os"
	"syscall"
)

// drainSignal starts draining (handleSignals).
var drainSignal os.Signal = syscall.SIGUSR1
