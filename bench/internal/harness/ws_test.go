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

// TestWSEchoAndBroadcast runs wsecho and wsbroadcast briefly against a
// correct server: messages counted, nothing flagged, every published
// message delivered to every subscriber.
func TestWSEchoAndBroadcast(t *testing.T) {
	addr := wsTestServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, name := range []string{"wsecho", "wsecho1k", "wsbroadcast"} {
		w := mustWorkload(name)
		w.Conns = 5
		out, st, err := RunWS(ctx, nil, addr, w, 300*time.Millisecond)
		if flag := flagOf(st, err, nil); flag != "" || st.Requests == 0 {
			t.Fatalf("%s: %d messages, flag %q\n%s", name, st.Requests, flag, out)
		}
		if w.WS == WSBroadcast && (st.Requests%5 != 0 || !bytes.Contains(out, []byte("stalled false"))) {
			t.Errorf("%s: %d deliveries to 5 subscribers\n%s", name, st.Requests, out)
		}
		if st.LoadCPUSeconds <= 0 {
			t.Errorf("%s: client CPU %v", name, st.LoadCPUSeconds)
		}
	}
}

// TestWSEchoFlagsWrongServer: a server whose echo differs by one byte is
// flagged, not counted.
func TestWSEchoFlagsWrongServer(t *testing.T) {
	addr := wsTestServer(t, func(p []byte) { p[len(p)-1] ^= 1 })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := mustWorkload("wsecho")
	w.Conns = 3
	out, st, err := RunWS(ctx, nil, addr, w, 200*time.Millisecond)
	flag := flagOf(st, err, nil)
	if st.Requests != 0 || st.Status != 3 || !strings.Contains(flag, "wrong WebSocket answers") {
		t.Fatalf("messages %d, wrong %d, flag %q\n%s", st.Requests, st.Status, flag, out)
	}
}

// TestWSHandshakeChecked: a 101 with a wrong Sec-WebSocket-Accept, and a
// 200, are refused by the client.
func TestWSHandshakeChecked(t *testing.T) {
	for _, resp := range []string{
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
	} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			buf := make([]byte, 4096)
			c.Read(buf)
			c.Write([]byte(resp))
			c.Read(buf) // until the client closes
		}()
		c, err := wsDial(context.Background(), ln.Addr().String(), "/")
		ln.Close()
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
// best other peer, and a flagged run counts for nothing.
func TestBestPeerRatios(t *testing.T) {
	runs := []RunRecord{
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
	} {
		if got := bestPeerRatios(runs, "wsecho", c.server); !slices.Equal(got, c.want) {
			t.Errorf("%s: ratios %v, want %v", c.server, got, c.want)
		}
	}
	res := &Results{Workloads: []string{"wsecho"}, Servers: []string{"riptide-ws", "nbio-ws", "gorilla-ws"}, Runs: runs, PeakRSS: map[string]int64{}}
	for _, ss := range Summarize(res)[0].Servers {
		if ss.Server == "riptide-ws" && ss.VsBaseline.Median != 1.75 {
			t.Errorf("riptide-ws ×best peer median %v, want 1.75", ss.VsBaseline.Median)
		}
	}
}
