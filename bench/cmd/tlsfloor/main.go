//go:build linux

// Command tlsfloor measures the least memory an idle TLS connection can
// cost any Go server built on crypto/tls, on this machine: the floor under
// riptide's idletls and h2idletls rows (issue 36).
//
// Its server (the default mode, started by the driver) accepts TLS 1.3
// connections with the harness's certificate (a self-signed ECDSA P-256,
// benchserver.SelfSignedTLS; ALPN h2 and http/1.1, default curves, session
// tickets on), completes each handshake on a goroutine, reads the one
// request into a pooled buffer, writes a canned answer (HTTP/1.1, or a
// canned HTTP/2 SETTINGS, SETTINGS ACK, HEADERS and DATA: no HTTP/2 state
// kept), and then keeps only the *tls.Conn: no goroutine, no read buffer,
// no timer per connection. On SIGUSR1 it collects twice and prints its
// heap statistics as one JSON line.
//
// The driver (-drive) builds it and the harness servers named by
// -servers, and for each round and workload starts each server afresh,
// reads its RSS, opens -n connections with the harness's own idle clients
// (harness.OpenIdle: the idletls and h2idletls workloads' dials and
// checked request), waits as the harness does (3 s) and reads the RSS
// again: RSS growth per connection, as the harness's idle rows. For
// tlsfloor it also reads the live heap before and after (after a GC), the
// bytes allocated per connection (the handshakes' garbage) and the
// collector's counters. Rounds interleave the servers, the order
// alternating; the summary gives medians.
//
//	cd bench && go run ./cmd/tlsfloor -drive -n 10000 -rounds 3 -servers tlsfloor,riptide
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/harness"
)

func main() {
	drive := flag.Bool("drive", false, "drive: build the servers, open the connections, measure (else: serve, as the driver starts it)")
	n := flag.Int("n", 10_000, "drive: connections per run")
	rounds := flag.Int("rounds", 3, "drive: interleaved rounds")
	servers := flag.String("servers", "tlsfloor,riptide", "drive: servers, comma-separated: tlsfloor and harness server names")
	workloads := flag.String("workloads", "idletls,h2idletls", "drive: idle TLS workloads, comma-separated")
	o := benchserver.ParseFlags()
	if *drive {
		if err := driveMain(*n, *rounds, strings.Split(*servers, ","), strings.Split(*workloads, ",")); err != nil {
			fmt.Fprintln(os.Stderr, "tlsfloor:", err)
			os.Exit(1)
		}
		return
	}
	if !o.TLS || o.Profile != benchserver.ProfileBench || o.H2C {
		fmt.Fprintln(os.Stderr, "tlsfloor: serves -tls with -profile bench only")
		os.Exit(2)
	}
	serveMain(o)
}

// held keeps the idle connections: their *tls.Conn, nothing else.
var held struct {
	sync.Mutex
	conns []*tls.Conn
}

// readBufs are the read buffers lent to the handshake goroutines.
var readBufs = sync.Pool{New: func() any { return new([4096]byte) }}

// serveMain accepts TLS connections until SIGTERM, and reports its heap on
// SIGUSR1.
func serveMain(o benchserver.Options) {
	cfg := o.TLSConfig
	cfg.NextProtos = []string{"h2", "http/1.1"}
	cfg.MinVersion = tls.VersionTLS13
	// Before the "listening on" line: the driver signals once it saw it.
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	go func() {
		for range usr1 {
			reportHeap()
		}
	}()
	benchserver.Main(o, func(ln net.Listener) error {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return err
			}
			go serveOne(nc, cfg)
		}
	}, func() { os.Exit(0) })
}

// serveOne handshakes, answers the one request and keeps the tls.Conn.
func serveOne(nc net.Conn, cfg *tls.Config) {
	tc := tls.Server(nc, cfg)
	tc.SetDeadline(time.Now().Add(30 * time.Second))
	err := tc.Handshake()
	if err == nil {
		buf := readBufs.Get().(*[4096]byte)
		if tc.ConnectionState().NegotiatedProtocol == "h2" {
			err = answerH2(tc, buf[:])
		} else {
			err = answerH1(tc, buf[:])
		}
		readBufs.Put(buf)
	}
	if err != nil {
		tc.Close()
		return
	}
	tc.SetDeadline(time.Time{})
	held.Lock()
	held.conns = append(held.conns, tc)
	held.Unlock()
}

// h1Answer is the canned answer to GET / (the harness checks the status
// and the body).
const h1Answer = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\n" + benchserver.Hello

// answerH1 reads one request head and writes h1Answer.
func answerH1(c io.ReadWriter, buf []byte) error {
	got := 0
	for !bytes.Contains(buf[:got], []byte("\r\n\r\n")) {
		if got == len(buf) {
			return errors.New("request head too large")
		}
		k, err := c.Read(buf[got:])
		if err != nil {
			return err
		}
		got += k
	}
	_, err := io.WriteString(c, h1Answer)
	return err
}

