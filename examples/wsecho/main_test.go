package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/websocket"
)

// The three modes echo text and binary messages at / with permessage-deflate
// negotiated; an unknown mode is refused.
func TestEchoModes(t *testing.T) {
	if _, err := handler("fast", nil); err == nil {
		t.Error("mode fast accepted")
	}
	for _, mode := range []string{"native", "event", "compat"} {
		t.Run(mode, func(t *testing.T) {
			h, err := handler(mode, &websocket.Options{Compression: true})
			if err != nil {
				t.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := &riptide.Server{Handler: h}
			go srv.Serve(ln)
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, _, err := websocket.Dial(ctx, "ws://"+ln.Addr().String()+"/", &websocket.Options{Compression: true})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if !c.Compressed() {
				t.Error("permessage-deflate not negotiated")
			}
			for _, m := range []struct {
				mt websocket.MessageType
				p  []byte
			}{
				{websocket.TextMessage, []byte(strings.Repeat("echo ", 100))},
				{websocket.BinaryMessage, []byte{0, 1, 2}},
			} {
				if err := c.WriteMessage(m.mt, m.p); err != nil {
					t.Fatal(err)
				}
				mt, got, err := c.ReadMessage()
				if err != nil || mt != m.mt || !bytes.Equal(got, m.p) {
					t.Errorf("echo: %v %q %v", mt, got, err)
				}
			}
		})
	}
}
