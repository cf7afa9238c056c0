//go:build unix

package static

import "syscall"

// openFlags opens without blocking: opening a FIFO planted in the root
// must not hang the handler (it is then refused as not a regular file).
const openFlags = syscall.O_RDONLY | syscall.O_NONBLOCK | syscall.O_CLOEXEC

// colonOK: ':' is an ordinary file name byte here.
const colonOK = true
