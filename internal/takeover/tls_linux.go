package takeover

import "net"

// TLS is what Take returns for a connection served over TLS on the event
// loop (the root's TLS engine): the protocol reads and writes plaintext
// through it, never waiting, and parks the socket under it (Loop) with
// Session saved beside its own state, as for an idle HTTP/1.1 connection
// over TLS. For a cleartext connection Take returns the *evloop.Conn.
//
// Reads and writes may run at once (the owner reads while other
// goroutines write); writes must be serialized by the caller.
type TLS interface {
	// Write is Seal for the upgrade's answer, before the first turn.
	Write(p []byte) (int, error)
	// Loop is the socket under TLS, the *evloop.Conn (named here as a
	// net.Conn: this package imports no engine), for its Partial,
	// ParkFor, SetWakeAt, Wake, Shut, ReadDeadline, Close and RemoteAddr;
	// not for reading or writing: what crosses it is ciphertext.
	Loop() net.Conn
	// ReadNow reads plaintext without waiting: syscall.EAGAIN when
	// crypto/tls holds no plaintext and the socket is empty (the owner
	// may then park).
	ReadNow(b []byte) (int, error)
	// Flush sends what the socket left of earlier writes, as far as it
	// takes it now, and returns how much still waits (the owner parks
	// for the socket's writability then).
	Flush() (left int, err error)
	// Seal encrypts p and sends what the socket takes of it now; the
	// rest waits, after what waited already, for Flush. p is not kept.
	Seal(p []byte) error
	// Queued is how many bytes of ciphertext wait for the socket.
	Queued() int
	// Session is what the connection saves across a park
	// (evloop.Saved.Session) for the loop's worker to serve it again.
	Session() any
}
