package harness

// The h3rs workload: HTTP/3 GET / driven by an independent client, hyperium's
// h3 on quinn (Rust), instead of the harness's own quic-go client
// (h3load.go). The client is its own Cargo project, bench/h3load-rs; the
// harness builds it with cargo into an ignored folder (bin/h3load-rs under
// the bench root) once per run, or uses a binary already built there or
// shipped in a prebuilt kit, and skips the workload with the reason when
// there is neither cargo nor a binary. The binary prints one line of JSON
// (requests, errors, bytes, seconds, latency percentiles) that run parses.
// The server's allocations are read as for h3, over a connection of the
// harness's quic-go client before and after the run.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// H3rsDir is the Rust client's Cargo project, relative to the bench root.
const H3rsDir = "h3load-rs"

// h3rsBin is the client binary's name (the Cargo package's bin target).
const h3rsBin = "h3load-rs"

// findCargo returns the path of cargo: on PATH, else rustup's default
// ~/.cargo/bin/cargo.
func findCargo() (string, error) {
	if p, err := exec.LookPath("cargo"); err == nil {
		return p, nil
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cargo", "bin", "cargo")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New("cargo is not on PATH nor in ~/.cargo/bin")
}

// H3rsTargetDir is the Cargo target folder the harness builds the Rust
// client into: bin/h3load-rs under the bench root (ignored by git).
func H3rsTargetDir(root string) string { return filepath.Join(root, "bin", H3rsDir) }

// EnsureH3rs returns the path of the Rust HTTP/3 load generator: prebuilt's
// h3load-rs when a prebuilt kit (prebuilt != "") holds one; else the binary
// cargo builds from root/h3load-rs (`cargo build --release --locked`, into
// H3rsTargetDir, incremental: seconds when nothing changed); else, without
// cargo, a binary built there before. Without any it returns an error
// that says what to install. Build output goes to log.
func EnsureH3rs(ctx context.Context, root, prebuilt string, log io.Writer) (string, error) {
	return ensureH3rs(ctx, root, H3rsTargetDir(root), prebuilt, log)
}

// ensureH3rs is EnsureH3rs with cargo's target folder target.
func ensureH3rs(ctx context.Context, root, target, prebuilt string, log io.Writer) (string, error) {
	if prebuilt != "" {
		p := filepath.Join(prebuilt, h3rsBin)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	built := filepath.Join(target, "release", h3rsBin)
	cargo, err := findCargo()
	if err != nil {
		if _, serr := os.Stat(built); serr == nil {
			fmt.Fprintf(log, "cargo not found; using the h3load-rs built before: %s\n", built)
			return built, nil
		}
		return "", fmt.Errorf("the Rust HTTP/3 client (bench/%s) is not built and %v: install Rust (https://rustup.rs) and rerun", H3rsDir, err)
	}
	manifest := filepath.Join(root, H3rsDir, "Cargo.toml")
	if _, err := os.Stat(manifest); err != nil {
		return "", fmt.Errorf("the Rust HTTP/3 client's project is missing: %w", err)
	}
	fmt.Fprintf(log, "building the Rust HTTP/3 client: cargo build --release --locked --manifest-path %s --target-dir %s\n", manifest, target)
	cmd := exec.CommandContext(ctx, cargo, "build", "--release", "--locked", "--manifest-path", manifest, "--target-dir", target)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		log.Write(out.Bytes())
		return "", fmt.Errorf("cargo build of bench/%s: %v (output above)", H3rsDir, err)
	}
	return built, nil
}

// h3rsResult is the Rust client's JSON line.
type h3rsResult struct {
	Client      string  `json:"client"`
	Connections int     `json:"connections"`
	Streams     int     `json:"streams"`
	Requests    int64   `json:"requests"`
	Errors      int64   `json:"errors"`
	BadStatus   int64   `json:"bad_status"`
	Bytes       int64   `json:"bytes"`
	Seconds     float64 `json:"seconds"`
	P50US       float64 `json:"p50_us"`
	P90US       float64 `json:"p90_us"`
	P99US       float64 `json:"p99_us"`
	MaxUS       float64 `json:"max_us"`
	FirstError  *string `json:"first_error"`
}

// parseH3rs parses the client's output: the last line that is a JSON
// object with "client":"h3load-rs".
func parseH3rs(out []byte) (WrkStats, h3rsResult, error) {
	var r h3rsResult
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "{") {
			continue
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.Client != h3rsBin {
			r = h3rsResult{}
			continue
		}
		if r.Seconds <= 0 {
			return WrkStats{}, r, fmt.Errorf("h3load-rs: %g seconds", r.Seconds)
		}
		st := WrkStats{
			Requests: r.Requests, Bytes: r.Bytes, Status: r.BadStatus, Failed: r.Errors,
			DurationUS: int64(r.Seconds * 1e6),
			RPS:        float64(r.Requests) / r.Seconds, MBps: float64(r.Bytes) / 1e6 / r.Seconds,
			P50US: r.P50US, P90US: r.P90US, P99US: r.P99US, MaxUS: r.MaxUS,
			Protocol: "h3",
		}
		return st, r, nil
	}
	return WrkStats{}, r, errors.New("h3load-rs printed no result line")
}

// h3rsRun is one run of the Rust client against addr.
type h3rsRun struct {
	bin      string
	addr     string
	w        Workload
	conns    int
	streams  int
	duration time.Duration
	cpus     string // taskset CPU list, "" for none
	threads  int    // the client's runtime threads, its default (the CPUs) when 0
}

