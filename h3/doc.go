// Package h3 is riptide's sans-I/O HTTP/3 codec: QUIC variable-length
// integers (RFC 9000 §16), HTTP/3 frames (RFC 9114 §7), QPACK field sections
// with the static table only (RFC 9204) and request field-section validation
// (RFC 9114 §4.2–4.3).
//
// Like package h1 it works on caller-owned byte slices and knows nothing of
// QUIC connections, streams, sockets or goroutines; the connection logic, the
// quic-go adapter and the fuzzers all drive the same code. Nothing on the
// decoding or encoding path allocates.
//
// A request stream's bytes are read as frames; a HEADERS payload is decoded
// into a caller-owned field slice and buffer, then validated:
//
//	fh, n, err := h3.ParseFrameHeader(buf)   // err == h3.ErrNeedMore: read more
//	payload := buf[n : n+int(fh.Length)]
//	fields, _, err := h3.DecodeFieldSection(fields[:0], scratch[:0], payload, maxSize)
//	var head h3.RequestHead
//	err = head.Parse(fields, extendedConnect)
//	err = head.Build(&req) // an h1.Request, as HTTP/2 fills one
//
// The dynamic table capacity is always advertised as 0: any reference to the
// dynamic table is a connection error of type QPACK_DECOMPRESSION_FAILED, and
// the peer's QPACK encoder and decoder streams carry almost nothing
// (DrainEncoderStream and DrainDecoderStream check them).
//
// Every error is a named *[Error] carrying the HTTP/3 error code to close the
// connection or reset the stream with, and whether it is a connection error.
package h3
