//go:build !linux

package riptide

import (
	"crypto/tls"
	"net"
)

// platformEngine is EngineAuto's choice here.
const platformEngine = EngineGoroutine

// elServer is empty: the event-loop engine exists on Linux only
// (engine_linux.go).
type elServer struct{}

// elConn is empty: no connection is on an event loop here, conn.ec is
// always nil.
type elConn struct{}

// tlsSock is empty: no TLS connection is on an event loop here, conn.tl
// is always nil.
type tlsSock struct{}

// tlsListen is crypto/tls's listener over ln (with the PROXY protocol's
// under it when set): the goroutine engine serves TLS here.
func (s *Server) tlsListen(ln net.Listener, cfg *tls.Config) net.Listener {
	return tls.NewListener(s.proxyListen(ln), cfg)
}

// serveEventLoop is false: every listener is served by the goroutine
// engine.
func (s *Server) serveEventLoop(net.Listener) (bool, error) { return false, nil }

// elCloseIdle, elCloseAll and elCountStates have no event-loop
// connections to act on.
func (s *Server) elCloseIdle(int64)    {}
func (s *Server) elCloseAll()          {}
func (s *Server) elCountStates(*Stats) {}

// The conn's seams (see engine_linux.go) all answer that c is not on an
// event loop: the goroutine engine's path runs.
func (c *conn) elFill(bool) (bool, error)                      { return false, nil }
func (c *conn) elWritev([]byte) (bool, error)                  { return false, nil }
func (c *conn) elMirrorState(ConnState)                        {}
func (c *conn) elUntrack() bool                                { return false }
func (c *conn) elCloseWriter() interface{ CloseWrite() error } { return nil }
func (c *conn) elDetach() (net.Conn, bool, error)              { return nil, false, nil }
