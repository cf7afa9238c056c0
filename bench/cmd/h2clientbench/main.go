//go:build linux

// Command h2clientbench measures riptide's HTTP/2 client against net/http's
// Transport and against h2load, on one machine, with the server in its own
// process (riptide's h2c server with a native handler answering 13 bytes,
// started by this command, its SETTINGS_MAX_CONCURRENT_STREAMS at 100).
//
// Part A, clients: concurrent GETs over one HTTP/2 (h2c) connection,
// -streams goroutines each sending its next request when the last one is
// answered, for -d per run; riptide's native API (Do), riptide as the
// RoundTripper of an http.Client (rt), and net/http's Transport (h2c with
// prior knowledge). Requests per second and the client's CPU per request
// (this process's user+system time, the server being another process).
//
// Part B, load generators: riptide's native client driving C connections
// of M streams each (C*M goroutines; the server's stream limit of 100 makes
// the client open a connection per 100 streams) against h2load -c C -m M
// (one thread), for each -loads C:M pair; requests per second and the
// generator's CPU per request.
//
// Runs are interleaved: each round runs every client (A) and generator (B)
// once, the order alternating between rounds; the summary gives each one's
// median over the rounds and the ratios. The machine's facts (CPU model,
// nproc, Go version, load average before and after) head the output.
//
// Run from the bench module (h2load from Debian's nghttp2-client):
//
//	cd bench && go run ./cmd/h2clientbench -rounds 5 -d 3s | tee results/DATE-h2client/run.txt
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/client"
)

const envServe = "H2CLIENTBENCH_SERVE"

func main() {
	if os.Getenv(envServe) == "1" {
		serve()
		return
	}
	d := flag.Duration("d", 3*time.Second, "duration of each run")
	rounds := flag.Int("rounds", 3, "rounds (each runs every client and generator once)")
	streams := flag.Int("streams", 64, "concurrent requests (streams) over the one connection of part A")
	loads := flag.String("loads", "1:100,4:100", "part B: connections:streams pairs")
	h2loadBin := flag.String("h2load", "h2load", "h2load binary (part B skipped if missing)")
	only := flag.String("only", "", "run only the clients and generators whose name matches this regular expression")
	cpuprofile := flag.String("cpuprofile", "", "write this process's (the clients') CPU profile to this file")
	flag.Parse()
	onlyRE, err := regexp.Compile(*only)
	if err != nil {
		fmt.Fprintln(os.Stderr, "h2clientbench: -only:", err)
		os.Exit(2)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "h2clientbench:", err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}

	addr, stop, err := startServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "h2clientbench:", err)
		os.Exit(1)
	}
	defer stop()
	facts()
	fmt.Printf("server: riptide h2c (native handler, 13-byte body) in its own process at %s\n", addr)
	fmt.Printf("part A: %d streams over 1 connection, %v per run, %d rounds\n\n", *streams, *d, *rounds)

	h2load, err := exec.LookPath(*h2loadBin)
	if err != nil {
		fmt.Printf("part B skipped: %v (apt-get install -y nghttp2-client)\n", err)
	}
	var pairs [][2]int
	for p := range strings.SplitSeq(*loads, ",") {
		c, m, ok := strings.Cut(p, ":")
		nc, err1 := strconv.Atoi(c)
		nm, err2 := strconv.Atoi(m)
		if !ok || err1 != nil || err2 != nil || nc < 1 || nm < 1 {
			fmt.Fprintf(os.Stderr, "h2clientbench: bad -loads pair %q\n", p)
			os.Exit(2)
		}
		pairs = append(pairs, [2]int{nc, nm})
	}

	type job struct {
		name string
		run  func() result
	}
	var jobs []job
	for _, kind := range []string{"riptide", "riptide-rt", "nethttp"} {
		jobs = append(jobs, job{"A " + kind, func() result { return runClient(kind, addr, 1, *streams, *d) }})
	}
	if h2load != "" {
		for _, p := range pairs {
			tag := fmt.Sprintf("c%dm%d", p[0], p[1])
			jobs = append(jobs,
				job{"B riptide " + tag, func() result { return runClient("riptide", addr, p[0], p[0]*p[1], *d) }},
				job{"B h2load " + tag, func() result { return runH2load(h2load, addr, p[0], p[1], *d) }})
		}
	}
	jobs = slices.DeleteFunc(jobs, func(j job) bool { return !onlyRE.MatchString(j.name) })
	all := map[string][]result{}
	for r := range *rounds {
		order := slices.Clone(jobs)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, j := range order {
			res := j.run()
			all[j.name] = append(all[j.name], res)
			fmt.Printf("round %d  %-22s %s\n", r+1, j.name, res)
		}
	}
	fmt.Println("\nmedians over the rounds:")
	med := map[string]result{}
	for _, j := range jobs {
		med[j.name] = median(all[j.name])
		fmt.Printf("  %-22s %s\n", j.name, med[j.name])
	}
	fmt.Println("\nratios (medians):")
	ratio := func(label, a, b string) {
		x, y := med[a], med[b]
		if y.rps() == 0 || y.cpuPerReq() == 0 {
			return
		}
		fmt.Printf("  %-40s requests/s %.2fx, client CPU per request %.2fx\n", label, x.rps()/y.rps(), x.cpuPerReq().Seconds()/y.cpuPerReq().Seconds())
	}
	ratio("riptide / nethttp (part A)", "A riptide", "A nethttp")
	ratio("riptide-rt / nethttp (part A)", "A riptide-rt", "A nethttp")
	for _, p := range pairs {
		tag := fmt.Sprintf("c%dm%d", p[0], p[1])
		ratio("riptide / h2load "+tag+" (part B)", "B riptide "+tag, "B h2load "+tag)
	}
	fmt.Println()
	loadavg("after")
}

