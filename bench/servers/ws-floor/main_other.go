//go:build !linux

// Command ws-floor is the WebSocket benchmark's reference floor (see
// main.go): it is built on epoll and runs on Linux only.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "ws-floor: Linux only (epoll)")
	os.Exit(2)
}
