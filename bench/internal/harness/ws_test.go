package harness

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide/websocket"
	"github.com/riptide-http/riptide/ws"

	"github.com/riptide-http/riptide/bench/internal/wsserver/riptidews"
)

// TestWSFrame checks the client's frames against riptide's codec: a
// masked frame unmasks to the payload, the server's form is unmasked, and
// both lengths (7-bit and 16-bit) are encoded.
func TestWSFrame(t *testing.T) {
	for _, n := range []int{WSSmallMsg, WSLargeMsg} {
		p := wsPayload(n, "0123456789abcdef")
		if len(p) != n {
			t.Fatalf("payload of %d bytes, want %d", len(p), n)
		}
		for _, masked := range []bool{true, false} {
			b := wsFrame(p, masked)
			h, hn, err := ws.ParseHeader(b)
			if err != nil || hn == 0 {
				t.Fatalf("ParseHeader: %v (n %d)", err, hn)
			}
			if !h.Fin || h.Op != ws.OpText || h.Masked != masked || h.Length != int64(n) || hn+n != len(b) {
				t.Fatalf("header %+v, header length %d, frame %d bytes", h, hn, len(b))
			}
			got := append([]byte(nil), b[hn:]...)
			if masked {
				if bytes.Equal(got, p) {
					t.Fatal("masked payload sent in the clear")
				}
				ws.Mask(h.Key, 0, got)
			}
			if !bytes.Equal(got, p) {
				t.Fatalf("payload %q, want %q", got, p)
			}
		}
	}
}

// wsTestServer serves the WebSocket routes with riptide's websocket.Accept
// on net/http in this process; change, when set, alters each echoed
// message (a wrong server).
func wsTestServer(t *testing.T, change func([]byte)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, riptidews.Options)
		if err != nil {
			return
		}
		if change == nil {
			riptidews.Serve(r.URL.Path, c)
			return
		}
		go func() {
			defer c.Close()
			for {
				mt, msg, err := c.ReadMessage()
				if err != nil {
					return
				}
				change(msg)
				if c.WriteMessage(mt, msg) != nil {
					return
				}
			}
		}()
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// wsClients are the clients a WebSocket workload can run on this
// system: the epoll client where there is one, and the goroutine client.
func wsClients() []bool {
	if wsEpollClient {
		return []bool{false, true}
	}
	return []bool{true}
}

// oneConnServer listens on a loopback port, serves the first connection
// it accepts with serve (then closes it) and returns the address; the
// listener is closed once that connection is accepted.
func oneConnServer(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		ln.Close()
		if err != nil {
			return
		}
		defer c.Close()
		serve(c)
	}()
	return ln.Addr().String()
}

// TestWSEchoAndBroadcast runs wsecho and wsbroadcast briefly against a
// correct server, with each client: messages counted, nothing flagged,
// every published message delivered to every subscriber.
func TestWSEchoAndBroadcast(t *testing.T) {
	addr := wsTestServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, goroutines := range wsClients() {
		for _, name := range []string{"wsecho", "wsecho1k", "wsbroadcast"} {
			w := mustWorkload(name)
			w.Conns = 5
			r := wsRun{addr: addr, w: w, duration: 300 * time.Millisecond, goroutines: goroutines}
			out, st, err := r.run(ctx)
			if flag := flagOf(st, err, nil); flag != "" || st.Requests == 0 {
				t.Fatalf("%s (%s): %d messages, flag %q\n%s", name, r.clientName(), st.Requests, flag, out)
			}
			if w.WS == WSBroadcast && (st.Requests%5 != 0 || !bytes.Contains(out, []byte("stalled false"))) {
				t.Errorf("%s (%s): %d deliveries to 5 subscribers\n%s", name, r.clientName(), st.Requests, out)
			}
			if st.LoadCPUSeconds <= 0 {
				t.Errorf("%s (%s): client CPU %v", name, r.clientName(), st.LoadCPUSeconds)
			}
		}
	}
}

// TestWSEchoFlagsWrongServer: a server whose echo differs by one byte is
// flagged, not counted, by each client.
func TestWSEchoFlagsWrongServer(t *testing.T) {
	addr := wsTestServer(t, func(p []byte) { p[len(p)-1] ^= 1 })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, goroutines := range wsClients() {
		w := mustWorkload("wsecho")
		w.Conns = 3
		r := wsRun{addr: addr, w: w, duration: 200 * time.Millisecond, goroutines: goroutines}
		out, st, err := r.run(ctx)
		flag := flagOf(st, err, nil)
		if st.Requests != 0 || st.Status != 3 || !strings.Contains(flag, "wrong WebSocket answers") {
			t.Fatalf("%s: messages %d, wrong %d, flag %q\n%s", r.clientName(), st.Requests, st.Status, flag, out)
		}
	}
}

