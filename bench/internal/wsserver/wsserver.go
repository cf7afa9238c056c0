// Package wsserver holds what the WebSocket benchmark servers share (the
// binaries under bench/servers/*-ws): their flags, their routes' paths,
// the live-heap report and the broadcast hub.
//
// Every WebSocket server takes -addr (and -engine for riptide), prints
// "listening on HOST:PORT" and serves, on one port:
//
//   - EchoPath: a WebSocket that echoes every message, same type;
//   - SubscribePath: a WebSocket that joins the broadcast group; what it
//     sends is read and dropped;
//   - PublishPath: a WebSocket each message of which is written to every
//     member of the broadcast group (not to the publisher), with the
//     library's cheapest way to send one message to many connections;
//   - GET HeapPath (plain HTTP): the server's live heap, goroutine stacks
//     and goroutine count after a forced GC, as JSON (Heap).
package wsserver

import (
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
)

// The paths every WebSocket server serves.
const (
	EchoPath      = "/"
	SubscribePath = "/broadcast"
	PublishPath   = "/publish"
	HeapPath      = "/debug/heap"
)

// ParseFlags parses the shared flags (benchserver.ParseFlags) and exits
// with status 2 unless the profile is bench and neither -h2c nor -tls is
// given: the WebSocket servers serve HTTP/1.1 upgrades in cleartext only.
func ParseFlags(name string) benchserver.Options {
	o := benchserver.ParseFlags()
	if o.Profile != benchserver.ProfileBench {
		fmt.Fprintf(os.Stderr, "%s: only -profile bench is served (WebSocket echo and broadcast)\n", name)
		os.Exit(2)
	}
	if o.H2C || o.TLS {
		fmt.Fprintf(os.Stderr, "%s: -h2c and -tls are not supported (WebSocket over cleartext HTTP/1.1 only)\n", name)
		os.Exit(2)
	}
	return o
}

// Heap forces two garbage collections and returns the JSON object
// HeapPath answers: heap_bytes (live heap objects, runtime.MemStats.HeapAlloc
// right after them), stack_bytes (StackInuse: goroutine stacks) and
// goroutines. The second collection empties the sync.Pool victim caches
// the first one filled, so pooled buffers are not counted as live. The
// same code in every server keeps the figures comparable.
func Heap() []byte {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	b := []byte(`{"heap_bytes":`)
	b = strconv.AppendUint(b, m.HeapAlloc, 10)
	b = append(b, `,"stack_bytes":`...)
	b = strconv.AppendUint(b, m.StackInuse, 10)
	b = append(b, `,"goroutines":`...)
	b = strconv.AppendInt(b, int64(runtime.NumGoroutine()), 10)
	return append(b, "}\n"...)
}

// ServeHeap answers a net/http request for HeapPath with Heap and
// reports whether it did (any other path is left to the caller).
func ServeHeap(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Path != HeapPath {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(Heap())
	return true
}

// Hub is the broadcast group: the connections of SubscribePath. Members
// returns a snapshot that Add and Remove never modify, so a broadcast
// iterates without holding the lock.
type Hub[C comparable] struct {
	mu      sync.Mutex
	members atomic.Pointer[[]C]
}

// Add puts c in the group.
func (h *Hub[C]) Add(c C) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var next []C
	if p := h.members.Load(); p != nil {
		next = append(next, *p...)
	}
	next = append(next, c)
	h.members.Store(&next)
}

// Remove takes c out of the group.
func (h *Hub[C]) Remove(c C) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.members.Load()
	if p == nil {
		return
	}
	next := make([]C, 0, len(*p))
	for _, m := range *p {
		if m != c {
			next = append(next, m)
		}
	}
	h.members.Store(&next)
}

// Members is the group as of now; the caller must not modify it.
func (h *Hub[C]) Members() []C {
	if p := h.members.Load(); p != nil {
		return *p
	}
	return nil
}

// MessageConn is a connection with gorilla-style blocking message calls
// (gorilla/websocket, fasthttp/websocket, riptide's websocket.Conn); T is
// the library's message type.
type MessageConn[T any] interface {
	ReadMessage() (T, []byte, error)
	WriteMessage(T, []byte) error
	Close() error
}

// Echo writes back every message c reads until reading or writing fails,
// then closes c.
func Echo[T any](c MessageConn[T]) {
	defer c.Close()
	for {
		mt, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		if err := c.WriteMessage(mt, msg); err != nil {
			return
		}
	}
}

// Subscribe puts c in h, reads and drops what c sends until reading
// fails, then takes c out of h and closes it.
func Subscribe[T any, C interface {
	MessageConn[T]
	comparable
}](h *Hub[C], c C) {
	h.Add(c)
	defer c.Close()
	defer h.Remove(c)
	for {
		if _, _, err := c.ReadMessage(); err != nil {
			return
		}
	}
}
