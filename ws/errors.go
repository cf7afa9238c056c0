package ws

// Error is a protocol violation by the peer: the connection is failed with a
// close frame carrying Code.
type Error struct {
	Code int    // close status code to send
	Msg  string // what was wrong
}

func (e *Error) Error() string { return "websocket: " + e.Msg }

var (
	errLength        = &Error{CloseProtocolError, "64-bit payload length with the top bit set"}
	errRSV           = &Error{CloseProtocolError, "reserved bit set without an extension that defines it"}
	errOpcode        = &Error{CloseProtocolError, "reserved opcode"}
	errControlLen    = &Error{CloseProtocolError, "control frame payload over 125 bytes"}
	errControlFrag   = &Error{CloseProtocolError, "fragmented control frame"}
	errUnexpectedCnt = &Error{CloseProtocolError, "continuation frame outside a fragmented message"}
	errExpectedCnt   = &Error{CloseProtocolError, "new data frame inside a fragmented message"}
	errNotMasked     = &Error{CloseProtocolError, "client frame not masked"}
	errMasked        = &Error{CloseProtocolError, "server frame masked"}
	errRSV1Cont      = &Error{CloseProtocolError, "RSV1 set on a continuation frame"}
	// ErrInvalidUTF8 is a text message or close reason that is not UTF-8.
	ErrInvalidUTF8 = &Error{CloseInvalidPayload, "text is not valid UTF-8"}
	// ErrFrameTooBig is a frame over the reader's MaxFrame.
	ErrFrameTooBig = &Error{CloseTooBig, "frame over the size limit"}
	// ErrMessageTooBig is a message (after decompression) over MaxMessage.
	ErrMessageTooBig = &Error{CloseTooBig, "message over the size limit"}
)
