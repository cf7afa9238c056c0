package harness

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
)

// TestParseH3rs: the Rust client's JSON line becomes the run's statistics,
// whatever it printed before it; output without one is an error.
func TestParseH3rs(t *testing.T) {
	out := []byte("warning: something on stderr\n" +
		`{"client":"h3load-rs","connections":10,"streams":10,"requests":20000,"errors":3,"bad_status":2,"bytes":260000,"seconds":2.0,"rps":10000.0,"p50_us":900,"p90_us":1500,"p99_us":4000,"max_us":9000,"first_error":"body of 5 bytes, want 13"}` + "\n")
	st, r, err := parseH3rs(out)
	if err != nil {
		t.Fatal(err)
	}
	if st.Requests != 20000 || st.Failed != 3 || st.Status != 2 || st.Bytes != 260000 || st.DurationUS != 2e6 ||
		st.RPS != 10000 || st.MBps != 0.13 || st.P50US != 900 || st.P99US != 4000 || st.MaxUS != 9000 || st.Protocol != "h3" {
		t.Errorf("stats %+v", st)
	}
	if r.FirstError == nil || *r.FirstError != "body of 5 bytes, want 13" || r.Connections != 10 || r.Streams != 10 {
		t.Errorf("result %+v", r)
	}
	if flag := FlagOf(st, nil, nil); !strings.Contains(flag, "3 failed requests") || !strings.Contains(flag, "2 non-2xx") {
		t.Errorf("flag %q", flag)
	}
	for _, bad := range []string{
		"",
		"h3load-rs: handshake with 127.0.0.1:1: timed out\n",
		`{"client":"other","requests":1,"seconds":1}`,
		`{"client":"h3load-rs","requests":1,"seconds":0}`,
		`{"client":"h3load-rs","requests":1,`,
	} {
		if st, _, err := parseH3rs([]byte(bad)); err == nil {
			t.Errorf("%q parsed: %+v", bad, st)
		}
	}
}

// TestH3rsVersion: the client's description names its crates from the
// committed Cargo.lock.
func TestH3rsVersion(t *testing.T) {
	lock := "[[package]]\nname = \"h3\"\nversion = \"0.0.8\"\n\n[[package]]\nname = \"quinn\"\nversion = \"0.11.9\"\nsource = \"x\"\n\n[[package]]\nname = \"other\"\nversion = \"1.0.0\"\n"
	if got := lockVersions(lock, "quinn", "h3", "rustls"); !slices.Equal(got, []string{"quinn 0.11.9", "h3 0.0.8"}) {
		t.Errorf("lockVersions = %q", got)
	}
	d := h3rsVersion(context.Background(), "../..", "/elsewhere/h3load-rs")
	for _, c := range []string{"h3 0.0.", "h3-quinn 0.0.", "quinn 0.11.", "rustls 0.23.", "tokio 1."} {
		if !strings.Contains(d, c) {
			t.Errorf("h3rsVersion = %q, no %q", d, c)
		}
	}
}

// TestH3rsWorkload: h3rs is an HTTP/3 workload on the Rust client, out of
// the default set, and the client's arguments carry the workload's check.
func TestH3rsWorkload(t *testing.T) {
	w, ok := LookupWorkload("h3rs")
	if !ok || !w.HTTP3 || !w.RustH3 || !w.Extra || w.Tool() != "h3" || w.Conns != H3Conns {
		t.Fatalf("h3rs workload: %+v", w)
	}
	if !strings.Contains(w.LoadCommand(w.Conns, 1), "h3load-rs") {
		t.Errorf("load command %q", w.LoadCommand(w.Conns, 1))
	}
	a := h3rsRun{bin: "/x/h3load-rs", addr: "127.0.0.1:4433", w: w, conns: 10, streams: 10, duration: 1500 * time.Millisecond, cpus: "1"}.args()
	want := []string{"taskset", "-c", "1", "/x/h3load-rs", "-c", "10", "-s", "10", "-d", "1.5", "-method", "GET",
		"-expect-body", benchserver.Hello, "https://127.0.0.1:4433/"}
	if !slices.Equal(a, want) {
		t.Errorf("args\n%q\nwant\n%q", a, want)
	}
	bulk := mustWorkload("h3bulk")
	a = h3rsRun{bin: "b", addr: "[::1]:1", w: bulk, conns: 1, streams: 1, duration: time.Second, threads: 2}.args()
	want = []string{"b", "-c", "1", "-s", "1", "-d", "1", "-method", "GET", "-t", "2",
		"-expect-len", "16777216", "https://[::1]:1" + benchserver.BulkPath}
	if !slices.Equal(a, want) {
		t.Errorf("args\n%q\nwant\n%q", a, want)
	}
	// h3rsbulk: h3bulk's download from the Rust client.
	rb, ok := LookupWorkload("h3rsbulk")
	if !ok || !rb.HTTP3 || !rb.RustH3 || !rb.Extra || rb.Conns != 1 || rb.h3Streams() != 1 ||
		rb.Path != bulk.Path || rb.ExpectLen != bulk.ExpectLen || rb.ExpectType != bulk.ExpectType {
		t.Fatalf("h3rsbulk workload: %+v", rb)
	}
	a = h3rsRun{bin: "b", addr: "127.0.0.1:1", w: rb, conns: rb.Conns, streams: rb.h3Streams(), duration: time.Second, cpus: "1"}.args()
	want = []string{"taskset", "-c", "1", "b", "-c", "1", "-s", "1", "-d", "1", "-method", "GET",
		"-expect-len", "16777216", "https://127.0.0.1:1" + benchserver.BulkPath}
	if !slices.Equal(a, want) {
		t.Errorf("args\n%q\nwant\n%q", a, want)
	}
}

