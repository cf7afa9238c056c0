package http3

// quic-go's connections and streams as the core module's quicx interfaces.
// Each adapter is a struct of one pointer, stored in an interface without
// allocating; its methods convert error codes and stream IDs.

import (
	"context"

	"github.com/quic-go/quic-go"
	"github.com/riptide-http/riptide/quicx"
)

// conn adapts *quic.Conn.
type conn struct{ *quic.Conn }

var _ quicx.Conn = conn{}

func (c conn) AcceptStream(ctx context.Context) (quicx.Stream, error) {
	s, err := c.Conn.AcceptStream(ctx)
	if err != nil {
		return nil, err
	}
	return stream{s}, nil
}

func (c conn) AcceptUniStream(ctx context.Context) (quicx.ReceiveStream, error) {
	s, err := c.Conn.AcceptUniStream(ctx)
	if err != nil {
		return nil, err
	}
	return recvStream{s}, nil
}

func (c conn) OpenUniStream() (quicx.SendStream, error) {
	s, err := c.Conn.OpenUniStream()
	if err != nil {
		return nil, err
	}
	return sendStream{s}, nil
}

func (c conn) CloseWithError(code uint64, reason string) error {
	return c.Conn.CloseWithError(quic.ApplicationErrorCode(code), reason)
}

func (c conn) State() quicx.State {
	s := c.Conn.ConnectionState()
	return quicx.State{TLS: s.TLS, Used0RTT: s.Used0RTT}
}

// stream adapts *quic.Stream.
type stream struct{ *quic.Stream }

var _ quicx.Stream = stream{}

func (s stream) StreamID() int64         { return int64(s.Stream.StreamID()) }
func (s stream) CancelRead(code uint64)  { s.Stream.CancelRead(quic.StreamErrorCode(code)) }
func (s stream) CancelWrite(code uint64) { s.Stream.CancelWrite(quic.StreamErrorCode(code)) }

// recvStream adapts *quic.ReceiveStream.
type recvStream struct{ *quic.ReceiveStream }

var _ quicx.ReceiveStream = recvStream{}

func (s recvStream) StreamID() int64        { return int64(s.ReceiveStream.StreamID()) }
func (s recvStream) CancelRead(code uint64) { s.ReceiveStream.CancelRead(quic.StreamErrorCode(code)) }

// sendStream adapts *quic.SendStream.
type sendStream struct{ *quic.SendStream }

var _ quicx.SendStream = sendStream{}

func (s sendStream) StreamID() int64         { return int64(s.SendStream.StreamID()) }
func (s sendStream) CancelWrite(code uint64) { s.SendStream.CancelWrite(quic.StreamErrorCode(code)) }
