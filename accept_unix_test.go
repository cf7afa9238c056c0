//go:build unix

package riptide

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// With the server's file descriptors used up, connections wait in the
// backlog while accepts fail (counted, logged at most once a second); once
// descriptors are free again they are accepted and served, round after
// round, on every engine (issue 23 item 3: the event loop stopped
// accepting for good in 4 runs of 5). Each engine runs in a child process
// whose RLIMIT_NOFILE is lowered, so the rest of the suite keeps its own.
func TestAcceptResumesAfterFDLimit(t *testing.T) {
	if e := os.Getenv("RIPTIDE_HELPER_FDLIMIT"); e != "" {
		fdLimitChild(t, e)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []Engine{EngineEventLoop, EngineOnLoop, EngineGoroutine} {
		t.Run(e.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, exe, "-test.run=^TestAcceptResumesAfterFDLimit$", "-test.v", "-test.count=1")
			// Two loops on the event-loop engines, whatever the machine.
			cmd.Env = append(os.Environ(), "RIPTIDE_HELPER_FDLIMIT="+e.String(), "GOMAXPROCS=2")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child process: %v\n%s", err, out)
			}
			for line := range strings.Lines(string(out)) {
				if strings.Contains(line, "rounds:") {
					t.Log(strings.TrimSpace(line))
				}
			}
		})
	}
}

// fdLimitChild is TestAcceptResumesAfterFDLimit in the child process.
func fdLimitChild(t *testing.T, engine string) {
	e := Engine(-1)
	for i, name := range engineNames {
		if name == engine {
			e = Engine(i)
		}
	}
	if e < 0 {
		t.Fatalf("engine %q", engine)
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = min(256, lim.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	srv, addr := startServer(t, &Server{Engine: e, Logger: slog.New(slog.NewTextHandler(&logs, nil))}, hello)
	port, _ := strconv.Atoi(addr[strings.LastIndexByte(addr, ':')+1:])
	sa := &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}
	rc := dial(t, addr) // the engine's goroutines and descriptors start
	rc.send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	rc.resp("GET")
	rc.nc.Close()
	acceptErrs := func() uint64 {
		var st Stats
		srv.Stats(&st)
		return st.AcceptErrors.FDLimit
	}

	const rounds, clients, failures = 5, 3, 3
	start := time.Now()
	for round := 1; round <= rounds; round++ {
		for deadline := time.Now().Add(10 * time.Second); srv.nconns.Load() != 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the last round's connections still open after 10 s", round)
			}
		}
		// The clients' sockets exist before the descriptors run out;
		// connecting takes none.
		socks := make([]int, clients)
		for i := range socks {
			fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
			if err != nil {
				t.Fatal(err)
			}
			syscall.CloseOnExec(fd)
			tv := syscall.Timeval{Sec: 10} // reads fail after 10 s
			if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
				t.Fatal(err)
			}
			socks[i] = fd
		}
		fill := takeFDs(t, nil)
		base := acceptErrs()
		for _, fd := range socks {
			if err := syscall.Connect(fd, sa); err != nil {
				t.Fatalf("round %d: connect: %v", round, err)
			}
			if _, err := syscall.Write(fd, []byte("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")); err != nil {
				t.Fatalf("round %d: write: %v", round, err)
			}
		}
		// The server fails to accept them and keeps failing while the
		// descriptors stay taken (any it frees are taken too).
		for deadline := time.Now().Add(10 * time.Second); acceptErrs() < base+failures; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: %d failed accepts in 10 s with the descriptors used up, want %d: accepting stopped",
					round, acceptErrs()-base, failures)
			}
			fill = takeFDs(t, fill)
		}
		for _, fd := range fill {
			syscall.Close(fd)
		}
		// Now each is accepted and answered, within 10 s (ten times the
		// longest back-off) or the read fails.
		for i, fd := range socks {
			var resp []byte
			buf := make([]byte, 512)
			for !strings.Contains(string(resp), "Hello, World!") {
				n, err := syscall.Read(fd, buf)
				if err == syscall.EINTR {
					continue // a signal (the runtime's preemption) interrupted the blocking read
				}
				if err != nil || n == 0 {
					t.Fatalf("round %d: client %d not served within 10 s of the descriptors' release (read: %v, got %q)",
						round, i+1, err, resp)
				}
				resp = append(resp, buf[:n]...)
			}
			if !strings.HasPrefix(string(resp), "HTTP/1.1 200 ") {
				t.Fatalf("round %d: client %d: %q", round, i+1, resp)
			}
			syscall.Close(fd)
		}
	}
	elapsed := time.Since(start)

	var st Stats
	srv.Stats(&st)
	lines := strings.Count(logs.String(), `msg="riptide: accept error; retrying"`)
	t.Logf("%s: %d rounds: %d failed accepts (%+v), %d log lines in %v", e, rounds, st.AcceptErrors.FDLimit, st.AcceptErrors, lines, elapsed.Round(time.Millisecond))
	if st.AcceptErrors.FDLimit < rounds*failures || st.AcceptErrors.Memory != 0 || st.AcceptErrors.Other != 0 {
		t.Errorf("accept errors %+v, want FDLimit >= %d and no other", st.AcceptErrors, rounds*failures)
	}
	if !strings.Contains(logs.String(), "too many open files") {
		t.Errorf("no EMFILE line in the log:\n%s", logs.String())
	}
	// Lines are at least acceptLogEvery apart.
	if most := 1 + int(elapsed/acceptLogEvery); lines < 1 || lines > most {
		t.Errorf("%d accept-error lines in %v, want 1 to %d:\n%s", lines, elapsed, most, logs.String())
	}
}

// takeFDs opens /dev/null until the descriptor limit is reached and
// returns fds with the new descriptors appended.
func takeFDs(t *testing.T, fds []int) []int {
	for {
		fd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if errors.Is(err, syscall.EMFILE) {
			return fds
		}
		if err != nil {
			t.Fatal(err)
		}
		fds = append(fds, fd)
	}
}