// TestH3rsRiptide builds the Rust client with cargo (skipped without
// cargo; into the user's cache folder) and runs it for a second against riptide-h3 as the harness
// starts it: every response correct, the server's allocations read; then
// against a server answering a wrong body: every request failed, flagged.
func TestH3rsRiptide(t *testing.T) {
	if _, err := findCargo(); err != nil {
		if _, serr := os.Stat("../../" + H3rsDir + "/Cargo.toml"); serr != nil {
			t.Fatalf("the client's Cargo project: %v", serr)
		}
		t.Skipf("the Rust HTTP/3 client needs cargo: %v", err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := FindRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	// cargo's output goes to the user's cache, not the checkout, so that
	// a fresh clone reuses the compiled crates (the first build takes
	// minutes on 2 vCPUs; cargo locks the folder between builds).
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	bin, err := ensureH3rs(ctx, root, filepath.Join(cache, "riptide-bench", H3rsDir), "", &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.Bytes())
	}
	w := mustWorkload("h3rs")

	t.Run("riptide-h3", func(t *testing.T) {
		s, ok := Lookup("riptide-h3")
		if !ok {
			t.Fatal("riptide-h3 is not registered")
		}
		binDir := t.TempDir()
		if err := Build(ctx, root, binDir, []Server{s}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(Cleanup)
		p, err := Start(ctx, s, StartOptions{BinDir: binDir, Workload: &w})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Stop()
		out, st, err := LoadH3rs(ctx, bin, p.Addr, w, 2, time.Second)
		t.Logf("%s", out)
		if flag := FlagOf(st, err, p); flag != "" {
			t.Fatalf("flagged: %s\n%s", flag, out)
		}
		if st.Requests == 0 || st.Bytes != st.Requests*int64(len(benchserver.Hello)) || st.AllocsPerReq <= 0 || st.P50US <= 0 {
			t.Errorf("%d requests, %d bytes, %v allocations per request, p50 %v µs\n%s", st.Requests, st.Bytes, st.AllocsPerReq, st.P50US, out)
		}
		// A second of 2 × 10 requests in flight costs the client CPU;
		// the harness reads it from the child's rusage.
		if st.LoadCPUSeconds <= 0 || st.LoadCPUSeconds > 60 {
			t.Errorf("client CPU %v s for a 1 s run", st.LoadCPUSeconds)
		}
	})

	t.Run("wrong body", func(t *testing.T) {
		addr := wrongBodyH3Server(t)
		out, st, err := LoadH3rs(ctx, bin, addr, w, 1, 300*time.Millisecond)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		flag := FlagOf(st, err, nil)
		if st.Failed == 0 || st.Requests != 0 || !strings.Contains(flag, "failed requests") ||
			!bytes.Contains(out, []byte("body differs")) {
			t.Errorf("requests %d, failed %d, flag %q\n%s", st.Requests, st.Failed, flag, out)
		}
	})
}

// TestH3rsSkippedWithoutCargo: with no cargo and no client built, a run
// that selects h3rs skips it (every server, with the reason) instead of
// failing, runs the other workloads and leaves the caller's list alone.
func TestH3rsSkippedWithoutCargo(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	root := t.TempDir()
	if _, err := EnsureH3rs(context.Background(), root, "", io.Discard); err == nil || !strings.Contains(err.Error(), "install Rust") {
		t.Fatalf("EnsureH3rs without cargo: %v", err)
	}
	ws := []Workload{mustWorkload("h3rs"), mustWorkload("h3")}
	var log bytes.Buffer
	res, err := Run(context.Background(), Config{Root: root, OutDir: t.TempDir(), Rounds: 1, Duration: time.Second,
		Workloads: ws, Log: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.Bytes())
	}
	if !slices.Equal(res.Workloads, []string{"h3"}) || len(res.Skipped) != 1 || res.Skipped[0].Workload != "h3rs" ||
		!strings.Contains(res.Skipped[0].Reason, "cargo") || !strings.Contains(log.String(), "skipping workload h3rs") {
		t.Errorf("workloads %v, skipped %+v\n%s", res.Workloads, res.Skipped, log.Bytes())
	}
	if ws[0].Name != "h3rs" || ws[1].Name != "h3" {
		t.Errorf("the caller's workloads became %s, %s", ws[0].Name, ws[1].Name)
	}
}
