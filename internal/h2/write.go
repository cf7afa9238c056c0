package h2

// The write side of the HTTP/2 connection: every goroutine that has
// something to send (the connection's reader answering SETTINGS and PING,
// stream handlers sending HEADERS and DATA) appends whole frames to the
// connection's output buffer under Conn.mu; one writer goroutine per
// connection swaps the buffer out and writes it with a single Write. Frames
// queued by many streams while a write is in progress go out together in
// the next one: one write per batch, not per frame.
//
// The output buffer is capped (h2MaxOutput): a goroutine that would grow it
// past the cap waits until the writer has drained it, so a client that does
// not read stops the server from reading it (control-frame floods) and from
// producing responses, instead of piling them up in memory.
//
// The control frames a peer can make the server send (RST_STREAM, SETTINGS
// and PING acknowledgements) are also charged against a budget of queued
// control bytes (h2MaxControlBytes), emptied each time the writer takes the
// output: a peer that makes the server queue more than that without reading
// is sent GOAWAY(ENHANCE_YOUR_CALM) and the connection ends (the reset
// flood, CVE-2019-9514, and its SETTINGS and PING kin). A peer that reads
// never comes near it.

import (
	"runtime"
	"time"

	"golang.org/x/net/http2/hpack"
)

// h2MaxOutput is the most frame bytes one connection queues for writing;
// beyond it producers wait for the writer.
const h2MaxOutput = 256 << 10

// h2MaxControlBytes is the most bytes of peer-caused control frames
// (RST_STREAM, SETTINGS ACK, PING ACK) one connection queues between two
// writes: about 10,000 RST_STREAM frames, x/net/http2's limit of queued
// control frames. Past it the connection gets GOAWAY(ENHANCE_YOUR_CALM).
const h2MaxControlBytes = 128 << 10

// h2ByteWriter holds the header block being encoded (hpackEncoder and
// encodeHead append to b).
type h2ByteWriter struct{ b []byte }

// The frame appenders below run with hc.mu held.

// chargeControl charges n bytes of a control frame the peer caused against
// the connection's budget (h2MaxControlBytes). It reports false, having
// queued GOAWAY(ENHANCE_YOUR_CALM) and ended the connection, when the
// budget is spent: the frame must not be queued.
func (hc *Conn) chargeControl(n int) bool {
	if hc.dead {
		return false
	}
	hc.ctlQueued += n
	if hc.ctlQueued <= h2MaxControlBytes {
		return true
	}
	hc.queueGoAway(hc.maxID, ErrCodeEnhanceYourCalm)
	hc.killLocked()
	return false
}

func (hc *Conn) queueSettingsAck() {
	if !hc.chargeControl(9) {
		return
	}
	hc.out = appendSettingsAck(hc.out)
	hc.wakeWriter()
}

func (hc *Conn) queuePingAck(data [8]byte) {
	if !hc.chargeControl(17) {
		return
	}
	hc.out = appendPing(hc.out, true, data)
	hc.wakeWriter()
}

func (hc *Conn) queueWindowUpdate(id uint32, n uint32) {
	hc.out = appendWindowUpdate(hc.out, id, n)
	hc.wakeWriter()
}

func (hc *Conn) queueRST(id uint32, code ErrCode) {
	if !hc.chargeControl(13) {
		return
	}
	if c := hc.cfg.Resets; c != nil {
		c.Add(1)
	}
	hc.out = appendRSTStream(hc.out, id, code)
	hc.wakeWriter()
}

func (hc *Conn) queueGoAway(last uint32, code ErrCode) {
	hc.out = appendGoAway(hc.out, last, code)
	hc.goAwaySent = true
	hc.wakeWriter()
}

// queueData appends one DATA frame; flow control is the caller's job.
func (hc *Conn) queueData(id uint32, p []byte, end bool) {
	hc.out = appendData(hc.out, id, p, end)
	hc.wakeWriter()
}

