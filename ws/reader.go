package ws

// Reader holds the rules a sequence of received frames must follow, for one
// direction of one connection. Call Frame for each frame header, Payload for
// each chunk of a data frame's payload (unmasked and, for a compressed
// message, inflated), and End at the end of each data frame. It allocates
// nothing; the zero value reads a client's frames with no extension and no
// limits.
type Reader struct {
	// MaxFrame bounds one data frame's payload (0: no bound).
	MaxFrame int64
	// MaxMessage bounds a message's size after decompression (0: no bound).
	MaxMessage int64
	// Client is set on the client side: frames from a server are not
	// masked. A server requires masked frames.
	Client bool
	// Deflate allows RSV1 on a message's first frame (permessage-deflate
	// was negotiated).
	Deflate bool

	// The small fields last, together: a Reader is 40 bytes (every
	// event-driven WebSocket connection holds one).
	inMsg      bool
	fin        bool
	op         Opcode
	compressed bool
	utf8       UTF8
	size       int64
}

// Frame checks h, the next frame's header, against the sequence so far.
func (r *Reader) Frame(h *Header) error {
	if h.Masked == r.Client {
		if r.Client {
			return errMasked
		}
		return errNotMasked
	}
	rsv := h.RSV
	if r.Deflate && !h.Op.IsControl() {
		rsv &^= RSV1
	}
	if rsv != 0 {
		return errRSV
	}
	if !h.Op.known() {
		return errOpcode
	}
	if h.Op.IsControl() {
		if h.Length > MaxControlPayload {
			return errControlLen
		}
		if !h.Fin {
			return errControlFrag
		}
		return nil
	}
	if r.MaxFrame > 0 && h.Length > r.MaxFrame {
		return ErrFrameTooBig
	}
	if h.Op == OpContinuation {
		if !r.inMsg {
			return errUnexpectedCnt
		}
		if h.RSV&RSV1 != 0 {
			return errRSV1Cont
		}
	} else {
		if r.inMsg {
			return errExpectedCnt
		}
		r.inMsg = true
		r.op = h.Op
		r.compressed = h.RSV&RSV1 != 0
		r.size = 0
		r.utf8.Reset()
	}
	r.fin = h.Fin
	if !r.compressed && r.MaxMessage > 0 && r.size+h.Length > r.MaxMessage {
		return ErrMessageTooBig
	}
	return nil
}

// Op is the current message's opcode (OpText or OpBinary).
func (r *Reader) Op() Opcode { return r.op }

// Compressed reports whether the current message is compressed.
func (r *Reader) Compressed() bool { return r.compressed }

// Size is the number of message bytes Payload has seen.
func (r *Reader) Size() int64 { return r.size }

// Payload checks p, the next bytes of the current message (after unmasking
// and inflating): the message size limit and, for text, UTF-8.
func (r *Reader) Payload(p []byte) error {
	r.size += int64(len(p))
	if r.MaxMessage > 0 && r.size > r.MaxMessage {
		return ErrMessageTooBig
	}
	if r.op == OpText && !r.utf8.Write(p) {
		return ErrInvalidUTF8
	}
	return nil
}

// End marks the end of the current data frame's payload and reports whether
// it finished the message. At the end of a text message it checks that the
// text did not stop inside a UTF-8 sequence.
func (r *Reader) End() (done bool, err error) {
	if !r.fin {
		return false, nil
	}
	r.inMsg = false
	if r.op == OpText && !r.utf8.Done() {
		return true, ErrInvalidUTF8
	}
	return true, nil
}

// InMessage reports whether a fragmented message is under way.
func (r *Reader) InMessage() bool { return r.inMsg }
