package websocket

import (
	"bytes"
	"testing"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/israce"
	"github.com/riptide-http/riptide/ws"
)

// Steady state a message costs no allocation over loopback: the client's
// WriteMessage and ReadMessage and the server's ReadMessage and
// WriteMessage (both ends run in this process, so AllocsPerRun counts
// both), plain and compressed, with and without context takeover, on the
// native door (event loop and goroutine engines) and the compat door.
func TestMessageAllocs(t *testing.T) {
	if israce.Enabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	echo := func(c *Conn) {
		defer c.Close()
		for {
			mt, msg, err := c.ReadMessage()
			if err != nil || c.WriteMessage(mt, msg) != nil {
				return
			}
		}
	}
	msg := bytes.Repeat([]byte("0123456789abcdef"), 64) // 1 KiB
	for _, tt := range []struct {
		name string
		o    *Options
	}{
		{"plain", nil},
		{"deflate", &Options{Compression: true}},
		{"deflate-takeover", &Options{Compression: true, Deflate: ws.DeflateConfig{ServerContextTakeover: true, ClientContextTakeover: true}}},
	} {
		for _, door := range []string{"native/auto", "native/goroutine", "compat"} {
			t.Run(tt.name+"/"+door, func(t *testing.T) {
				var h riptide.Handler
				e := riptide.EngineAuto
				switch door {
				case "compat":
					h = riptide.FromHTTP(compatHandler(tt.o, echo))
				default:
					if door == "native/goroutine" {
						e = riptide.EngineGoroutine
					}
					h = riptide.HandlerFunc(func(x *riptide.Ctx) {
						if c, err := Upgrade(x, tt.o); err == nil {
							echo(c)
						}
					})
				}
				c := dial(t, serve(t, e, h), tt.o)
				run := func() {
					if err := c.WriteMessage(BinaryMessage, msg); err != nil {
						t.Fatal(err)
					}
					if _, got, err := c.ReadMessage(); err != nil || len(got) != len(msg) {
						t.Fatalf("echo: %d bytes, %v", len(got), err)
					}
				}
				for range 10 {
					run() // grow the buffers, fill the pools
				}
				if n := testing.AllocsPerRun(200, run); n != 0 {
					t.Errorf("%v allocations per echoed message, want 0", n)
				}
			})
		}
	}
}