// queueHeaders appends the header block in hc.hbuf as a HEADERS frame and
// as many CONTINUATION frames as the peer's frame size requires.
func (hc *Conn) queueHeaders(id uint32, end bool) {
	hc.out = appendHeaders(hc.out, id, hc.hbuf.b, end, int(hc.peerMaxFrame))
	hc.hbuf.b = hc.hbuf.b[:0]
	hc.wakeWriter()
}

// encodeField adds one field to the header block being built in hc.hbuf.
func (hc *Conn) encodeField(name, value string) {
	hc.writeField(hpack.HeaderField{Name: name, Value: value})
}

// writeField has the encoder add f to the header block (with a table
// size update it owes before it, if any).
func (hc *Conn) writeField(f hpack.HeaderField) {
	hc.hbuf.b = hc.enc.appendField(hc.hbuf.b, f)
	hc.encUpdate = false
}

// wakeWriter tells the writer goroutine there is output; a connection
// that parks or is parked has none: it is woken to start one (park.go).
func (hc *Conn) wakeWriter() {
	if hc.parking {
		hc.parker.Wake()
		return
	}
	select {
	case hc.writeReady <- struct{}{}:
	default:
	}
}

// waitOutput blocks (hc.mu held) while the output buffer is over its cap.
// It reports false when the connection is gone.
func (hc *Conn) waitOutput() bool {
	for len(hc.out) > h2MaxOutput && !hc.dead {
		hc.cond.Wait()
	}
	return !hc.dead
}

// h2GatherYields bounds how many times the writer yields to let running
// handlers add their responses to a batch before it writes it.
const h2GatherYields = 4

// gather lets the handlers that are running add their frames to the
// output before the writer takes it (hc.mu held; released while
// yielding): a burst of streams handed to workers then goes out in one
// write instead of one write per response. The writer yields while the
// output grows; a handler that blocks, or runs long, adds nothing during
// a yield, and the batch goes out without it.
func (hc *Conn) gather() {
	for i := 0; i < h2GatherYields && hc.running > 0 && !hc.dead; i++ {
		n := len(hc.out)
		hc.mu.Unlock()
		runtime.Gosched()
		hc.mu.Lock()
		if len(hc.out) == n {
			return
		}
	}
}

// writeLoop is the connection's writer goroutine: it writes whatever was
// queued, one Write per batch, until the connection is dead and its output
// is out (or a write fails), or, with nothing to write, until it is told
// to stop for a park (hc.parking). It clears hc.writerOn when it ends.
func (hc *Conn) writeLoop() {
	hc.mu.Lock()
	defer hc.writerEnded()
	for {
		for len(hc.out) == 0 && !hc.dead {
			if hc.parking {
				return
			}
			ready := hc.writeReady // lent until the writer ends
			hc.mu.Unlock()
			<-ready
			hc.mu.Lock()
		}
		if len(hc.out) == 0 || hc.werr != nil {
			return
		}
		hc.gather()
		buf := hc.out
		hc.wbuf, hc.out = buf, hc.wbuf[:0]
		hc.ctlQueued = 0 // what was queued is being written
		dead := hc.dead  // teardown set the final deadline
		hc.writing = true
		hc.mu.Unlock()

		if d := hc.cfg.WriteTimeout; d > 0 && !dead {
			_ = hc.nc.SetWriteDeadline(time.Now().Add(d))
		}
		n, err := hc.nc.Write(buf)
		if hc.bytesOut != nil {
			hc.bytesOut.Add(uint64(n))
		}

		hc.mu.Lock()
		hc.writing = false
		if cap(buf) > 4*h2MaxOutput {
			hc.wbuf = nil // do not keep a burst's buffer for the connection's life
		}
		if err != nil {
			hc.werr = err
			hc.killLocked()
		}
		hc.cond.Broadcast() // output drained: producers may go on
		if err != nil {
			return
		}
		hc.kickPark()
	}
}

// writerEnded marks the writer gone and releases hc.mu (deferred by
// writeLoop, which holds it at every return).
func (hc *Conn) writerEnded() {
	hc.writerOn = false
	hc.cond.Broadcast()
	hc.mu.Unlock()
}