// args returns the client's argument vector (with the taskset prefix if
// pinned).
func (r h3rsRun) args() []string {
	a := []string{r.bin, "-c", strconv.Itoa(max(r.conns, 1)), "-s", strconv.Itoa(max(r.streams, 1)),
		"-d", strconv.FormatFloat(r.duration.Seconds(), 'f', -1, 64), "-method", r.w.method()}
	if r.threads > 0 {
		a = append(a, "-t", strconv.Itoa(r.threads))
	}
	if r.w.ExpectLen > 0 {
		a = append(a, "-expect-len", strconv.FormatInt(r.w.ExpectLen, 10))
	} else {
		a = append(a, "-expect-body", string(r.w.ExpectBody))
	}
	a = append(a, "https://"+r.addr+r.w.Path)
	if r.cpus != "" {
		a = append([]string{"taskset", "-c", r.cpus}, a...)
	}
	return a
}

func (r h3rsRun) run(ctx context.Context) ([]byte, WrkStats, error) {
	ctx, cancel := context.WithTimeout(ctx, r.duration+30*time.Second)
	defer cancel()
	// The server's allocation counter, read over a quic-go connection of
	// the harness (as h3 does); it stays idle during the run.
	var (
		allocs0, allocs1 uint64
		allocsErr        error
	)
	c, err := dialH3(ctx, r.addr)
	if err == nil {
		defer c.close()
		allocs0, allocsErr = c.allocs(ctx)
	} else {
		allocsErr = err
	}
	argv := r.args()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	raw, runErr := cmd.CombinedOutput()
	if allocsErr == nil {
		allocs1, allocsErr = c.allocs(ctx)
	}

	var out bytes.Buffer
	fmt.Fprintf(&out, "h3 load (Rust h3 + quinn client, bench/%s): %d connections × %d streams, %s %s for %s\n",
		H3rsDir, max(r.conns, 1), max(r.streams, 1), r.w.method(), r.w.Path, r.duration)
	shown := make([]string, len(argv))
	for i, a := range argv {
		shown[i] = a
		if strings.ContainsAny(a, " '\"\\$") {
			shown[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	fmt.Fprintf(&out, "$ %s\n", strings.Join(shown, " "))
	out.Write(raw)
	if runErr != nil {
		return out.Bytes(), WrkStats{}, fmt.Errorf("h3load-rs: %v", runErr)
	}
	st, res, err := parseH3rs(raw)
	if err != nil {
		return out.Bytes(), st, err
	}
	if ps := cmd.ProcessState; ps != nil {
		// taskset execs the client in its own process: this is the
		// client's CPU time.
		st.LoadCPUSeconds = (ps.UserTime() + ps.SystemTime()).Seconds()
	}
	if allocsErr == nil && st.Requests > 0 {
		// The two counter requests are counted in, as for h3.
		st.AllocsPerReq = float64(allocs1-allocs0) / float64(st.Requests)
	}
	fmt.Fprintf(&out, "requests %d in %.3fs: %.0f req/s, %.1f MB/s of bodies\n", st.Requests, res.Seconds, st.RPS, st.MBps)
	fmt.Fprintf(&out, "latency p50 %.0f µs, p90 %.0f µs, p99 %.0f µs, max %.0f µs\n", st.P50US, st.P90US, st.P99US, st.MaxUS)
	fmt.Fprintf(&out, "errors %d, unexpected responses %d\n", st.Failed, st.Status)
	if allocsErr != nil {
		fmt.Fprintf(&out, "server allocations: not reported (%v)\n", allocsErr)
	} else {
		fmt.Fprintf(&out, "server allocations: %d objects, %.2f per request\n", allocs1-allocs0, st.AllocsPerReq)
	}
	if ctx.Err() != nil {
		return out.Bytes(), st, ctx.Err()
	}
	return out.Bytes(), st, nil
}

// LoadH3rs runs the Rust client bin (EnsureH3rs) on HTTP/3 workload w
// against addr for d as a benchmark run does, with conns connections (the
// workload's own count when 0), and returns the run's report and
// statistics.
func LoadH3rs(ctx context.Context, bin, addr string, w Workload, conns int, d time.Duration) ([]byte, WrkStats, error) {
	if conns == 0 {
		conns = w.Conns
	}
	return h3rsRun{bin: bin, addr: addr, w: w, conns: conns, streams: w.h3Streams(), duration: d}.run(ctx)
}

// h3rsVersion describes the Rust client at bin: the versions of its main
// crates from root/h3load-rs/Cargo.lock and, when it was built here, the
// rustc next to cargo.
func h3rsVersion(ctx context.Context, root, bin string) string {
	var crates []string
	if b, err := os.ReadFile(filepath.Join(root, H3rsDir, "Cargo.lock")); err == nil {
		crates = lockVersions(string(b), "h3", "h3-quinn", "quinn", "rustls", "tokio")
	}
	desc := "crates " + strings.Join(crates, ", ")
	if len(crates) == 0 {
		desc = "crates unknown"
	}
	if strings.HasPrefix(bin, H3rsTargetDir(root)) {
		if cargo, err := findCargo(); err == nil {
			if v := firstLine(cmdOut(ctx, root, filepath.Join(filepath.Dir(cargo), "rustc"), "--version")); v != "" {
				desc += "; " + v
			}
		}
	}
	return desc
}

// lockVersions returns "name version" for each of names found as a package
// in the Cargo.lock text lock, in the order of names.
func lockVersions(lock string, names ...string) []string {
	found := map[string]string{}
	var name string
	for _, line := range strings.Split(lock, "\n") {
		k, v, ok := strings.Cut(line, " = ")
		if !ok {
			continue
		}
		v = strings.Trim(v, `"`)
		switch k {
		case "name":
			name = v
		case "version":
			if _, dup := found[name]; !dup && slices.Contains(names, name) {
				found[name] = v
			}
		}
	}
	var out []string
	for _, n := range names {
		if v, ok := found[n]; ok {
			out = append(out, n+" "+v)
		}
	}
	return out
}
