package websocket

// The event mode over TLS (wss://) on riptide's TLS engine: the Peer reads
// and writes plaintext through the connection's tls.Conn (takeover.TLS)
// and parks as over cleartext, the tls.Conn saved beside it. Reads do not
// wait: crypto/tls answers what it has decrypted or reads the socket, and
// an empty socket comes back as EAGAIN. Writes are sealed into records at
// once; the ciphertext the socket does not take waits in the connection
// (the cleartext mode's queue, sealed), and what is written while some
// waits is queued in plaintext as over cleartext, under the same bound.

// sealChunk is the most plaintext sealed in one piece: a TLS record's.
const sealChunk = 16 << 10

// read is one read of the connection's bytes that does not wait.
func (s *evState) read(b []byte) (int, error) {
	if s.tw != nil {
		return s.tw.ReadNow(b)
	}
	return s.ec.RawRead(b)
}

// queued is how many bytes wait for the socket (mu held): the queue and,
// over TLS, the ciphertext sealed already.
func (s *evState) queued() int {
	if s.tw == nil {
		return s.qlen
	}
	return s.qlen + s.tw.Queued()
}

// sendTLS is send over TLS (mu held): a and b are sealed at once unless
// bytes wait for the socket already; then they are queued.
func (s *evState) sendTLS(a, b []byte, shared bool) error {
	waiting := s.qlen
	if waiting == 0 {
		left, err := s.tw.Flush()
		if err == nil && left == 0 {
			if err = s.seal(a, b); err == nil {
				if s.tw.Queued() > 0 {
					s.wakeForOutput()
				}
				return nil
			}
		}
		if err != nil {
			s.broken(err)
			return err
		}
		waiting = left
	} else {
		waiting += s.tw.Queued()
	}
	return s.enqueue(a, b, shared, waiting)
}

// seal encrypts a then b, copied a record's worth at a time into a pooled
// buffer (what is handed to crypto/tls may not point into the caller's
// stack: a and b stay the caller's).
func (s *evState) seal(a, b []byte) error {
	bp := getMsgBuf()
	chunk := append((*bp)[:0], a...)
	var err error
	for {
		k := min(len(b), max(sealChunk-len(chunk), 0))
		chunk = append(chunk, b[:k]...)
		b = b[k:]
		if len(chunk) > 0 {
			if err = s.tw.Seal(chunk); err != nil {
				break
			}
			countOut(s.cnt, len(chunk))
		}
		chunk = chunk[:0]
		if len(b) == 0 {
			break
		}
	}
	*bp = chunk[:0]
	putMsgBuf(bp)
	return err
}

// flushTLS is flush over TLS (mu held): the ciphertext waiting goes as
// far as the socket takes it and, once none waits, the queue is sealed.
func (s *evState) flushTLS() {
	if s.werr != nil {
		return
	}
	left, err := s.tw.Flush()
	if err == nil && left == 0 && s.qlen > 0 {
		for i, p := range s.q {
			if err = s.seal(nil, p); err != nil {
				break
			}
			s.q[i] = nil
		}
		s.q, s.qlen = nil, 0
	}
	if err != nil {
		s.broken(err)
	}
}
