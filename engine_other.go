//go:build !linux

package riptide

import (
	"io"
	"net"
	"sync/atomic"
)

// platformEngine is EngineAuto's choice here.
const platformEngine = EngineGoroutine

// elServer is empty: the event-loop engine exists on Linux only.
type elServer struct{}

// elConn is never created off Linux; conn.ec is always nil.
type elConn struct{ cstate atomic.Int32 }

func (s *Server) eventLoopListener(net.Listener) (*net.TCPListener, bool) { return nil, false }
func (s *Server) serveEventLoop(*net.TCPListener) error                   { return ErrServerClosed }
func (s *Server) elCloseIdle()                                            {}
func (s *Server) elCloseAll()                                             {}
func (s *Server) elCountStates(*Stats)                                    {}

func (ec *elConn) fillHead(*conn, bool) error        { panic("riptide: no event loop") }
func (ec *elConn) untrack()                          {}
func (ec *elConn) CloseWrite() error                 { return nil }
func (ec *elConn) ReadFrom(io.Reader) (int64, error) { panic("riptide: no event loop") }
func (ec *elConn) detach() (net.Conn, error)         { panic("riptide: no event loop") }

func (c *conn) writevDirect([]byte) error { panic("riptide: no event loop") }