// result is one run: requests answered in elapsed time, the generator's
// CPU time, its connections, and the failures.
type result struct {
	reqs    int64
	elapsed time.Duration
	cpu     time.Duration
	conns   int64
	errs    int64
	note    string
}

func (r result) rps() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.reqs) / r.elapsed.Seconds()
}

func (r result) cpuPerReq() time.Duration {
	if r.reqs == 0 {
		return 0
	}
	return r.cpu / time.Duration(r.reqs)
}

func (r result) String() string {
	s := fmt.Sprintf("%9.0f req/s  %6.2f µs CPU/req  %8d reqs in %.2fs  conns %d", r.rps(), float64(r.cpuPerReq().Nanoseconds())/1e3, r.reqs, r.elapsed.Seconds(), r.conns)
	if r.errs > 0 {
		s += fmt.Sprintf("  ERRORS %d", r.errs)
	}
	if r.note != "" {
		s += "  " + r.note
	}
	return s
}

// median is the run with the median requests per second (its CPU per
// request goes with it).
func median(rs []result) result {
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b result) int {
		switch {
		case a.rps() < b.rps():
			return -1
		case a.rps() > b.rps():
			return 1
		}
		return 0
	})
	return s[len(s)/2]
}

// cpuTime is this process's user+system time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runClient runs goroutines concurrent GETs with the client kind for d,
// over conns connections as the server's stream limit makes the client
// open them (riptide), or as net/http's Transport does.
func runClient(kind, addr string, conns, goroutines int, d time.Duration) result {
	var dials atomic.Int64
	dial := func(ctx context.Context, network, a string) (net.Conn, error) {
		dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, a)
	}
	url := "http://" + addr + "/"
	var do func(w *worker) error
	var closeIdle func()
	switch kind {
	case "riptide", "riptide-rt":
		rc := &client.Client{H2CHosts: []string{addr}, Dial: dial, MaxConnsPerHost: conns}
		closeIdle = rc.CloseIdleConnections
		if kind == "riptide" {
			do = func(w *worker) error {
				if err := rc.Do(context.Background(), &w.req, &w.resp); err != nil {
					return err
				}
				if w.resp.StatusCode() != 200 || len(w.resp.Body()) != 13 {
					return fmt.Errorf("status %d body %d bytes", w.resp.StatusCode(), len(w.resp.Body()))
				}
				return nil
			}
		} else {
			hc := &http.Client{Transport: rc}
			do = func(w *worker) error { return getStd(hc, url) }
		}
	case "nethttp":
		tr := &http.Transport{Protocols: new(http.Protocols), DialContext: dial, MaxConnsPerHost: conns}
		tr.Protocols.SetUnencryptedHTTP2(true)
		closeIdle = tr.CloseIdleConnections
		hc := &http.Client{Transport: tr}
		do = func(w *worker) error { return getStd(hc, url) }
	}
	defer closeIdle()
	w0 := newWorker(url)
	if err := do(w0); err != nil { // the connection is up before the clock starts
		return result{errs: 1, note: err.Error()}
	}
	var stop atomic.Bool
	var reqs, errs atomic.Int64
	var firstErr sync.Once
	var note string
	var wg sync.WaitGroup
	runtime.GC()
	cpu0, t0 := cpuTime(), time.Now()
	for range goroutines {
		wg.Go(func() {
			w := newWorker(url)
			n := int64(0)
			for !stop.Load() {
				if err := do(w); err != nil {
					errs.Add(1)
					firstErr.Do(func() { note = err.Error() })
					continue
				}
				n++
			}
			reqs.Add(n)
		})
	}
	time.Sleep(d)
	stop.Store(true)
	wg.Wait()
	return result{reqs: reqs.Load(), elapsed: time.Since(t0), cpu: cpuTime() - cpu0, conns: dials.Load(), errs: errs.Load(), note: note}
}