// TestWSBroadcastFlagsWrongFrame: a subscriber that receives a frame that
// is neither the sync nor the data message counts it wrong and ends, with
// each client; frames split across reads are reassembled (the epoll
// client's readShare) before they are compared.
func TestWSBroadcastFlagsWrongFrame(t *testing.T) {
	syncWant, dataWant := wsFrame(wsPayload(64, "s"), false), wsFrame(wsPayload(64, "0123456789abcdef"), false)
	wrong := bytes.Clone(dataWant)
	wrong[len(wrong)-1] ^= 1
	for _, goroutines := range wsClients() {
		// The server side writes sync, data in two pieces, then the
		// wrong frame.
		addr := oneConnServer(t, func(c net.Conn) {
			c.Write(syncWant)
			c.Write(dataWant[:5])
			time.Sleep(20 * time.Millisecond)
			c.Write(dataWant[5:])
			c.Write(wrong)
			var b [1]byte
			c.Read(b[:]) // until the client closes
		})
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		b := &wsSubs{syncWant: syncWant, dataWant: dataWant, n: 1, tokens: make(chan struct{}, WSBroadcastWindow)}
		b.ready.Add(1)
		var stop func()
		if goroutines {
			stop = b.readGoroutines([]net.Conn{c})
		} else if stop, err = b.readEpoll([]net.Conn{c}); err != nil {
			t.Fatal(err)
		}
		b.ready.Wait()
		deadline := time.Now().Add(10 * time.Second)
		for b.bad.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		stop()
		b.mu.Lock()
		gotErr := b.err
		b.mu.Unlock()
		if b.delivered.Load() != 1 || b.bad.Load() != 1 || gotErr != errWSAnswer || len(b.tokens) != 1 {
			t.Errorf("goroutines %v: delivered %d, wrong %d, error %v, tokens %d; want 1, 1, %v, 1",
				goroutines, b.delivered.Load(), b.bad.Load(), gotErr, len(b.tokens), errWSAnswer)
		}
	}
}

// TestWSHandshakeChecked: a 101 with a wrong Sec-WebSocket-Accept, and a
// 200, are refused by the client.
func TestWSHandshakeChecked(t *testing.T) {
	for _, resp := range []string{
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
	} {
		addr := oneConnServer(t, func(c net.Conn) {
			buf := make([]byte, 4096)
			c.Read(buf)
			c.Write([]byte(resp))
			c.Read(buf) // until the client closes
		})
		c, err := wsDial(context.Background(), addr, "/")
		if err == nil {
			c.Close()
			t.Fatalf("handshake accepted: %q", resp)
		}
	}
}

// TestWSServerSupport: WebSocket servers run the WebSocket workloads
// only, the others never, and the default server list follows the
// selected workloads.
func TestWSServerSupport(t *testing.T) {
	wsW, httpW := mustWorkload("wsecho"), mustWorkload("plaintext")
	var nWS int
	for _, s := range Registry() {
		if s.WS {
			nWS++
		}
		if s.Supports(wsW) != s.WS || (s.WS && s.Supports(httpW)) {
			t.Errorf("%s (WS %v): supports wsecho %v, plaintext %v", s.Name, s.WS, s.Supports(wsW), s.Supports(httpW))
		}
	}
	def, err := SelectServers("")
	if err != nil {
		t.Fatal(err)
	}
	got := DefaultServersFor(def, []Workload{wsW})
	if len(got) != nWS || nWS < 7 {
		t.Errorf("%d default servers for wsecho, want the %d WebSocket servers (at least 7)", len(got), nWS)
	}
	for _, s := range DefaultServersFor(def, []Workload{httpW}) {
		if s.WS {
			t.Errorf("%s in the default servers of plaintext", s.Name)
		}
	}
}

