package h2

// Keepalive PINGs (Config.SendPingTimeout and PingTimeout): after
// SendPingTimeout without a frame from the client the server sends a PING;
// a client that does not acknowledge it within PingTimeout has its
// connection closed.

import (
	"sync/atomic"
	"time"
)

// h2PingData is the payload of the server's keepalive PING.
var h2PingData = [8]byte{'r', 'i', 'p', 't', 'i', 'd', 'e', 0}

// h2Ping is a connection's keepalive state.
type h2Ping struct {
	send, timeout time.Duration
	lastRead      atomic.Int64 // UnixNano of the last frame read
	timer         *time.Timer
	sentAt        time.Time // when the unanswered PING was sent; zero if none
}

// startPing arms the keepalive when the configuration asks for it.
func (hc *Conn) startPing() {
	cfg := hc.cfg
	if cfg.SendPingTimeout <= 0 {
		return
	}
	p := &h2Ping{send: cfg.SendPingTimeout, timeout: cfg.PingTimeout}
	if p.timeout <= 0 {
		p.timeout = 15 * time.Second // as x/net's default
	}
	p.lastRead.Store(time.Now().UnixNano())
	hc.mu.Lock()
	hc.ping = p
	p.timer = time.AfterFunc(p.send, hc.pingCheck)
	hc.mu.Unlock()
}

// frameRead records activity from the client.
func (hc *Conn) frameRead() {
	if p := hc.ping; p != nil {
		p.lastRead.Store(time.Now().UnixNano())
	}
}

// pingAcked takes the client's acknowledgement (hc.mu held).
func (hc *Conn) pingAcked(data [8]byte) {
	if p := hc.ping; p != nil && data == h2PingData {
		p.sentAt = time.Time{}
	}
}

// pingCheck runs on the keepalive timer.
func (hc *Conn) pingCheck() {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	p := hc.ping
	if hc.dead {
		return
	}
	now := time.Now()
	if !p.sentAt.IsZero() {
		if now.Sub(p.sentAt) >= p.timeout {
			hc.killLocked() // no answer: the client or the path is gone
			return
		}
		p.timer.Reset(p.timeout - now.Sub(p.sentAt))
		return
	}
	silent := now.Sub(time.Unix(0, p.lastRead.Load()))
	if silent < p.send {
		p.timer.Reset(p.send - silent)
		return
	}
	hc.out = appendPing(hc.out, false, h2PingData)
	hc.wakeWriter()
	p.sentAt = now
	p.timer.Reset(p.timeout)
}