// worker is one goroutine's reusable request and response.
type worker struct {
	req  client.Request
	resp client.Response
}

func newWorker(url string) *worker {
	w := &worker{}
	w.req.SetURL(url)
	return w
}

func getStd(hc *http.Client, url string) error {
	resp, err := hc.Get(url)
	if err != nil {
		return err
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 || n != 13 || resp.ProtoMajor != 2 {
		return fmt.Errorf("%s %d, body %d bytes", resp.Proto, resp.StatusCode, n)
	}
	return nil
}

var (
	h2loadDone     = regexp.MustCompile(`requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored`)
	h2loadFinished = regexp.MustCompile(`finished in ([0-9.]+)(m?s)`)
)

// runH2load runs h2load (one thread) with conns connections of streams
// streams each for d (h2c with prior knowledge: an http:// URI).
func runH2load(bin, addr string, conns, streams int, d time.Duration) result {
	cmd := exec.Command(bin, "-t", "1", "-c", strconv.Itoa(conns), "-m", strconv.Itoa(streams),
		"-D", strconv.Itoa(int(d.Seconds())), "http://"+addr+"/")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return result{errs: 1, note: fmt.Sprintf("h2load: %v: %.200s", err, out)}
	}
	m := h2loadDone.FindSubmatch(out)
	f := h2loadFinished.FindSubmatch(out)
	if m == nil || f == nil {
		return result{errs: 1, note: fmt.Sprintf("h2load output not understood: %.300s", out)}
	}
	ok, _ := strconv.ParseInt(string(m[4]), 10, 64)
	failed, _ := strconv.ParseInt(string(m[5]), 10, 64)
	errored, _ := strconv.ParseInt(string(m[6]), 10, 64)
	secs, _ := strconv.ParseFloat(string(f[1]), 64)
	if string(f[2]) == "ms" {
		secs /= 1000
	}
	ps := cmd.ProcessState
	return result{reqs: ok, elapsed: time.Duration(secs * float64(time.Second)),
		cpu: ps.UserTime() + ps.SystemTime(), conns: int64(conns), errs: failed + errored}
}

// startServer runs this command again as the server and returns its
// address.
func startServer() (string, func(), error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envServe+"=1")
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait() }
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, errors.New("server printed no address")
	}
	return strings.TrimSpace(line), stop, nil
}

// serve is the server process: riptide over h2c with a native handler.
func serve() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().String())
	hello := []byte("Hello, World!")
	srv := &riptide.Server{
		Handler: riptide.HandlerFunc(func(x *riptide.Ctx) {
			x.SetContentType("text/plain")
			x.Write(hello)
		}),
		HTTP2: &riptide.HTTP2Config{H2C: true},
	}
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// facts prints the machine's facts.
func facts() {
	fmt.Printf("date: %s\n", time.Now().UTC().Format(time.RFC3339))
	fmt.Printf("go: %s %s/%s, GOMAXPROCS %d, nproc %d\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU())
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if strings.HasPrefix(line, "model name") {
				_, v, _ := strings.Cut(line, ":")
				fmt.Printf("cpu: %s\n", strings.TrimSpace(v))
				break
			}
		}
	}
	if out, err := exec.Command("h2load", "--version").Output(); err == nil {
		fmt.Printf("h2load: %s", out)
	}
	loadavg("before")
}

func loadavg(when string) {
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average %s: %s", when, b)
	}
}