// answerH2 reads the client's preface and frames up to the end of stream
// 1's request (a HEADERS frame, or a CONTINUATION, with END_HEADERS, the
// stream ended), and writes a canned answer: an empty SETTINGS, the
// SETTINGS ACK, HEADERS (:status 200, static index 8) and DATA (the body,
// END_STREAM). It keeps no HTTP/2 state: the floor of the TLS part only.
func answerH2(c io.ReadWriter, buf []byte) error {
	const preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	if _, err := io.ReadFull(c, buf[:len(preface)]); err != nil {
		return err
	}
	if string(buf[:len(preface)]) != preface {
		return errors.New("no HTTP/2 preface")
	}
	for ended, endStream := false, false; !ended; {
		var hdr [9]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return err
		}
		length := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
		typ, flags, id := hdr[3], hdr[4], binary.BigEndian.Uint32(hdr[5:])&(1<<31-1)
		if length > len(buf) {
			return errors.New("frame too large")
		}
		if _, err := io.ReadFull(c, buf[:length]); err != nil {
			return err
		}
		switch {
		case typ == 1 && id == 1: // HEADERS
			endStream = flags&0x1 != 0
			ended = flags&0x4 != 0 && endStream
		case typ == 9 && id == 1: // CONTINUATION
			ended = flags&0x4 != 0 && endStream
		}
	}
	var out []byte
	out = append(out, 0, 0, 0, 4, 0, 0, 0, 0, 0)                            // SETTINGS
	out = append(out, 0, 0, 0, 4, 1, 0, 0, 0, 0)                            // SETTINGS ACK
	out = append(out, 0, 0, 1, 1, 4, 0, 0, 0, 1)                            // HEADERS, END_HEADERS, stream 1
	out = append(out, 0x88)                                                 // :status: 200
	out = append(out, 0, 0, byte(len(benchserver.Hello)), 0, 1, 0, 0, 0, 1) // DATA, END_STREAM
	out = append(out, benchserver.Hello...)
	_, err := c.Write(out)
	return err
}

// heapReport is the server's answer to SIGUSR1.
type heapReport struct {
	Conns        int    `json:"conns"`
	HeapAlloc    uint64 `json:"heap_alloc"`
	HeapInuse    uint64 `json:"heap_inuse"`
	HeapRetained uint64 `json:"heap_retained"` // HeapIdle - HeapReleased: free, not returned to the OS
	StackInuse   uint64 `json:"stack_inuse"`
	NextGC       uint64 `json:"next_gc"`
	NumGC        uint32 `json:"num_gc"`
	AllocBytes   uint64 `json:"alloc_bytes"` // all bytes ever allocated
	Goroutines   int    `json:"goroutines"`
}

// reportHeap collects twice and prints a heapReport as one line.
func reportHeap() {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	held.Lock()
	r := heapReport{Conns: len(held.conns), HeapAlloc: ms.HeapAlloc, HeapInuse: ms.HeapInuse,
		HeapRetained: ms.HeapIdle - ms.HeapReleased, StackInuse: ms.StackInuse, NextGC: ms.NextGC,
		NumGC: ms.NumGC, AllocBytes: s[0].Value.Uint64(), Goroutines: runtime.NumGoroutine()}
	held.Unlock()
	b, _ := json.Marshal(r)
	fmt.Printf("tlsfloor heap %s\n", b)
}

// floorServer is tlsfloor as a harness server.
var floorServer = harness.Server{Name: "tlsfloor", Desc: "crypto/tls floor: handshake, one canned answer, only the *tls.Conn kept",
	Kind: harness.KindGo, Pkg: "./cmd/tlsfloor", Bin: "tlsfloor", HTTP2: true, TLSOnly: true}

// run is one measurement: one server, one workload.
type run struct {
	server, workload      string
	conns, errs           int
	rssBefore, rssAfter   int64
	kibPerConn            float64
	heap0, heap1          *heapReport
	heapPerConn, allocPer float64
}

