//go:build unix

package static

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A FIFO in the root is not served and opening it does not block (it
// would wait forever for a writer).
func TestFIFONotServed(t *testing.T) {
	root := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	addr := serveDir(t, root, Options{})
	done := make(chan int, 1)
	go func() {
		res, _ := get(t, addr, "GET", "/fifo")
		done <- res.StatusCode
	}()
	select {
	case code := <-done:
		if code != 404 {
			t.Fatalf("fifo: %d, want 404", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("request for a FIFO hangs")
	}
}
