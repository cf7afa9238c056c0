// Command riptide-probe runs the Http11Probe conformance and smuggling
// suite (package probe) against one or more HTTP/1.1 servers.
//
// One server, a table per category on standard output and a JSON file:
//
//	riptide-probe -addr 127.0.0.1:8080 -json out.json
//	riptide-probe -addr 127.0.0.1:8080 -category smuggling
//	riptide-probe -addr 127.0.0.1:8080 -id SMUG-CL-TE-BOTH,COMP-BASELINE
//
// Several servers already running, one side-by-side Markdown table:
//
//	riptide-probe -servers nethttp=127.0.0.1:8081,fasthttp=127.0.0.1:8082 -markdown docs/conformance.md
//
// Or let the probe start them: each -launch is NAME=COMMAND [ARGS]; the probe
// appends "-addr 127.0.0.1:0" (and "-profile probe" when no -profile is
// given), waits for the "listening on ADDR" line every bench/servers binary
// prints, runs the suite, and stops the server with SIGTERM:
//
//	riptide-probe -launch nethttp=bench/bin/nethttp -launch fasthttp=bench/bin/fasthttp -markdown docs/conformance.md
//
// cmd/riptide-probe/conformance.sh builds the bench servers and regenerates
// docs/conformance.md in one command.
//
// The exit status is 0 when every check ran, 1 when a scored check failed
// and -fail-on-fail is set, 2 on usage or setup errors.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/riptide-http/riptide/probe"
)

// target is one server under test.
type target struct {
	name, addr string
	cmd        *exec.Cmd // set when the probe launched it
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	var (
		addr        = flag.String("addr", "", "server host:port")
		servers     = flag.String("servers", "", "comma-separated NAME=HOST:PORT servers to compare")
		jsonOut     = flag.String("json", "", "write JSON results to this file")
		mdOut       = flag.String("markdown", "", "write a side-by-side Markdown table to this file")
		title       = flag.String("title", "HTTP/1.1 conformance (Http11Probe suite)", "Markdown title")
		category    = flag.String("category", "", "run only this category (e.g. smuggling, \"malformed input\")")
		ids         = flag.String("id", "", "run only these comma-separated Test IDs")
		readTimeout = flag.Duration("timeout", probe.DefaultReadTimeout, "wait for a response after each write")
		closeWait   = flag.Duration("close-wait", probe.DefaultCloseWait, "wait for more responses or a close after a response")
		concurrency = flag.Int("concurrency", probe.DefaultConcurrency, "checks run at once")
		quiet       = flag.Bool("q", false, "print only the totals")
		failOnFail  = flag.Bool("fail-on-fail", false, "exit 1 when a scored check fails")
		verbose     = flag.Bool("v", false, "pass launched servers' standard error through")
		list        = flag.Bool("list", false, "list the checks and exit")
		launches    multiFlag
	)
	flag.Var(&launches, "launch", "NAME=COMMAND [ARGS]: start a server for the run (repeatable)")
	flag.Parse()

	var idList []string
	if *ids != "" {
		idList = strings.Split(*ids, ",")
	}
	checks := probe.Filter(probe.Checks(), *category, idList...)
	if len(checks) == 0 {
		fatalf("no checks match -category %q -id %q", *category, *ids)
	}
	if *list {
		for _, c := range checks {
			fmt.Printf("%-45s %-15s %-9s %s\n", c.ID, c.Category, c.Level, c.Expected)
		}
		return
	}

	targets, err := parseTargets(*addr, *servers)
	if err != nil {
		fatalf("%v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for _, l := range launches {
		t, err := launch(ctx, l, *verbose)
		if err != nil {
			stopAll(targets)
			fatalf("launch %q: %v", l, err)
		}
		targets = append(targets, t)
	}
	defer stopAll(targets)
	if len(targets) == 0 {
		fatalf("give -addr, -servers or -launch")
	}

	var reports []probe.Report
	scoredFail := false
	for _, t := range targets {
		r := &probe.Runner{Addr: t.addr, ReadTimeout: *readTimeout, CloseWait: *closeWait, Concurrency: *concurrency}
		started := time.Now()
		results := r.Run(ctx, checks)
		rep := probe.NewReport(t.name, t.addr, started, results)
		reports = append(reports, rep)
		if rep.Totals.ScoredFail > 0 {
			scoredFail = true
		}
		fmt.Printf("# %s (%s) in %s\n", t.name, t.addr, time.Since(started).Round(time.Millisecond))
		if *quiet {
			fmt.Printf("TOTAL  %s\n", rep.Totals)
		} else if err := probe.WriteText(os.Stdout, results); err != nil {
			fatalf("%v", err)
		}
	}
	if *jsonOut != "" {
		if err := writeFile(*jsonOut, func(w io.Writer) error { return probe.WriteJSON(w, reports) }); err != nil {
			fatalf("%v", err)
		}
	}
	if *mdOut != "" {
		if err := writeFile(*mdOut, func(w io.Writer) error { return probe.WriteMarkdown(w, *title, reports) }); err != nil {
			fatalf("%v", err)
		}
	}
	if *failOnFail && scoredFail {
		stopAll(targets)
		os.Exit(1)
	}
}

func parseTargets(addr, servers string) ([]*target, error) {
	var ts []*target
	if addr != "" {
		ts = append(ts, &target{name: addr, addr: addr})
	}
	if servers == "" {
		return ts, nil
	}
	for _, s := range strings.Split(servers, ",") {
		name, a, ok := strings.Cut(strings.TrimSpace(s), "=")
		if !ok || name == "" || a == "" {
			return nil, fmt.Errorf("-servers entry %q is not NAME=HOST:PORT", s)
		}
		ts = append(ts, &target{name: name, addr: a})
	}
	return ts, nil
}

// launch starts NAME=COMMAND [ARGS] and waits for its "listening on ADDR"
// line.
func launch(ctx context.Context, spec string, verbose bool) (*target, error) {
	name, cmdline, ok := strings.Cut(spec, "=")
	args := strings.Fields(cmdline)
	if !ok || name == "" || len(args) == 0 {
		return nil, fmt.Errorf("want NAME=COMMAND [ARGS]")
	}
	if !hasFlag(args, "addr") {
		args = append(args, "-addr", "127.0.0.1:0")
	}
	if !hasFlag(args, "profile") {
		args = append(args, "-profile", "probe")
	}
	cmd := exec.Command(args[0], args[1:]...)
	if verbose {
		cmd.Stderr = os.Stderr
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	t := &target{name: name, cmd: cmd}
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			if a, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "listening on "); ok && !sent {
				addrc <- a
				sent = true
			}
		}
		if !sent {
			close(addrc)
		}
	}()
	select {
	case a, ok := <-addrc:
		if !ok {
			stopAll([]*target{t})
			return nil, fmt.Errorf("exited without printing \"listening on ADDR\"")
		}
		t.addr = a
		return t, nil
	case <-time.After(2 * time.Minute):
	case <-ctx.Done():
	}
	stopAll([]*target{t})
	return nil, fmt.Errorf("no \"listening on ADDR\" line")
}

func hasFlag(args []string, name string) bool {
	for _, a := range args {
		a = strings.TrimLeft(a, "-")
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

// stopAll stops the servers the probe launched: SIGTERM, then SIGKILL after
// five seconds.
func stopAll(ts []*target) {
	for _, t := range ts {
		if t.cmd == nil || t.cmd.Process == nil {
			continue
		}
		t.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { t.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.cmd.Process.Kill()
			<-done
		}
		t.cmd = nil
	}
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "riptide-probe: "+format+"\n", args...)
	os.Exit(2)
}
