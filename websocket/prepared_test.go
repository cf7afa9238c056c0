package websocket

import (
	"bytes"
	"testing"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/israce"
)

// A prepared message broadcast to many connections arrives whole on each,
// compressed or not as each negotiated, and writing it to one more receiver
// allocates nothing.
func TestPreparedBroadcast(t *testing.T) {
	conns := make(chan *Conn, 16)
	url := serve(t, riptide.EngineAuto, riptide.HandlerFunc(func(x *riptide.Ctx) {
		if c, err := Upgrade(x, &Options{Compression: true}); err == nil {
			conns <- c
		}
	}))
	const n = 8
	var clients []*Conn
	var servers []*Conn
	for i := range n {
		clients = append(clients, dial(t, url, &Options{Compression: i%2 == 0}))
		servers = append(servers, <-conns)
	}
	msg := bytes.Repeat([]byte("broadcast "), 100)
	pm, err := NewPreparedMessage(TextMessage, msg, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(pm.compressed) >= len(pm.plain) {
		t.Errorf("compressed form %d bytes, plain %d", len(pm.compressed), len(pm.plain))
	}
	for _, s := range servers {
		if err := s.WritePreparedMessage(pm); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range clients {
		mt, got, err := c.ReadMessage()
		if err != nil || mt != TextMessage || !bytes.Equal(got, msg) {
			t.Errorf("client %d: %v, %d bytes, %v", i, mt, len(got), err)
		}
	}
	// A client-side prepared message is masked per write and still arrives.
	if err := clients[0].WritePreparedMessage(pm); err != nil {
		t.Fatal(err)
	}
	if _, got, err := servers[0].ReadMessage(); err != nil || !bytes.Equal(got, msg) {
		t.Errorf("from a client: %d bytes, %v", len(got), err)
	}
	if israce.Enabled {
		return
	}
	s, c := servers[1], clients[1]
	if allocs := testing.AllocsPerRun(100, func() {
		if err := s.WritePreparedMessage(pm); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.ReadMessage(); err != nil {
			t.Fatal(err)
		}
	}); allocs != 0 {
		t.Errorf("%v allocations per receiver, want 0", allocs)
	}
}