// driveMain builds the servers and runs the rounds.
func driveMain(n, rounds int, names, wnames []string) error {
	ctx := context.Background()
	wd, _ := os.Getwd()
	root, err := harness.FindRoot(wd)
	if err != nil {
		return err
	}
	var servers []harness.Server
	for _, name := range names {
		s, ok := harness.Lookup(name)
		if name == floorServer.Name {
			s, ok = floorServer, true
		}
		if !ok {
			return fmt.Errorf("unknown server %q", name)
		}
		servers = append(servers, s)
	}
	var works []harness.Workload
	for _, name := range wnames {
		w, ok := harness.LookupWorkload(name)
		if !ok || w.Idle == 0 || w.HTTP3 || !(w.TLS || w.HTTP2 == harness.H2TLS) {
			return fmt.Errorf("%q is not an idle TLS workload", name)
		}
		works = append(works, w)
	}
	binDir, err := os.MkdirTemp("", "tlsfloor-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(binDir)
	defer harness.Cleanup()
	if err := harness.Build(ctx, root, binDir, servers); err != nil {
		return err
	}
	si := harness.CollectSysInfo(ctx, root, "", "")
	fmt.Printf("tlsfloor: %s, nproc %d, %s, %s, kernel %s, commit %s\n", si.Date.Format(time.RFC3339), si.NProc, si.CPUModel, si.GoVersion, si.Kernel, si.Commit)
	fmt.Printf("%d connections per run, %d rounds, servers %s, workloads %s; load average %s\n", n, rounds, strings.Join(names, ","), strings.Join(wnames, ","), loadAvg())
	var runs []run
	for r := range rounds {
		order := slices.Clone(servers)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, w := range works {
			for _, s := range order {
				res, err := measure(ctx, binDir, s, w, n)
				if err != nil {
					return fmt.Errorf("round %d, %s, %s: %w", r+1, s.Name, w.Name, err)
				}
				fmt.Printf("round %d %-10s %-10s %5d conns (%d failed): RSS %d -> %d KiB, %.2f KiB per connection", r+1, s.Name, w.Name, res.conns, res.errs, res.rssBefore/1024, res.rssAfter/1024, res.kibPerConn)
				if res.heap1 != nil {
					fmt.Printf("; live heap %.0f B, allocated %.0f B per connection; after: heap %d KiB, next GC %d KiB, retained free %d KiB, stacks %d KiB, %d GCs, %d goroutines",
						res.heapPerConn, res.allocPer, res.heap1.HeapAlloc>>10, res.heap1.NextGC>>10, res.heap1.HeapRetained>>10, res.heap1.StackInuse>>10, res.heap1.NumGC-res.heap0.NumGC, res.heap1.Goroutines)
				}
				fmt.Println()
				runs = append(runs, res)
			}
		}
	}
	fmt.Printf("medians over %d rounds (load average %s):\n", rounds, loadAvg())
	for _, w := range works {
		for _, s := range servers {
			var kib, heap, alloc []float64
			for _, res := range runs {
				if res.server == s.Name && res.workload == w.Name {
					kib = append(kib, res.kibPerConn)
					if res.heap1 != nil {
						heap, alloc = append(heap, res.heapPerConn), append(alloc, res.allocPer)
					}
				}
			}
			fmt.Printf("  %-10s %-10s RSS %.2f KiB per connection", w.Name, s.Name, median(kib))
			if len(heap) > 0 {
				fmt.Printf(", live heap %.0f B, allocated %.0f B per connection", median(heap), median(alloc))
			}
			fmt.Println()
		}
	}
	return nil
}

// measure starts s, opens n connections of w and measures.
func measure(ctx context.Context, binDir string, s harness.Server, w harness.Workload, n int) (run, error) {
	res := run{server: s.Name, workload: w.Name}
	lines := &lineLog{c: make(chan string, 16)}
	p, err := harness.Start(ctx, s, harness.StartOptions{BinDir: binDir, Workload: &w, Log: lines})
	if err != nil {
		return res, err
	}
	defer p.Stop()
	floor := s.Name == floorServer.Name
	if floor {
		if res.heap0, err = askHeap(p, lines); err != nil {
			return res, err
		}
	}
	if res.rssBefore, err = p.RSS(); err != nil {
		return res, err
	}
	conns, errs, first := harness.OpenIdle(ctx, p.Addr, w, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	res.conns, res.errs = len(conns), errs
	if len(conns) == 0 {
		return res, fmt.Errorf("no connection: %v", first)
	}
	time.Sleep(3 * time.Second) // the harness's idleSettle
	if res.rssAfter, err = p.RSS(); err != nil {
		return res, err
	}
	k := float64(len(conns))
	res.kibPerConn = float64(res.rssAfter-res.rssBefore) / 1024 / k
	if floor {
		if res.heap1, err = askHeap(p, lines); err != nil {
			return res, err
		}
		res.heapPerConn = float64(res.heap1.HeapAlloc-res.heap0.HeapAlloc) / k
		res.allocPer = float64(res.heap1.AllocBytes-res.heap0.AllocBytes) / k
	}
	return res, nil
}

// askHeap signals the floor server and reads its heap report.
func askHeap(p *harness.Proc, lines *lineLog) (*heapReport, error) {
	if err := syscall.Kill(p.PID(), syscall.SIGUSR1); err != nil {
		return nil, err
	}
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l := <-lines.c:
			js, ok := strings.CutPrefix(l, "tlsfloor heap ")
			if !ok {
				continue
			}
			var r heapReport
			return &r, json.Unmarshal([]byte(js), &r)
		case <-timeout:
			return nil, errors.New("no heap report within 10 s")
		}
	}
}

// lineLog receives a server's output lines (harness.StartOptions.Log) and
// passes the heap reports on.
type lineLog struct {
	mu  sync.Mutex
	buf []byte
	c   chan string
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(l.buf[:i])
		l.buf = l.buf[i+1:]
		if strings.HasPrefix(line, "tlsfloor heap ") {
			l.c <- line
		} else if line != "" {
			fmt.Fprintln(os.Stderr, "server:", line)
		}
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func loadAvg() string {
	b, err := os.ReadFile(filepath.Join("/proc", "loadavg"))
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}
