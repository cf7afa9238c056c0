//go:build linux

// Command ws-floor is the WebSocket benchmark's reference floor, not a
// library: the least user-space work a server can do for the harness's
// WebSocket workloads, around the system calls those workloads force. It
// is run beside riptide and its peers in the same harness run so that
// their rates can be read against what the kernel alone allows (issue
// 35: some 90% of a WebSocket server's CPU in wsecho is in the read and
// the write of each message).
//
//	ws-floor -addr 127.0.0.1:8080
//
// The design, all of it:
//
//   - One goroutine and one epoll instance, whatever GOMAXPROCS is (the
//     harness pins the server with -server-cpus): a single loop is the
//     floor's design, no hand-off, no lock. The listening socket and
//     every connection are registered once, edge-triggered, for input
//     and output (EPOLLIN|EPOLLOUT|EPOLLRDHUP|EPOLLET): no epoll_ctl per
//     message, and arming the writable edge costs nothing (the kernel
//     reports it only after a write found the send buffer full). The
//     loop polls with epoll_wait(0) as a raw system call and, when
//     nothing is ready, parks on the epoll descriptor through Go's
//     netpoller (as riptide's event loop does, so neither pays
//     entersyscall's wake-up of sysmon).
//   - accept4 with SOCK_NONBLOCK until EAGAIN, TCP_NODELAY on each
//     socket. A connection is a small fixed state: its descriptor, a
//     4 KiB read buffer allocated once, its mode (HTTP head, echo,
//     subscriber, publisher) and the output the socket has not taken.
//   - HTTP: the request head is read into that buffer (at most 4 KiB,
//     else the connection is closed), the path taken from the request
//     line and Sec-WebSocket-Key from the headers; the three WebSocket
//     paths (wsserver.EchoPath, SubscribePath, PublishPath) are answered
//     101 with Sec-WebSocket-Accept (RFC 6455 §4.2.2), wsserver.HeapPath
//     with a plain HTTP/1.1 200 and wsserver.Heap's JSON, anything else
//     with 404; the last two close the connection.
//   - Reads: one read(2) per readable edge unless it filled the buffer
//     (then read again); a short read drained the socket, so the loop
//     goes back to epoll (edge-triggered is safe). After a hang-up edge
//     the socket is read until EOF. One read per message, like riptide's
//     event mode.
//   - Frames: client frames must be masked; 7-, 16- and 64-bit lengths; a
//     payload over 1 MiB closes the connection. Several frames in one
//     read are served in order; a frame split across reads waits in the
//     buffer (which grows to the frame's size for a frame over 4 KiB and
//     goes back to the 4 KiB one after it). The payload is unmasked in
//     place and the server's header written in place over the client's
//     (which is always 4 bytes longer, the masking key), so an echo is
//     one write(2) of header and payload with no copy: exactly the
//     system calls the peers make. Ping is answered with pong, pong
//     ignored, close echoed and the connection closed.
//   - Echo: every data frame is written back unmasked, same first byte
//     (FIN and opcode). Subscribe: the connection joins the member list
//     (left on close); what it sends is read and dropped. Publish: every
//     data frame is written, the same unmasked frame bytes, to every
//     subscriber with one write per subscriber per message, the peers'
//     pattern: several messages read together are not coalesced into
//     one write.
//   - Back-pressure, correct but minimal: what a write does not take
//     (EAGAIN or a short write) is kept in the connection's pending
//     buffer and written on the writable edge; later output is appended
//     behind it; a connection with more than 1 MiB pending is closed.
//   - No allocation per message in steady state: the buffers exist, the
//     epoll events array is the server's, reads and writes are raw
//     system calls on the buffers (TestFloorNoAllocs).
//
// Linux only (epoll); on other systems the binary exits with status 2.
package main

import (
	"net"
	"sync/atomic"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/wsserver"
)

func main() {
	o := wsserver.ParseFlags("ws-floor")
	var running atomic.Pointer[server]
	benchserver.Main(o, func(ln net.Listener) error {
		s, err := newServer(ln)
		if err != nil {
			return err
		}
		running.Store(s)
		return s.serve()
	}, func() {
		if s := running.Load(); s != nil {
			s.stop()
		}
	})
}
