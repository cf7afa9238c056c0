package h2

// The client role's pieces: what package client needs to speak HTTP/2
// with the frame reader and the frame appenders of this package, without
// the server's connection state machine (conn.go). The frame layout checks
// are the same for both roles (a server never receives PUSH_PROMISE; a
// client that sent SETTINGS_ENABLE_PUSH=0 must treat one as a connection
// error of type PROTOCOL_ERROR, RFC 9113 §6.6, which parse reports).

import (
	"errors"
	"io"
)

// ClientPreface is the connection preface a client sends before its
// SETTINGS frame (RFC 9113 §3.4).
const ClientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// DefaultMaxFrameSize is SETTINGS_MAX_FRAME_SIZE's initial value (RFC 9113
// §6.5.2): a peer sends no larger frame until it learns a larger value.
const DefaultMaxFrameSize = 1 << 14

// MaxWindow is the largest flow-control window (RFC 9113 §6.9.1).
const MaxWindow = h2MaxWindow

// Setting is one setting of a SETTINGS frame.
type Setting struct {
	ID  SettingID
	Val uint32
}

// Valid checks s's value against its bounds (RFC 9113 §6.5.2): the error
// is a connection error (see ErrorCode).
func (s Setting) Valid() error { return setting{s.ID, s.Val}.valid() }

// Frame is a frame read by a FrameReader, its payload taken apart. Its
// slices refer to the reader's memory and are valid until the next read.
type Frame struct {
	FrameHeader
	// Data is DATA's data without padding; the header block fragment of
	// HEADERS and CONTINUATION; GOAWAY's debug data; the payload of
	// other frames.
	Data []byte
	// EndStream: DATA and HEADERS; Ack: SETTINGS and PING.
	EndStream, Ack bool
	// N is WINDOW_UPDATE's increment, or GOAWAY's last stream ID.
	N uint32
	// Code is RST_STREAM's and GOAWAY's error code.
	Code ErrCode
	// Ping is PING's opaque data.
	Ping [8]byte
}

// NumSettings is how many settings a SETTINGS frame carries.
func (f *Frame) NumSettings() int { return len(f.Data) / 6 }

// Setting returns a SETTINGS frame's i'th setting.
func (f *Frame) Setting(i int) Setting {
	p := f.Data[6*i:]
	return Setting{ID: SettingID(p[0])<<8 | SettingID(p[1]), Val: readUint32(p[2:])}
}

// FrameReader reads frames from a connection with the reader the server
// uses: small buffer while idle, a pooled large one while frames arrive
// in bulk, frame lengths bounded by the maximum given, header blocks
// checked to be one HEADERS and its CONTINUATION frames. Reading a frame
// allocates nothing.
type FrameReader struct {
	buf h2ReadBuf
	fr  frameReader
	f   frame
}

// NewFrameReader returns a reader of frames from r that refuses frames
// longer than maxFrame (the SETTINGS_MAX_FRAME_SIZE this side sent).
func NewFrameReader(r io.Reader, maxFrame uint32) *FrameReader {
	fr := &FrameReader{}
	fr.buf.init(r)
	fr.fr.r = &fr.buf
	fr.fr.max = maxFrame
	return fr
}

// ReadFrame reads the next frame into f. A malformed frame's error
// reports its code through ErrorCode; other errors are the reader's.
func (r *FrameReader) ReadFrame(f *Frame) error {
	if err := r.fr.readFrame(&r.f); err != nil {
		return err
	}
	g := &r.f
	*f = Frame{FrameHeader: g.FrameHeader, Data: g.data, EndStream: g.endStream, Ack: g.ack,
		N: g.n, Code: g.code, Ping: g.ping}
	return nil
}

// Release gives back the reader's pooled buffers; the reader is then done.
func (r *FrameReader) Release() {
	r.fr.release()
	r.buf.release()
}

// ErrorCode reports the HTTP/2 error code of an error returned by
// ReadFrame or Setting.Valid: for a connection error, stream is 0; for a
// stream error, the stream's ID. ok is false for other errors.
func ErrorCode(err error) (code ErrCode, stream uint32, ok bool) {
	var ce connError
	if errors.As(err, &ce) {
		return ErrCode(ce), 0, true
	}
	var se streamError
	if errors.As(err, &se) {
		return se.code, se.id, true
	}
	return 0, 0, false
}

// Exported frame appenders for the client role; each appends one whole
// frame (HEADERS: and its CONTINUATION frames).

// AppendSettings appends a SETTINGS frame carrying settings.
func AppendSettings(b []byte, settings []Setting) []byte {
	b = AppendFrameHeader(b, 6*len(settings), FrameSettings, 0, 0)
	for _, s := range settings {
		b = append(b, byte(s.ID>>8), byte(s.ID))
		b = appendUint32(b, s.Val)
	}
	return b
}

// AppendSettingsAck appends an acknowledgement of the peer's SETTINGS.
func AppendSettingsAck(b []byte) []byte { return appendSettingsAck(b) }

// AppendPing appends a PING, or its acknowledgement.
func AppendPing(b []byte, ack bool, data [8]byte) []byte { return appendPing(b, ack, data) }

// AppendWindowUpdate appends a WINDOW_UPDATE granting n bytes on stream
// id, or on the connection when id is 0.
func AppendWindowUpdate(b []byte, id, n uint32) []byte { return appendWindowUpdate(b, id, n) }

// AppendRSTStream appends a RST_STREAM.
func AppendRSTStream(b []byte, id uint32, code ErrCode) []byte { return appendRSTStream(b, id, code) }

// AppendGoAway appends a GOAWAY naming last as the last stream processed.
func AppendGoAway(b []byte, last uint32, code ErrCode) []byte { return appendGoAway(b, last, code) }

// AppendData appends an unpadded DATA frame.
func AppendData(b []byte, id uint32, p []byte, end bool) []byte { return appendData(b, id, p, end) }

// AppendHeaders appends a header block as a HEADERS frame and as many
// CONTINUATION frames as frames of at most max bytes need.
func AppendHeaders(b []byte, id uint32, block []byte, end bool, max int) []byte {
	return appendHeaders(b, id, block, end, max)
}
