package h2

// HTTP/2 flow control (RFC 9113 §5.2, §6.9) for riptide's connection loop.
// Receiving: the client may send as much request body as the windows the
// server granted; DATA is buffered per stream until the handler reads it,
// and only what handlers have read is granted back (WINDOW_UPDATE), so the
// connection window bounds the request body one connection can make the
// server hold. Sending: response DATA waits for both the stream's and the
// connection's send windows. Everything here runs with Conn.mu held.

const h2MaxWindow = 1<<31 - 1

// onData takes a DATA frame: flow-control accounting, then the payload is
// appended to its stream's body buffer.
func (hc *Conn) onData(f *frame) error {
	id := f.StreamID
	size := int64(f.Length) // padding counts too
	hc.recvWindow -= size
	if hc.recvWindow < 0 {
		return connError(ErrCodeFlowControl)
	}
	st := hc.streams[id]
	if st == nil || st.recvEnd {
		// Never read: give the connection window back at once.
		hc.grantConn(size)
		if hc.idleStream(id) {
			return connError(ErrCodeProtocol) // idle stream
		}
		return streamError{id, ErrCodeStreamClosed}
	}
	st.window -= size
	if st.window < 0 {
		hc.grantConn(size)
		return streamError{id, ErrCodeFlowControl}
	}
	data := f.data
	st.recvd += int64(len(data))
	if st.declLen >= 0 && st.recvd > st.declLen {
		hc.grantConn(size)
		return streamError{id, ErrCodeProtocol}
	}
	if pad := size - int64(len(data)); pad > 0 {
		hc.grantConn(pad)
		st.unacked += pad
	}
	if !st.bodyClosed {
		st.appendBody(data)
	} else {
		// The handler is done with the body: discard.
		hc.grantConn(int64(len(data)))
		if st.lingering && st.window <= 0 && !f.endStream {
			// The response is complete and the client has used up the
			// stream window on a body nobody reads: stop it (§8.1).
			return streamError{id, ErrCodeNo}
		}
	}
	if f.endStream {
		return hc.endOfRequest(st)
	}
	hc.cond.Broadcast()
	return nil
}

// appendBody adds DATA payload to the stream's unread body, rbuf[roff:].
// The part already read is reclaimed before the buffer would grow, so the
// buffer never holds more than the unread bytes and one frame: at most
// the stream window the server advertised (the client may not send more
// than was granted, and only what the handler read is granted back) plus
// a frame.
func (st *Stream) appendBody(data []byte) {
	switch {
	case st.roff == len(st.rbuf):
		st.rbuf, st.roff = st.rbuf[:0], 0
	case st.roff > 0 && len(st.rbuf)+len(data) > cap(st.rbuf):
		n := copy(st.rbuf, st.rbuf[st.roff:])
		st.rbuf, st.roff = st.rbuf[:n], 0
	}
	if need := len(st.rbuf) + len(data); need > cap(st.rbuf) {
		// Grow by doubling, but not past what flow control lets the
		// client have unread: the window and a frame.
		limit := int(st.hc.streamWindow) + int(st.hc.maxFrame)
		nb := make([]byte, len(st.rbuf), max(need, min(2*cap(st.rbuf), limit)))
		copy(nb, st.rbuf)
		st.rbuf = nb
	}
	st.rbuf = append(st.rbuf, data...)
}

// h2KeepBody is the most request-body buffer a stream keeps once its
// handler has read everything in it; a larger one is dropped, so that
// streams waiting for more body do not each hold the high-water mark.
const h2KeepBody = 64 << 10

// bodyDrained empties the stream's body buffer once all of it is read
// (or discarded).
func (st *Stream) bodyDrained() {
	st.roff = 0
	if cap(st.rbuf) > h2KeepBody {
		st.rbuf = nil
		return
	}
	st.rbuf = st.rbuf[:0]
}

// endOfRequest marks the request stream ended (END_STREAM), checking the
// declared Content-Length (RFC 9113 §8.1.1).
func (hc *Conn) endOfRequest(st *Stream) error {
	st.recvEnd = true
	hc.cond.Broadcast()
	if st.declLen >= 0 && st.recvd != st.declLen {
		return streamError{st.id, ErrCodeProtocol}
	}
	if !st.running && st.inTable {
		// The response is already complete: the stream is closed.
		hc.forget(st)
	} else {
		hc.noteClosed(st)
	}
	return nil
}

// consumed grants back n body bytes a handler has read, in batches of a
// quarter window so that a stream costs few WINDOW_UPDATE frames.
func (hc *Conn) consumed(st *Stream, n int) {
	hc.grantConn(int64(n))
	st.unacked += int64(n)
	if !st.recvEnd && !st.reset && st.unacked >= int64(hc.streamWindow)/4 {
		hc.queueWindowUpdate(st.id, uint32(st.unacked))
		st.window += st.unacked
		st.unacked = 0
	}
}

// grantConn gives n bytes of connection window back to the client.
func (hc *Conn) grantConn(n int64) {
	hc.recvUnacked += n
	if hc.recvUnacked >= int64(hc.connWindow)/4 && !hc.dead {
		hc.queueWindowUpdate(0, uint32(hc.recvUnacked))
		hc.recvWindow += hc.recvUnacked
		hc.recvUnacked = 0
	}
}

// refundUnread returns to the connection window the body bytes of a
// stream that is going away and will never be read.
func (hc *Conn) refundUnread(st *Stream) {
	if n := len(st.rbuf) - st.roff; n > 0 {
		st.bodyDrained()
		hc.grantConn(int64(n))
	}
}

// onWindowUpdate grows a send window (RFC 9113 §6.9.1).
func (hc *Conn) onWindowUpdate(f *frame) error {
	inc := int64(f.n)
	if f.StreamID == 0 {
		hc.sendWindow += inc
		if hc.sendWindow > h2MaxWindow {
			return connError(ErrCodeFlowControl)
		}
		hc.cond.Broadcast()
		return nil
	}
	if hc.idleStream(f.StreamID) {
		return connError(ErrCodeProtocol) // idle stream
	}
	st := hc.streams[f.StreamID]
	if st == nil {
		return nil // closed: frames in flight are ignored
	}
	st.sendWindow += inc
	if st.sendWindow > h2MaxWindow {
		return streamError{st.id, ErrCodeFlowControl}
	}
	hc.cond.Broadcast()
	return nil
}

// setPeerInitialWindow applies SETTINGS_INITIAL_WINDOW_SIZE: every open
// stream's send window moves by the difference, and may go negative
// (RFC 9113 §6.9.2).
func (hc *Conn) setPeerInitialWindow(v int32) error {
	delta := int64(v) - int64(hc.peerInitWindow)
	hc.peerInitWindow = v
	for _, st := range hc.streams {
		st.sendWindow += delta
		if st.sendWindow > h2MaxWindow {
			return connError(ErrCodeFlowControl)
		}
	}
	hc.cond.Broadcast()
	return nil
}
