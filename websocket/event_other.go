//go:build !linux

package websocket

import (
	"net"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/ws"
)

// evState is empty: the event mode needs the event loop (Linux), so every
// Peer here runs in goroutine mode (event.go).
type evState struct{}

func evServe(*riptide.Ctx, *Options, *Handler) (*Peer, bool, error) { return nil, false, nil }

// The event mode's methods are never reached here (Peer.bc is set).
func (p *Peer) evWriteMessage(MessageType, []byte) error { return ErrClosed }
func (p *Peer) evWritePrepared(*PreparedMessage) error   { return ErrClosed }
func (p *Peer) evControl(ws.Opcode, []byte) error        { return ErrClosed }
func (p *Peer) evClose([]byte) error                     { return ErrClosed }
func (p *Peer) evRemoteAddr() net.Addr                   { return nil }
func (p *Peer) evSubprotocol() string                    { return "" }
