package riptide

import (
	"io"
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
// global and reads it after returning is caught: the kept bytes read as
// the rule once the request is over (racecheck.go). A handler that keeps a
// copy passes. On HTTP/1.1 and HTTP/2 (h2c). The handlers run in a child
// process (this test binary again), so that its failure is not this
// suite's.
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
	for _, proto := range []string{"h1", "h2"} {
		out, err := run("kept-" + proto)
		if err == nil {
			t.Fatalf("%s: the child keeping c.Path() passed:\n%s", proto, out)
		}
		for _, want := range []string{
			"kept path reads \"riptide: Ctx bytes kept after the handler returned",
			"--- FAIL: TestRaceKeptPathChild",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: the child's output lacks %q:\n%s", proto, want, out)
			}
		}
		if out, err := run("copy-" + proto); err != nil || !strings.Contains(out, "--- PASS: TestRaceKeptPathChild") {
			t.Errorf("%s: the child keeping a copy of c.Path() failed (%v):\n%s", proto, err, out)
		}
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
	kept := strings.HasPrefix(mode, "kept")
	srv := &Server{}
	if strings.HasSuffix(mode, "-h2") {
		srv.HTTP2 = &HTTP2Config{H2C: true}
	}
	_, addr := startServer(t, srv, func(c *Ctx) {
		switch {
		case string(c.Path()) != path: // only the first request's
		case kept:
			keptPath = c.Path()
		default:
			keptPath = []byte(string(c.Path()))
		}
		c.WriteString("ok")
	})
	// The kept bytes are read after the response (as a goroutine left
	// behind would), then again after a second request: on HTTP/1.1 on the
	// same connection (the Ctx and its read buffer reused), on HTTP/2 a
	// stream of the same connection.
	var first string
	if srv.HTTP2 != nil {
		client := h2cTestClient(t)
		for _, p := range []string{path, "/other-path"} {
			res, err := client.Get("http://" + addr + p)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if first == "" {
				first = string(keptPath)
			}
		}
	} else {
		rc := dial(t, addr)
		for _, p := range []string{path, "/other-path"} {
			rc.send("GET " + p + " HTTP/1.1\r\nHost: x\r\n\r\n")
			if resp, body := rc.resp("GET"); resp.StatusCode != 200 || body != "ok" {
				t.Fatalf("got %d %q", resp.StatusCode, body)
			}
			if first == "" {
				first = string(keptPath)
			}
		}
	}
	if first != path {
		t.Errorf("kept path reads %q after the response, want %q", first, path)
	}
	// Kept bytes change once the poisoning goroutine ran; a copy never.
	for end := time.Now().Add(5 * time.Second); kept && string(keptPath) == path && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
	}
	if string(keptPath) != path {
		t.Errorf("kept path reads %q, want %q", keptPath, path)
	}
}
