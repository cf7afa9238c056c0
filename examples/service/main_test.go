package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"syscall"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	if os.Getenv("SERVICE_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var listeningLine = regexp.MustCompile(`msg=listening url=(\S+) door=\S+ engine=(\S+)`)

// TestRunsFromAnyDirectory: the service started from a directory with no
// public/ in it serves its page and assets (they are built in; it failed
// with "setup err=stat .../public: no such file or directory"), and its
// "listening" line names the engine that serves, not "auto".
func TestRunsFromAnyDirectory(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "SERVICE_MAIN=1", "RIPTIDE_ENGINE=")
	cmd.Dir = t.TempDir()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Error("the service did not stop on SIGTERM")
		}
	}()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	var m []string
	for m == nil {
		line, ok := <-lines
		if !ok {
			t.Fatal("the service exited before listening")
		}
		t.Log(line)
		m = listeningLine.FindStringSubmatch(line)
	}
	go func() {
		for line := range lines {
			t.Log(line)
		}
	}()
	want := "eventloop"
	if runtime.GOOS != "linux" {
		want = "goroutine"
	}
	if m[2] != want {
		t.Errorf("listening line says engine=%s, want %s", m[2], want)
	}
	for _, path := range []string{"/", "/assets/app.js"} {
		res, err := http.Get(m[1] + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		file := "public/index.html"
		if path != "/" {
			file = "public" + path
		}
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != 200 || string(body) != string(src) {
			t.Errorf("GET %s: %s, %d bytes; want 200 and %s", path, res.Status, len(body), file)
		}
	}
}
