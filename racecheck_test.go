package riptide

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide/internal/israce"
)

// keptPath is where TestRaceKeptPathChild's handler keeps c.Path().
var keptPath []byte

// TestRaceKeptPath: under -race, a handler that stores c.Path() in a
// global and reads it after returning is caught: the race detector
// reports the read against keptCtxBytesAfterHandlerReturned's write, and
// the kept bytes read as the rule (racecheck.go). A handler that keeps a
// copy passes. The handlers run in a child process (this test binary
// again), so that the race report fails the child, not this suite.
func TestRaceKeptPath(t *testing.T) {
	if !israce.Enabled {
		t.Skip("the check is in race builds only")
	}
	run := func(mode string) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRaceKeptPathChild$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "RIPTIDE_RACE_KEPT="+mode)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("kept")
	if err == nil {
		t.Fatalf("the child keeping c.Path() passed:\n%s", out)
	}
	for _, want := range []string{
		"WARNING: DATA RACE",
		"riptide.keptCtxBytesAfterHandlerReturned",
		"kept path reads \"riptide: Ctx bytes kept after the handler returned",
		"--- FAIL: TestRaceKeptPathChild",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the child's output lacks %q:\n%s", want, out)
		}
	}
	if out, err := run("copy"); err != nil || !strings.Contains(out, "--- PASS: TestRaceKeptPathChild") {
		t.Errorf("the child keeping a copy of c.Path() failed (%v):\n%s", err, out)
	}
}

// TestRaceKeptPathChild is TestRaceKeptPath's child: its handler keeps
// c.Path() (or a copy) of its first request, and the test reads it after the response, until
// it changes or a bound passes.
func TestRaceKeptPathChild(t *testing.T) {
	mode := os.Getenv("RIPTIDE_RACE_KEPT")
	if mode == "" {
		t.Skip("run by TestRaceKeptPath")
	}
	const path = "/reports/2026/12/quarterly-revenue-by-region-and-product.csv"
	_, addr := startServer(t, nil, func(c *Ctx) {
		switch {
		case string(c.Path()) != path: // only the first request's
		case mode == "copy":
			keptPath = []byte(string(c.Path()))
		default:
			keptPath = c.Path()
		}
		c.WriteString("ok")
	})
	rc := dial(t, addr)
	rc.send("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, body := rc.resp("GET"); resp.StatusCode != 200 || body != "ok" {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	// A second request on the connection: the Ctx and its read buffer are
	// reused.
	rc.send("GET /other-path HTTP/1.1\r\nHost: x\r\n\r\n")
	rc.resp("GET")
	// Kept bytes change once the poisoning goroutine ran; a copy never.
	for end := time.Now().Add(5 * time.Second); mode == "kept" && string(keptPath) == path && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
	}
	if string(keptPath) != path {
		t.Errorf("kept path reads %q, want %q", keptPath, path)
	}
}
