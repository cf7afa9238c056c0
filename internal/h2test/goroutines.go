package h2test

import (
	"bytes"
	"runtime"
	"testing"
	"time"
)

// ConnFrame is in the stack of every goroutine that serves an internal/h2
// connection: its reader, its writer, and the workers running its
// handlers; not in an idle worker's, nor in an event loop's.
const ConnFrame = "/internal/h2.(*Conn)."

// Goroutines counts the goroutines with frame in their stack.
func Goroutines(frame string) int {
	_, n := goroutines(frame)
	return n
}

// goroutines returns the stacks of every goroutine and how many of them
// hold frame.
func goroutines(frame string) ([]byte, int) {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	n := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte(frame)) {
			n++
		}
	}
	return buf, n
}

// WaitGoroutines waits, at most AttackBound, until at most max goroutines
// hold frame in their stack, and fails t with every stack if more still do.
func WaitGoroutines(t testing.TB, frame string, max int) {
	t.Helper()
	deadline := time.Now().Add(AttackBound)
	for {
		stacks, n := goroutines(frame)
		if n <= max {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines run %s..., want at most %d (as many as before the attack)\n%s", n, frame, max, stacks)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
