package websocket

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
)

// eventEcho serves every request with Serve, echoing each message; the
// peers it served and the errors their OnClose saw go to the channels.
func eventEcho(o *Options, opened chan<- *Peer, closed chan<- error) riptide.Handler {
	h := &Handler{
		OnOpen: func(p *Peer) {
			if opened != nil {
				opened <- p
			}
		},
		OnMessage: func(p *Peer, mt MessageType, msg []byte) { p.WriteMessage(mt, msg) },
		OnClose: func(p *Peer, err error) {
			if closed != nil {
				closed <- err
			}
		},
	}
	return riptide.HandlerFunc(func(x *riptide.Ctx) { Serve(x, o, h) })
}

// eventEngines are the engines Serve runs on, and whether the connection
// is event-driven there.
func eventEngines() []struct {
	e     riptide.Engine
	event bool
} {
	onLoop := runtime.GOOS == "linux"
	return []struct {
		e     riptide.Engine
		event bool
	}{{riptide.EngineAuto, onLoop}, {riptide.EngineOnLoop, onLoop}, {riptide.EngineGoroutine, false}}
}

// Serve echoes text, binary, fragmented and compressed messages, answers a
// ping and closes with the handshake, event-driven on the event loop and
// with a goroutine on the goroutine engine; OnClose sees the client's code.
func TestEventEcho(t *testing.T) {
	for _, en := range eventEngines() {
		for _, compress := range []bool{false, true} {
			name := en.e.String()
			if compress {
				name += "/deflate"
			}
			t.Run(name, func(t *testing.T) {
				opened, closed := make(chan *Peer, 1), make(chan error, 1)
				url := serve(t, en.e, eventEcho(echoOpts, opened, closed))
				exercise(t, url, compress)
				p := <-opened
				if p.EventDriven() != en.event {
					t.Errorf("EventDriven() = %v, want %v", p.EventDriven(), en.event)
				}
				if p.Subprotocol() != "echo" {
					t.Errorf("subprotocol %q", p.Subprotocol())
				}
				select {
				case err := <-closed:
					if CloseStatus(err) != 4000 {
						t.Errorf("OnClose: %v, want the client's 4000", err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("OnClose not called")
				}
			})
		}
	}
}

var _ atomic.Int64