// TestBestPeerRatios: a WebSocket workload's ratio is against the best
// clean non-riptide run of the same round; a peer is compared with the
// best other peer, and a flagged run counts for nothing. The floor
// (ws-floor) is no peer: it is the WebSocket workloads' ×ceiling.
func TestBestPeerRatios(t *testing.T) {
	runs := []RunRecord{
		{Workload: "wsecho", Server: WSFloor, Round: 1, WrkStats: WrkStats{RPS: 1200}},
		{Workload: "wsecho", Server: "riptide-ws", Round: 1, WrkStats: WrkStats{RPS: 300}},
		{Workload: "wsecho", Server: "nbio-ws", Round: 1, WrkStats: WrkStats{RPS: 200}},
		{Workload: "wsecho", Server: "gorilla-ws", Round: 1, WrkStats: WrkStats{RPS: 100}},
		{Workload: "wsecho", Server: "riptide-ws-compat", Round: 1, WrkStats: WrkStats{RPS: 1000}},
		{Workload: "wsecho", Server: "riptide-ws", Round: 2, WrkStats: WrkStats{RPS: 300}},
		{Workload: "wsecho", Server: "nbio-ws", Round: 2, WrkStats: WrkStats{RPS: 600}, Flagged: true},
		{Workload: "wsecho", Server: "gorilla-ws", Round: 2, WrkStats: WrkStats{RPS: 150}},
		{Workload: "wsidle", Server: "gorilla-ws", Round: 2, WrkStats: WrkStats{RPS: 1}},
	}
	for _, c := range []struct {
		server string
		want   []float64
	}{
		{"riptide-ws", []float64{1.5, 2}},
		{"nbio-ws", []float64{2}}, // round 2 flagged
		{"gorilla-ws", []float64{0.5}},
		{WSFloor, []float64{6}},
	} {
		if got := bestPeerRatios(runs, "wsecho", c.server); !slices.Equal(got, c.want) {
			t.Errorf("%s: ratios %v, want %v", c.server, got, c.want)
		}
	}
	res := &Results{Workloads: []string{"wsecho"}, Servers: []string{"riptide-ws", "nbio-ws", "gorilla-ws"}, Runs: runs, PeakRSS: map[string]int64{}}
	if c := CeilingOf(mustWorkload("wsecho")); c != WSFloor {
		t.Errorf("wsecho's ceiling %q, want %q", c, WSFloor)
	}
	for _, ss := range Summarize(res)[0].Servers {
		if ss.Server == "riptide-ws" && (ss.VsBaseline.Median != 1.75 || ss.VsCeiling.N != 1 || ss.VsCeiling.Median != 0.25) {
			t.Errorf("riptide-ws ×best peer median %v, want 1.75; ×ws-floor %v over %d rounds, want 0.25 over 1", ss.VsBaseline.Median, ss.VsCeiling.Median, ss.VsCeiling.N)
		}
	}
}

// TestWSClientCPUColumns: a WebSocket run's client CPU per message and
// its pinned server set's use are summarised (medians) and shown in the
// table beside the server's CPU per message.
func TestWSClientCPUColumns(t *testing.T) {
	run := func(round int, load float64) RunRecord {
		return RunRecord{Workload: "wsecho", Server: "riptide-ws-event", Round: round, WrkStats: WrkStats{RPS: 1000},
			CPUPerReqUS: 7.5, LoadCPUPerReqUS: load, ServerBusyPct: 99, LoadBusyPct: 60, ServerSetBusyPct: 100, ServerSetIRQPct: 20}
	}
	res := &Results{
		Servers:   []string{"riptide-ws-event"},
		Workloads: []string{"wsecho"},
		Runs:      []RunRecord{run(1, 5), run(2, 4.25), run(3, 6)},
	}
	res.Summary = Summarize(res)
	if ss := res.Summary[0].Servers[0]; ss.LoadCPUPerReqUS != 5 || ss.ServerSetBusyPct != 100 {
		t.Errorf("client CPU per message %v, server set busy %v; want the medians 5, 100", ss.LoadCPUPerReqUS, ss.ServerSetBusyPct)
	}
	var md bytes.Buffer
	writeMarkdown(&md, res, nil)
	if row := "| 7.50 | 5.00 | 99% | 60% | 100% (20%) |"; !strings.Contains(md.String(), "CPU µs/msg | client CPU µs/msg | server busy | client busy | server CPUs busy (irq)") || !strings.Contains(md.String(), row) {
		t.Errorf("results.md has no client CPU column (%q):\n%s", row, md.String())
	}
}

// TestRecordClientCPU: a WebSocket run records the client's CPU per
// message from the load's CPU time.
func TestRecordClientCPU(t *testing.T) {
	rec := RunRecord{CPUSeconds: 1}
	rec.setLoadCPU(mustWorkload("wsecho"), WrkStats{Requests: 200_000, LoadCPUSeconds: 1.5})
	if rec.LoadCPUPerReqUS != 7.5 {
		t.Errorf("client CPU per message %v µs, want 7.5", rec.LoadCPUPerReqUS)
	}
	rec = RunRecord{}
	rec.setLoadCPU(mustWorkload("plaintext"), WrkStats{Requests: 200_000, LoadCPUSeconds: 1.5})
	if rec.LoadCPUPerReqUS != 0 {
		t.Errorf("plaintext (wrk, another process): client CPU per request %v, want none", rec.LoadCPUPerReqUS)
	}
}
