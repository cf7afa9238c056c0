package riptide

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testParallel is how many of the root tests that call t.Parallel run at
// once when -test.parallel is not given. They spend their time waiting on
// sockets, timeouts and child processes, not on CPU, so Go's default (one
// per CPU: 2 on a small CI machine) would leave the machine idle. The
// tests that measure the process (live heap, goroutines, allocations, RSS,
// file descriptors) or set its state stay serial (every serial test runs
// before the parallel ones start), or run alone in a process of their own
// (inOwnProcess).
const testParallel = 8

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(max(testParallel, runtime.GOMAXPROCS(0))))
	}
	os.Exit(m.Run())
}

// isolatedEnv names, in a child process of inOwnProcess, the one test it
// runs.
const isolatedEnv = "RIPTIDE_TEST_ISOLATED"

// InOwnProcess is inOwnProcess for the external tests.
var InOwnProcess = inOwnProcess

// inOwnProcess runs the calling test (or fuzz seed) alone in a child
// process of the test binary, in parallel with the other tests, and
// reports true: the caller returns at once. In the child it reports false
// and the test runs there. It is for the tests that measure their process
// (live heap, goroutine count) and so could not share it with other tests:
// in a process of their own their measure is what it was when they ran
// serially, and they no longer hold up the whole suite while they wait on
// stalled writes. The child's verdict is the test's: a failure, a race
// report or a skip there is one here, with the child's output.
//
// Under coverage or fuzzing the test runs in this process, serially.
func inOwnProcess(t *testing.T) bool {
	t.Helper()
	if os.Getenv(isolatedEnv) == t.Name() {
		return false
	}
	if testing.CoverMode() != "" || flagValue("test.fuzz") != "" {
		return false
	}
	t.Parallel()
	var run []string
	for _, part := range strings.Split(t.Name(), "/") {
		run = append(run, "^"+regexp.QuoteMeta(part)+"$")
	}
	args := []string{"-test.run=" + strings.Join(run, "/"), "-test.count=1", "-test.v", "-test.short=" + strconv.FormatBool(testing.Short())}
	if d, ok := t.Deadline(); ok {
		args = append(args, "-test.timeout="+time.Until(d).String())
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), isolatedEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	switch {
	case err != nil:
		t.Fatalf("in its own process: %v\n%s", err, out)
	case bytes.Contains(out, []byte("--- SKIP: "+t.Name()+" ")):
		t.Skipf("in its own process:\n%s", out)
	case !bytes.Contains(out, []byte("--- PASS: "+t.Name()+" ")):
		t.Fatalf("in its own process: the test did not run:\n%s", out)
	case testing.Verbose():
		t.Logf("in its own process:\n%s", out)
	}
	return true
}

// flagValue returns the value of the named flag, "" if there is none.
func flagValue(name string) string {
	if f := flag.Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}
