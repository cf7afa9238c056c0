package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// unitFile is a systemd unit file: section → key → values, in order.
type unitFile map[string]map[string][]string

func readUnit(t *testing.T, path string) unitFile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u := unitFile{}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[' && line[len(line)-1] == ']':
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s: bad line %q", path, line)
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	return u
}

// one returns the single value of key in section, failing the test if
// there is not exactly one.
func (u unitFile) one(t *testing.T, section, key string) string {
	t.Helper()
	vs := u[section][key]
	if len(vs) != 1 {
		t.Fatalf("[%s] %s: %q, want one value", section, key, vs)
	}
	return vs[0]
}

// TestSystemdUnits checks the unit files of examples/hello/systemd (the
// ones docs/fleet.md shows) without systemd: systemd-analyze verify
// accepts them when it is installed; the service starts hello as socket
// activation does (the socket at descriptor 3, LISTEN_PID, LISTEN_FDS,
// LISTEN_FDNAMES) with the unit's ExecStart arguments and environment, and
// hello serves on that socket rather than binding its own; and the restart
// the unit documents (systemctl restart: KillSignal, then a new process on
// the socket systemd kept) loses no request of a client that keeps
// connecting throughout.
func TestSystemdUnits(t *testing.T) {
	sock := readUnit(t, "systemd/riptide-hello.socket")
	svc := readUnit(t, "systemd/riptide-hello.service")
	addr := sock.one(t, "Socket", "ListenStream")
	name := sock.one(t, "Socket", "FileDescriptorName")
	if !strings.Contains(svc.one(t, "Unit", "Requires"), "riptide-hello.socket") {
		t.Error("the service does not require its socket")
	}
	args := strings.Fields(svc.one(t, "Service", "ExecStart"))
	bin := args[0]
	args = args[1:]
	i := 0
	for i < len(args) && args[i] != "-addr" {
		i++
	}
	if i+1 >= len(args) || args[i+1] != addr {
		t.Fatalf("ExecStart %q: -addr must be the socket's ListenStream %s", args, addr)
	}
	if sig := svc.one(t, "Service", "KillSignal"); sig != "SIGTERM" {
		t.Fatalf("KillSignal=%s: hello drains on SIGTERM", sig)
	}

	if path, err := exec.LookPath("systemd-analyze"); err == nil {
		// verify wants ExecStart's binary to exist: point it at this one.
		dir := t.TempDir()
		for _, f := range []string{"riptide-hello.socket", "riptide-hello.service"} {
			b, err := os.ReadFile(filepath.Join("systemd", f))
			if err != nil {
				t.Fatal(err)
			}
			b = []byte(strings.ReplaceAll(string(b), bin, os.Args[0]))
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out, err := exec.Command(path, "verify", filepath.Join(dir, "riptide-hello.socket"), filepath.Join(dir, "riptide-hello.service")).CombinedOutput()
		if err != nil || len(out) != 0 {
			t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
		}
	} else {
		t.Log("systemd-analyze not installed: unit syntax not verified")
	}

	// The socket systemd would hold, on a free port in place of the unit's.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	args[i+1] = ln.Addr().String()
	env := append(os.Environ(), "HELLO_MAIN=1", "LISTEN_FDS=1", "LISTEN_FDNAMES="+name)
	env = append(env, svc["Service"]["Environment"]...)
	start := func() (*exec.Cmd, <-chan struct{}, *error) {
		// sh sets LISTEN_PID to its own pid and execs: the pid is hello's.
		cmd := exec.Command("/bin/sh", append([]string{"-c", `LISTEN_PID=$$ exec "$0" "$@"`, os.Args[0]}, args...)...)
		cmd.Env = env
		cmd.ExtraFiles = []*os.File{f}
		logs := new(syncLog)
		cmd.Stderr = logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		var werr error
		go func() { werr = cmd.Wait(); close(exited) }()
		t.Cleanup(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			<-exited
			if t.Failed() {
				t.Logf("hello pid %d:\n%s", cmd.Process.Pid, logs.String())
			}
		})
		return cmd, exited, &werr
	}

	var mu sync.Mutex
	ok, errs := 0, []string{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 20 * time.Second}
		for {
			select {
			case <-stop:
				return
			default:
			}
			resp, err := c.Get("http://" + ln.Addr().String() + "/")
			var body []byte
			if err == nil {
				body, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			mu.Lock()
			if err != nil || string(body) != "Hello, World!" {
				errs = append(errs, "GET /: "+string(body)+" "+errString(err))
			} else {
				ok++
			}
			mu.Unlock()
		}
	})
	served := func(n int) {
		t.Helper()
		mu.Lock()
		want := ok + n
		mu.Unlock()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			mu.Lock()
			done := ok >= want
			mu.Unlock()
			if done {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("fewer than %d requests served in 30s", n)
			}
		}
	}

	first, exited, werr := start()
	ln.Close() // as systemd: only the descriptor f keeps the socket now
	served(50)
	// systemctl restart: KillSignal, wait for the exit, start anew.
	first.Process.Signal(syscall.SIGTERM)
	<-exited
	if *werr != nil {
		t.Fatalf("hello on SIGTERM: %v", *werr)
	}
	start()
	served(50)
	close(stop)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(errs) != 0 {
		t.Fatalf("%d of %d requests failed across the restart; first: %s", len(errs), len(errs)+ok, errs[0])
	}
}

// syncLog collects a process's stderr.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
