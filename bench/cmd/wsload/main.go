// Command wsload runs one of the harness's WebSocket workloads (wsecho,
// wsecho1k, wsechoc1000, wsbroadcast) against a server already running at
// -addr, and prints the harness's report of the run: for profiling a
// server (started by hand with -cpuprofile) under the harness's own load.
// With -pid, the server's CPU time over the measured loop is reported too.
//
//	wsload -addr 127.0.0.1:8080 -workload wsecho -d 5s [-pid PID] [-goroutines]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/riptide-http/riptide/bench/internal/harness"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "the WebSocket server's host:port")
	name := flag.String("workload", "wsecho", "a WebSocket workload: wsecho, wsecho1k, wsechoc1000 or wsbroadcast")
	d := flag.Duration("d", 5*time.Second, "length of the measured loop")
	conns := flag.Int("conns", 0, "connections (0: the workload's own)")
	pid := flag.Int("pid", 0, "the server's process id, for its CPU time (0: not reported)")
	goroutines := flag.Bool("goroutines", false, "drive the connections with a goroutine each (the portable client) instead of the epoll client")
	flag.DurationVar(&harness.WSClientSpin, "spin", harness.WSClientSpin, "how long the epoll client polls before it sleeps (0: never spins)")
	flag.Parse()
	w, ok := harness.LookupWorkload(*name)
	if !ok || w.WS == harness.WSNone || w.WS == harness.WSIdle {
		fmt.Fprintf(os.Stderr, "wsload: %q is not a WebSocket echo or broadcast workload\n", *name)
		os.Exit(2)
	}
	if *conns > 0 {
		w.Conns = *conns
	}
	out, st, err := harness.RunWSPID(context.Background(), *pid, *addr, w, *d, *goroutines)
	os.Stdout.Write(out)
	if st.Requests > 0 {
		fmt.Printf("client CPU %.2f µs per message", st.LoadCPUSeconds/float64(st.Requests)*1e6)
		if st.ServerCPUSeconds > 0 {
			fmt.Printf(", server CPU %.2f µs per message", st.ServerCPUSeconds/float64(st.Requests)*1e6)
		}
		fmt.Println()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "wsload:", err)
		os.Exit(1)
	}
}
