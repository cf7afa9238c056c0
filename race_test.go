package riptide

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide/internal/israce"
)

// TestRetainedCtxIsARace shows that the ownership rule on Ctx is enforced
// by the race detector: a handler that keeps its Ctx and reads it from
// another goroutine while the connection serves the next request is
// reported as a data race. The misbehaving handler runs in a child process
// (this test binary, re-run with RIPTIDE_RETAIN_CHILD=1) because a race
// report fails the process it happens in; the parent asserts the child
// failed with "DATA RACE" naming riptide's Ctx. Without -race there is
// nothing to observe and the test is skipped.
func TestRetainedCtxIsARace(t *testing.T) {
	t.Parallel()
	if os.Getenv("RIPTIDE_RETAIN_CHILD") == "1" {
		retainCtxChild(t)
		return
	}
	if !israce.Enabled {
		t.Skip("needs -race")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRetainedCtxIsARace$", "-test.count=1")
	cmd.Env = append(os.Environ(), "RIPTIDE_RETAIN_CHILD=1", "GORACE=halt_on_error=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "WARNING: DATA RACE") || !strings.Contains(string(out), "riptide") {
		t.Fatalf("child with a retained Ctx: err=%v, want a data race report; output:\n%s", err, out)
	}
}

// retainCtxChild serves two requests on one connection with a handler that
// leaks its Ctx to a goroutine reading the request path.
func retainCtxChild(t *testing.T) {
	leaked := make(chan *Ctx, 1)
	done := make(chan struct{})
	_, addr := startServer(t, nil, func(c *Ctx) {
		select {
		case leaked <- c:
			// Misuse: the Ctx outlives the handler.
			go func() {
				defer close(done)
				for i := 0; i < 200; i++ {
					_ = string(c.Path())
					time.Sleep(time.Millisecond)
				}
			}()
		default:
		}
		hello(c)
	})
	rc := dial(t, addr)
	for i := 0; i < 50; i++ {
		rc.send("GET /next HTTP/1.1\r\nHost: x\r\n\r\n")
		rc.resp("GET")
	}
	<-done
}
