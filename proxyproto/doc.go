// Package proxyproto is a sans-I/O parser and writer for the PROXY protocol,
// versions 1 (text) and 2 (binary), as specified by HAProxy
// (https://www.haproxy.org/download/3.0/doc/proxy-protocol.txt).
//
// A load balancer working at layer 4 (HAProxy, nginx stream, AWS NLB,
// Envoy) prepends one PROXY header to each connection it opens to a
// backend, carrying the client's source and destination addresses. The
// backend reads it before anything else on the connection.
//
// Like the h1 codec, the parser knows nothing of sockets: give it the bytes
// read so far and it reports how many form the header, or that more are
// needed, or why they are not a valid header. It allocates nothing; Unix
// addresses and TLVs are slices into the caller's buffer.
//
//	var h proxyproto.Header
//	n, err := h.Parse(buf, 0)
//	switch {
//	case err == proxyproto.ErrNeedMore: // read more bytes into buf, call again
//	case err != nil:                    // not a valid header: close the connection
//	default:                            // buf[:n] is the header; buf[n:] is the connection's data
//	}
//
// Only the PROXY command carries addresses; a LOCAL header (version 2) or
// an UNKNOWN one (version 1) is sent by the balancer for its own traffic
// (health checks), and the connection's own addresses stand. See
// [Header.Proxied].
package proxyproto
