//go:build !unix

package main

import "os"

// drainSignal is nil here: there is no SIGUSR1, so draining without
// stopping is not available by signal (SIGINT still drains and stops).
var drainSignal os.Signal
