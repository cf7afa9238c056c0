//go:build !linux

package harness

import (
	"errors"
	"net"
	"time"
)

// wsEpollClient says that this system has no epoll client: the WebSocket
// workloads run a goroutine per connection.
const wsEpollClient = false

const wsEpollClientName = ""

func wsEchoEpoll([]net.Conn, []byte, []byte, time.Time) wsEchoResult {
	panic("unreachable: no epoll client on this system")
}

func (b *wsSubs) readEpoll([]net.Conn) (func(), error) {
	return nil, errors.New("no epoll client on this system")
}
