package websocket

import (
	"bytes"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
)

// WebSocket traffic counts in Server.Stats' BytesIn and BytesOut on every
// mode, above TLS as the HTTP traffic does: the event-driven mode parked on
// the loop (cleartext and TLS) and on the goroutine engine, the blocking
// Conn of Upgrade on both engines, the compat door's Accept, and over
// HTTP/2 (whose engine counts the tunnel's frames). Each echoes 3 messages
// of 100,000 bytes: both counts reach the 300,000 bytes and stay within
// 8 KiB of them (the upgrade, frame headers, masks, HTTP/2's frames; a
// message counted twice would pass it).
func TestStatsWebSocketBytes(t *testing.T) {
	msg := bytes.Repeat([]byte("counted "), 12_500)
	const rounds = 3
	const want, slack = rounds * 100_000, 8 << 10
	for _, tt := range []struct {
		name   string
		e      riptide.Engine
		h      riptide.Handler
		secure bool
		h2     bool
	}{
		{"event", riptide.EngineAuto, eventEcho(nil, nil, nil), false, false},
		{"event-tls", riptide.EngineAuto, eventEcho(nil, nil, nil), true, false},
		{"event-goroutine", riptide.EngineGoroutine, eventEcho(nil, nil, nil), false, false},
		{"upgrade", riptide.EngineAuto, nativeEcho(nil), false, false},
		{"upgrade-goroutine", riptide.EngineGoroutine, nativeEcho(nil), false, false},
		{"compat", riptide.EngineAuto, riptide.FromHTTP(compatEcho(nil)), false, false},
		{"upgrade-h2", riptide.EngineAuto, nativeEcho(nil), true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := &riptide.Server{Handler: tt.h, Engine: tt.e}
			var url string
			o := &Options{HTTP2: tt.h2}
			switch {
			case tt.h2:
				url, o.TLSClientConfig = serveH2(t, srv, true)
			case tt.secure:
				url, o.TLSClientConfig = serveWSS(t, srv)
			default:
				url = serveServer(t, srv)
			}
			c := dial(t, url, o)
			for range rounds {
				if err := c.WriteMessage(BinaryMessage, msg); err != nil {
					t.Fatal(err)
				}
				if _, got, err := c.ReadMessage(); err != nil || !bytes.Equal(got, msg) {
					t.Fatalf("echo: %d bytes, %v", len(got), err)
				}
			}
			// The server counts a write once it returns, maybe just after
			// the client read it.
			var st riptide.Stats
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				srv.Stats(&st)
				if st.BytesIn >= want && st.BytesOut >= want || time.Now().After(deadline) {
					break
				}
			}
			if st.BytesIn < want || st.BytesIn > want+slack || st.BytesOut < want || st.BytesOut > want+slack {
				t.Errorf("Stats: %d bytes in, %d out; want each from %d to %d", st.BytesIn, st.BytesOut, want, want+slack)
			}
			t.Logf("%d bytes in, %d out", st.BytesIn, st.BytesOut)
		})
	}
}
