package websocket

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/israce"
	"github.com/riptide-http/riptide/ws"
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

// Steady state an echoed message costs no allocation end to end over
// loopback with the event mode serving (the client is a Conn, 0 itself,
// TestMessageAllocs): the server's turn on the loop (read into a borrowed
// buffer, OnMessage with the message in place, the write, the park) and,
// with permessage-deflate, its decompression and compression from pools,
// with context takeover or without.
func TestEventMessageAllocs(t *testing.T) {
	if israce.Enabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	small := []byte("hello, event loop")
	large := bytes.Repeat([]byte("0123456789abcdef"), 64) // 1 KiB
	for _, tt := range []struct {
		name string
		o    *Options
	}{
		{"plain", nil},
		{"deflate", &Options{Compression: true}},
		{"deflate-takeover", &Options{Compression: true, Deflate: ws.DeflateConfig{ServerContextTakeover: true, ClientContextTakeover: true}}},
	} {
		for _, en := range eventEngines() {
			t.Run(tt.name+"/"+en.e.String(), func(t *testing.T) {
				opened := make(chan *Peer, 1)
				c := dial(t, serve(t, en.e, eventEcho(tt.o, opened, nil)), tt.o)
				if p := <-opened; p.EventDriven() != en.event {
					t.Fatalf("EventDriven() = %v, want %v", p.EventDriven(), en.event)
				}
				for _, msg := range [][]byte{small, large} {
					run := func() {
						if err := c.WriteMessage(BinaryMessage, msg); err != nil {
							t.Fatal(err)
						}
						if _, got, err := c.ReadMessage(); err != nil || !bytes.Equal(got, msg) {
							t.Fatalf("echo: %d bytes, %v", len(got), err)
						}
					}
					for range 10 {
						run() // grow the buffers, fill the pools
					}
					if n := testing.AllocsPerRun(200, run); n != 0 {
						t.Errorf("%d-byte messages: %v allocations per echoed message, want 0", len(msg), n)
					}
				}
			})
		}
	}
}

// Frames sent in the same write as the upgrade request (read by the
// server with the request, handed to the Peer with the connection) are
// served: a whole message, then one whose header is cut short, completed
// by a later write; every engine, event-driven or not.
func TestEventFramesWithUpgrade(t *testing.T) {
	want := func(payload string) []byte {
		h := ws.Header{Fin: true, Op: ws.OpText, Length: int64(len(payload))}
		b := make([]byte, h.Len()+len(payload))
		copy(b[ws.PutHeader(b, &h):], payload)
		return b
	}
	first, second := maskedText("sent with the upgrade"), maskedText("half of it with the upgrade")
	for _, en := range eventEngines() {
		t.Run(en.e.String(), func(t *testing.T) {
			url := serve(t, en.e, eventEcho(nil, nil, nil))
			addr := strings.TrimSuffix(strings.TrimPrefix(url, "ws://"), "/")
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(10 * time.Second))
			out := append(upgradeRequest(addr), first...)
			out = append(out, second[:1]...)
			if _, err := nc.Write(out); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(nc)
			resp, err := http.ReadResponse(br, nil)
			if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
				t.Fatalf("upgrade: %v, %v", resp, err)
			}
			got := make([]byte, len(want("sent with the upgrade")))
			if _, err := io.ReadFull(br, got); err != nil || !bytes.Equal(got, want("sent with the upgrade")) {
				t.Fatalf("first echo %q, %v", got, err)
			}
			if _, err := nc.Write(second[1:]); err != nil {
				t.Fatal(err)
			}
			got = make([]byte, len(want("half of it with the upgrade")))
			if _, err := io.ReadFull(br, got); err != nil || !bytes.Equal(got, want("half of it with the upgrade")) {
				t.Fatalf("second echo %q, %v", got, err)
			}
		})
	}
}

// maskedText is a client's text frame (masked) carrying payload.
func maskedText(payload string) []byte {
	h := ws.Header{Fin: true, Op: ws.OpText, Masked: true, Key: [4]byte{7, 1, 9, 3}, Length: int64(len(payload))}
	b := make([]byte, h.Len()+len(payload))
	n := ws.PutHeader(b, &h)
	copy(b[n:], payload)
	ws.Mask(h.Key, 0, b[n:])
	return b
}
