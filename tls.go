package riptide

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"slices"
	"time"
)

// ServeTLS serves HTTPS on ln: each accepted connection does a TLS
// handshake (bounded by ReadHeaderTimeout) and is then served as HTTP/2 when
// ALPN chose "h2", as HTTP/1.1 otherwise. The certificate comes from
// s.TLSConfig (Certificates or GetCertificate) or, when it has none, from
// certFile and keyFile (PEM). Like Serve it closes ln and always returns a
// non-nil error; ErrServerClosed after Shutdown or Close.
func (s *Server) ServeTLS(ln net.Listener, certFile, keyFile string) error {
	cfg, err := s.tlsConfig(certFile, keyFile)
	if err != nil {
		ln.Close()
		return err
	}
	// The PROXY header, if any, comes before the TLS handshake. The
	// event loop serves ln itself when TLSEngine says so (tlsListen).
	return s.serve(s.tlsListen(ln, cfg))
}

// ListenAndServeTLS listens on the TCP address addr and calls ServeTLS.
func (s *Server) ListenAndServeTLS(addr, certFile, keyFile string) error {
	if s.shuttingDown() {
		return ErrServerClosed
	}
	if err := s.configErr(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.ServeTLS(ln, certFile, keyFile)
}

// tlsConfig returns the listener's TLS configuration: a clone of
// s.TLSConfig with ALPN set up and the certificate loaded if needed.
func (s *Server) tlsConfig(certFile, keyFile string) (*tls.Config, error) {
	var cfg *tls.Config
	if s.TLSConfig != nil {
		cfg = s.TLSConfig.Clone()
	} else {
		cfg = &tls.Config{}
	}
	if len(cfg.Certificates) == 0 && cfg.GetCertificate == nil && cfg.GetConfigForClient == nil {
		if certFile == "" || keyFile == "" {
			return nil, errors.New("riptide: ServeTLS needs a certificate: TLSConfig.Certificates, GetCertificate, or certFile and keyFile")
		}
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if s.HTTP2 == nil || !s.HTTP2.Disable {
		// h2 first: ALPN picks the server's preference among the client's.
		if !slices.Contains(cfg.NextProtos, "h2") {
			cfg.NextProtos = append([]string{"h2"}, cfg.NextProtos...)
		}
	} else {
		cfg.NextProtos = slices.DeleteFunc(cfg.NextProtos, func(p string) bool { return p == "h2" })
	}
	if !slices.Contains(cfg.NextProtos, "http/1.1") {
		cfg.NextProtos = append(cfg.NextProtos, "http/1.1")
	}
	return cfg, nil
}

// plainHTTPAnswer is what net/http writes to a client that sent plain
// HTTP to a TLS port.
const plainHTTPAnswer = "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"

// answerPlainHTTP runs the TLS handshake of c, if it is a TLS connection,
// and when it failed because the client spoke plain HTTP answers 400 on the
// raw connection and logs it, as net/http does. The connection is then
// closed by the caller's first read, which sees the handshake error.
func (c *conn) answerPlainHTTP() {
	tc, ok := c.nc.(*tls.Conn)
	if !ok {
		return
	}
	err := tc.Handshake()
	if err == nil {
		return // no RecordHeaderError made for errors.As: no garbage per handshake
	}
	var re tls.RecordHeaderError
	if !errors.As(err, &re) || re.Conn == nil || !looksLikeHTTP(re.RecordHeader) {
		return
	}
	_ = re.Conn.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = io.WriteString(re.Conn, plainHTTPAnswer)
	c.srv.logger().Warn("riptide: TLS handshake error: client sent an HTTP request to an HTTPS server",
		"remote", c.nc.RemoteAddr().String())
}

// looksLikeHTTP reports whether a TLS record header is the start of an
// HTTP/1.x request (net/http's tlsRecordHeaderLooksLikeHTTP).
func looksLikeHTTP(hdr [5]byte) bool {
	switch string(hdr[:]) {
	case "GET /", "HEAD ", "POST ", "PUT /", "OPTIO":
		return true
	}
	return false
}
