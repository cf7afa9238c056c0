package riptide

// The Server's connections of every engine and protocol, as one set of
// operations: admission under MaxConns, written once here for the
// goroutine engine, the event loop and HTTP/3.

// admit takes one of MaxConns's slots for a new connection, whatever its
// engine or protocol (a TCP connection of the goroutine engine or of the
// event loop, a QUIC connection whose address is validated), or counts it
// in Stats.Refused and reports false: the caller refuses it (refuse, or
// the QUIC layer's CONNECTION_REFUSED). The slot is taken before it is
// checked, so that connections admitted at once never exceed MaxConns. A
// slot taken is freed with release when the connection ends.
func (s *Server) admit() bool {
	if n := s.nconns.Add(1); s.MaxConns > 0 && n > int64(s.MaxConns) {
		s.nconns.Add(-1)
		s.count(statRefused)
		return false
	}
	return true
}

// release frees a slot admit took.
func (s *Server) release() { s.nconns.Add(-1) }
