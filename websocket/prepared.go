package websocket

import (
	"errors"

	"github.com/riptide-http/riptide/ws"
)

// PreparedMessage is a message encoded once and written to many
// connections (broadcast) without encoding or copying it per receiver: the
// server's frames are not masked, so every server Conn sends the same
// bytes. It holds the frame plain and, when made with compression, also
// compressed without context (valid for every connection that negotiated
// permessage-deflate without server context takeover). It is immutable and
// safe for concurrent use.
type PreparedMessage struct {
	plain      []byte // header and payload
	compressed []byte // nil unless prepared with compression
}

// NewPreparedMessage encodes data as one message of type mt; compress also
// prepares the compressed form.
func NewPreparedMessage(mt MessageType, data []byte, compress bool) (*PreparedMessage, error) {
	if mt != TextMessage && mt != BinaryMessage {
		return nil, errors.New("websocket: a prepared message is text or binary")
	}
	pm := &PreparedMessage{}
	h := ws.Header{Fin: true, Op: ws.Opcode(mt), Length: int64(len(data))}
	pm.plain = append(ws.AppendHeader(make([]byte, 0, ws.MaxHeaderLen+len(data)), h), data...)
	if compress {
		var c ws.Compressor
		z, err := c.Compress(nil, data)
		if err != nil {
			return nil, err
		}
		h.RSV, h.Length = ws.RSV1, int64(len(z))
		pm.compressed = append(ws.AppendHeader(make([]byte, 0, ws.MaxHeaderLen+len(z)), h), z...)
	}
	return pm, nil
}

// WritePreparedMessage writes pm: its compressed bytes on a connection that
// compresses without server context takeover, its plain bytes on any other
// server connection, and (a client must mask each frame afresh) an ordinary
// WriteMessage on a client connection.
func (c *Conn) WritePreparedMessage(pm *PreparedMessage) error {
	if c.client {
		h, n, err := ws.ParseHeader(pm.plain)
		if err != nil {
			return err
		}
		return c.WriteMessage(MessageType(h.Op), pm.plain[n:])
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	switch {
	case c.closeSent:
		return ErrClosed
	case c.writer.open:
		return errWriterOpen
	case c.werr != nil:
		return c.werr
	}
	b := pm.plain
	if c.wcompress && !c.compressor.Takeover && !c.compressor.HuffmanOnly && pm.compressed != nil {
		b = pm.compressed
	}
	if err := c.write(b); err != nil {
		return c.writeFailed(err)
	}
	return nil
}
