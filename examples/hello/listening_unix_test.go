//go:build unix

package main

import (
	"runtime"
	"strings"
	"testing"
)

// TestListeningLineEngine: the "listening" line names the engine the
// server runs (eventloop on Linux, goroutine with -tls), not the -engine
// flag's "auto".
func TestListeningLineEngine(t *testing.T) {
	want := "eventloop"
	if runtime.GOOS != "linux" {
		want = "goroutine"
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, want},
		{[]string{"-engine", "goroutine"}, "goroutine"},
		{[]string{"-tls"}, "goroutine"},
	} {
		b := startBackend(t, tc.args...)
		b.mu.Lock()
		line := b.listening
		b.mu.Unlock()
		if !strings.Contains(line, " engine="+tc.want+" ") && !strings.HasSuffix(line, " engine="+tc.want) {
			t.Errorf("hello %v logged %q, want engine=%s", tc.args, line, tc.want)
		}
	}
}
