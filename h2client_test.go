package riptide_test

// Real HTTP/2 clients against every target, in h2c (prior knowledge) and
// TLS (ALPN) mode: Go's http.Client, curl and Python's httpx (and Node's
// http2 module, in h2node_test.go). Each checks the protocol the client
// actually used, not just the answer.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestH2GoClient(t *testing.T) {
	t.Parallel()
	forEachH2(t, func(t *testing.T, in *h2Instance) {
		c := h2Client(t, in)
		assertServes(t, in)

		// A body larger than the initial flow-control window, echoed back.
		body := bytes.Repeat([]byte("0123456789abcdef"), 20000)
		resp, err := c.Post(in.url("/"), "application/octet-stream", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.ProtoMajor != 2 || resp.StatusCode != 200 || !bytes.Equal(got, body) {
			t.Fatalf("POST echo: %s %d, %d bytes back (err %v), want HTTP/2.0 200 with the %d bytes sent",
				resp.Proto, resp.StatusCode, len(got), err, len(body))
		}

		// Concurrent requests multiplexed on the client's connection.
		var wg sync.WaitGroup
		errs := make(chan error, 50)
		for range 50 {
			wg.Go(func() {
				resp, err := c.Get(in.url("/"))
				if err != nil {
					errs <- err
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.ProtoMajor != 2 || string(b) != h2HelloBody {
					errs <- fmt.Errorf("concurrent GET: %s %q", resp.Proto, b)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

// TestH2HTTP1StillServed checks that the h2-capable listener still serves
// HTTP/1.1 clients: plain HTTP/1.1 on the h2c port, ALPN http/1.1 over TLS.
func TestH2HTTP1StillServed(t *testing.T) {
	t.Parallel()
	forEachH2(t, func(t *testing.T, in *h2Instance) {
		tr := &http.Transport{}
		var p http.Protocols
		p.SetHTTP1(true)
		tr.Protocols = &p
		if in.tls {
			tr.TLSClientConfig = h2TestClientTLS(t)
		}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr, Timeout: 30 * time.Second}).Get(in.url("/"))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.ProtoMajor != 1 || resp.StatusCode != 200 || string(b) != h2HelloBody {
			t.Fatalf("HTTP/1.1 client: got %s %d %q", resp.Proto, resp.StatusCode, b)
		}
	})
}

// curlHTTP2 returns the path of a curl with HTTP/2 support, or skips t.
func curlHTTP2(t *testing.T) string {
	t.Helper()
	curl, err := exec.LookPath("curl")
	if err != nil {
		needTool(t, "curl not installed (apt-get install curl)")
	}
	if v, _ := exec.Command(curl, "--version").Output(); !bytes.Contains(v, []byte("HTTP2")) {
		needTool(t, "this curl has no HTTP/2 support:\n%s", v)
	}
	return curl
}

func TestH2Curl(t *testing.T) {
	t.Parallel()
	curl := curlHTTP2(t)
	forEachH2(t, func(t *testing.T, in *h2Instance) {
		proto := "--http2-prior-knowledge"
		if in.tls {
			proto = "--http2"
		}
		run := func(args ...string) (version, status, body string) {
			t.Helper()
			dir := t.TempDir()
			out := filepath.Join(dir, "body")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			args = append([]string{"-sS", "-k", proto, "-o", out, "-w", "%{http_version} %{http_code}"}, args...)
			meta, err := exec.CommandContext(ctx, curl, args...).CombinedOutput()
			if err != nil {
				t.Fatalf("curl %v: %v\n%s", args, err, meta)
			}
			b, _ := os.ReadFile(out)
			version, status, _ = strings.Cut(string(meta), " ")
			return version, status, string(b)
		}
		if v, s, b := run(in.url("/")); v != "2" || s != "200" || b != h2HelloBody {
			t.Errorf("curl GET: HTTP/%s %s %q, want HTTP/2 200 %q", v, s, b, h2HelloBody)
		}
		payload := strings.Repeat("riptide ", 10000)
		if v, s, b := run("--data-binary", payload, in.url("/")); v != "2" || s != "200" || b != payload {
			t.Errorf("curl POST echo: HTTP/%s %s, %d bytes back, want HTTP/2 200 with %d bytes", v, s, len(b), len(payload))
		}
	})
}

// httpxScript fetches GET / and POST / (echo) with httpx over HTTP/2 from
// each server its arguments name (pairs of URL and "1" for TLS, "0" for
// h2c) and prints what it saw as JSON, one line per server, in order.
const httpxScript = `
import json, sys, httpx
args = sys.argv[1:]
for url, tls in zip(args[0::2], args[1::2]):
    tls = tls == "1"
    try:
        # Over TLS, ALPN offers h2 and http/1.1; for http:// URLs,
        # http1=False makes httpx use h2c prior knowledge.
        with httpx.Client(http1=tls, http2=True, verify=False, timeout=30) as c:
            g = c.get(url)
            p = c.post(url, content=b"x" * 100000)
            r = {"get_version": g.http_version, "get_status": g.status_code, "get_body": g.text,
                 "post_version": p.http_version, "post_status": p.status_code, "post_len": len(p.content)}
    except Exception as e:
        r = {"error": repr(e)}
    print(json.dumps(r), flush=True)
`

// TestH2Httpx has Python's httpx (an independent HTTP/2 client, h2 under
// it) GET and POST every target in both modes. One python serves them all:
// its start and the httpx import cost more than the requests.
func TestH2Httpx(t *testing.T) {
	t.Parallel()
	python, env := httpxPython(t)
	var ins []*h2Instance
	var args []string
	for _, target := range h2Targets {
		for _, useTLS := range []bool{false, true} {
			in := startH2(t, target, useTLS)
			tlsArg := "0"
			if in.tls {
				tlsArg = "1"
			}
			ins = append(ins, in)
			args = append(args, in.url("/"), tlsArg)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, append([]string{"-c", httpxScript}, args...)...)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("httpx: %v\n%s%s", err, out, stderr)
	}
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	if len(lines) != len(ins) {
		t.Fatalf("httpx printed %d results for %d servers:\n%s", len(lines), len(ins), out)
	}
	for i, in := range ins {
		t.Run(in.name+"/"+in.mode(), func(t *testing.T) {
			var r struct {
				Error       string `json:"error"`
				GetVersion  string `json:"get_version"`
				GetStatus   int    `json:"get_status"`
				GetBody     string `json:"get_body"`
				PostVersion string `json:"post_version"`
				PostStatus  int    `json:"post_status"`
				PostLen     int    `json:"post_len"`
			}
			if err := json.Unmarshal(lines[i], &r); err != nil {
				t.Fatalf("httpx output %q: %v", lines[i], err)
			}
			if r.Error != "" {
				t.Fatalf("httpx: %s", r.Error)
			}
			if r.GetVersion != "HTTP/2" || r.GetStatus != 200 || r.GetBody != h2HelloBody {
				t.Errorf("httpx GET: %s %d %q, want HTTP/2 200 %q", r.GetVersion, r.GetStatus, r.GetBody, h2HelloBody)
			}
			if r.PostVersion != "HTTP/2" || r.PostStatus != 200 || r.PostLen != 100000 {
				t.Errorf("httpx POST echo: %s %d, %d bytes, want HTTP/2 200 with 100000 bytes", r.PostVersion, r.PostStatus, r.PostLen)
			}
		})
	}
}

// httpxPython returns a python3 and an environment in which `import httpx,
// h2` works: the interpreter's own packages, else a copy installed with pip
// into the user cache directory (once). It skips the test if python3 is
// missing or pip cannot install the packages (no registry access).
func httpxPython(t *testing.T) (string, []string) {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		needTool(t, "python3 not installed; needed for the httpx HTTP/2 client test")
	}
	check := func(env []string) bool {
		cmd := exec.Command(python, "-c", "import httpx, h2")
		cmd.Env = env
		return cmd.Run() == nil
	}
	env := os.Environ()
	if check(env) {
		return python, env
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "riptide-test", "pylib")
	env = append(env, "PYTHONPATH="+dir)
	if check(env) {
		return python, env
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
		"--target", dir, "httpx[http2]").CombinedOutput()
	if err != nil {
		needTool(t, "httpx is not installed and `pip install 'httpx[http2]'` failed (no access to the package registry?): %v\n%s", err, out)
	}
	if !check(env) {
		needTool(t, "pip installed httpx[http2] into %s but it does not import", dir)
	}
	return python, env
}

// TestH2CUpgrade has curl ask for HTTP/2 on an http:// URL, which it does
// with "Upgrade: h2c" (RFC 7540 §3.2), on the riptide targets (net/http's
// server does not implement the upgrade).
func TestH2CUpgrade(t *testing.T) {
	t.Parallel()
	curl, err := exec.LookPath("curl")
	if err != nil {
		needTool(t, "curl not installed (apt-get install curl)")
	}
	if v, _ := exec.Command(curl, "--version").Output(); !bytes.Contains(v, []byte("HTTP2")) {
		needTool(t, "this curl has no HTTP/2 support:\n%s", v)
	}
	for _, target := range h2Targets {
		if !strings.HasPrefix(target.name, "riptide") {
			continue
		}
		t.Run(target.name, func(t *testing.T) {
			in := startH2(t, target, false)
			for _, post := range []bool{false, true} {
				out := filepath.Join(t.TempDir(), "body")
				args := []string{"-sS", "--http2", "-o", out, "-w", "%{http_version} %{http_code}"}
				want := h2HelloBody
				if post {
					want = "upgrade with a body"
					args = append(args, "--data-binary", want)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				meta, err := exec.CommandContext(ctx, curl, append(args, in.url("/"))...).CombinedOutput()
				cancel()
				if err != nil {
					t.Fatalf("curl: %v\n%s", err, meta)
				}
				body, _ := os.ReadFile(out)
				if string(meta) != "2 200" || string(body) != want {
					t.Errorf("curl --http2 (upgrade, post=%v): %q %q, want \"2 200\" %q", post, meta, body, want)
				}
			}
		})
	}
}
