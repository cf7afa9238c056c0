package h2

// HTTP/2 frames (RFC 9113 §4 and §6): the 9-byte frame header, the frame
// types, flags, settings and error codes, the reader that takes frames
// off the connection's read buffer, the checks each frame type's layout
// must pass, and the appenders the writer builds frames with. The
// connection state machine (conn.go, flow.go, headers.go, stream.go)
// decides what a well-formed frame means; here only its form is judged,
// with the error RFC 9113 gives each malformed kind: a connection error
// (connError, answered with GOAWAY) or a stream error (streamError,
// answered with RST_STREAM).
//
// Nothing here allocates per frame: the header and, when the read buffer
// holds the whole frame, the payload are read in place; a payload the
// buffer does not hold whole is read into a pooled buffer, given back
// before the next frame is read, so that a connection that received
// large frames does not keep one while it waits.

import (
	"io"
	"strconv"
)

// FrameType is a frame's type (RFC 9113 §6, §11.2).
type FrameType uint8

// The frame types the engine knows. Frames of other types are ignored
// (RFC 9113 §5.5), except within a header block.
const (
	FrameData           FrameType = 0x0
	FrameHeaders        FrameType = 0x1
	FramePriority       FrameType = 0x2
	FrameRSTStream      FrameType = 0x3
	FrameSettings       FrameType = 0x4
	FramePushPromise    FrameType = 0x5
	FramePing           FrameType = 0x6
	FrameGoAway         FrameType = 0x7
	FrameWindowUpdate   FrameType = 0x8
	FrameContinuation   FrameType = 0x9
	FramePriorityUpdate FrameType = 0x10 // RFC 9218 §7.1
)

// Flags are a frame's flag bits; their meaning depends on its type.
type Flags uint8

// Has reports whether every bit of v is set in f.
func (f Flags) Has(v Flags) bool { return f&v == v }

// The flag bits (RFC 9113 §6).
const (
	FlagEndStream  Flags = 0x1  // DATA, HEADERS
	FlagAck        Flags = 0x1  // SETTINGS, PING
	FlagEndHeaders Flags = 0x4  // HEADERS, CONTINUATION, PUSH_PROMISE
	FlagPadded     Flags = 0x8  // DATA, HEADERS, PUSH_PROMISE
	FlagPriority   Flags = 0x20 // HEADERS
)

// SettingID identifies a setting in a SETTINGS frame (RFC 9113 §6.5.2).
type SettingID uint16

// The settings RFC 9113 §6.5.2 and its extensions define.
const (
	SettingHeaderTableSize       SettingID = 0x1
	SettingEnablePush            SettingID = 0x2
	SettingMaxConcurrentStreams  SettingID = 0x3
	SettingInitialWindowSize     SettingID = 0x4
	SettingMaxFrameSize          SettingID = 0x5
	SettingMaxHeaderListSize     SettingID = 0x6
	SettingEnableConnectProtocol SettingID = 0x8 // RFC 8441
	SettingNoRFC7540Priorities   SettingID = 0x9 // RFC 9218
)

// ErrCode is an error code of RST_STREAM and GOAWAY (RFC 9113 §7).
type ErrCode uint32

// The error codes of RFC 9113 §7.
const (
	ErrCodeNo                 ErrCode = 0x0
	ErrCodeProtocol           ErrCode = 0x1
	ErrCodeInternal           ErrCode = 0x2
	ErrCodeFlowControl        ErrCode = 0x3
	ErrCodeSettingsTimeout    ErrCode = 0x4
	ErrCodeStreamClosed       ErrCode = 0x5
	ErrCodeFrameSize          ErrCode = 0x6
	ErrCodeRefusedStream      ErrCode = 0x7
	ErrCodeCancel             ErrCode = 0x8
	ErrCodeCompression        ErrCode = 0x9
	ErrCodeConnect            ErrCode = 0xa
	ErrCodeEnhanceYourCalm    ErrCode = 0xb
	ErrCodeInadequateSecurity ErrCode = 0xc
	ErrCodeHTTP11Required     ErrCode = 0xd
)

var errCodeNames = [...]string{
	ErrCodeNo:                 "NO_ERROR",
	ErrCodeProtocol:           "PROTOCOL_ERROR",
	ErrCodeInternal:           "INTERNAL_ERROR",
	ErrCodeFlowControl:        "FLOW_CONTROL_ERROR",
	ErrCodeSettingsTimeout:    "SETTINGS_TIMEOUT",
	ErrCodeStreamClosed:       "STREAM_CLOSED",
	ErrCodeFrameSize:          "FRAME_SIZE_ERROR",
	ErrCodeRefusedStream:      "REFUSED_STREAM",
	ErrCodeCancel:             "CANCEL",
	ErrCodeCompression:        "COMPRESSION_ERROR",
	ErrCodeConnect:            "CONNECT_ERROR",
	ErrCodeEnhanceYourCalm:    "ENHANCE_YOUR_CALM",
	ErrCodeInadequateSecurity: "INADEQUATE_SECURITY",
	ErrCodeHTTP11Required:     "HTTP_1_1_REQUIRED",
}

// String returns the code's name in RFC 9113 §7.
func (c ErrCode) String() string {
	if int(c) < len(errCodeNames) {
		return errCodeNames[c]
	}
	return "ERR_UNKNOWN_" + strconv.FormatUint(uint64(c), 10)
}

// connError is a connection error (RFC 9113 §5.4.1): GOAWAY with the
// code, and the connection ends.
type connError ErrCode

func (e connError) Error() string { return "http2: connection error: " + ErrCode(e).String() }

// streamError is a stream error (RFC 9113 §5.4.2): RST_STREAM with the
// code on the stream; the connection goes on.
type streamError struct {
	id   uint32
	code ErrCode
}

func (e streamError) Error() string {
	return "http2: stream error on stream " + strconv.FormatUint(uint64(e.id), 10) + ": " + e.code.String()
}

// frameHeaderLen is the length of a frame header (RFC 9113 §4.1).
const frameHeaderLen = 9

// maxFrameSize is the largest SETTINGS_MAX_FRAME_SIZE (RFC 9113 §6.5.2).
const maxFrameSize = 1<<24 - 1

// FrameHeader is the header every frame starts with (RFC 9113 §4.1).
type FrameHeader struct {
	Length   uint32 // of the payload: 24 bits
	Type     FrameType
	Flags    Flags
	StreamID uint32 // 31 bits: the reserved bit is dropped
}

// parseFrameHeader decodes the 9 bytes of a frame header.
func parseFrameHeader(b []byte) FrameHeader {
	_ = b[8]
	return FrameHeader{
		Length:   uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]),
		Type:     FrameType(b[3]),
		Flags:    Flags(b[4]),
		StreamID: readUint32(b[5:]) & (1<<31 - 1),
	}
}

func readUint32(b []byte) uint32 {
	_ = b[3]
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// AppendFrameHeader appends a frame header (RFC 9113 §4.1); the caller
// appends the length bytes of payload.
func AppendFrameHeader(b []byte, length int, typ FrameType, flags Flags, id uint32) []byte {
	return append(b, byte(length>>16), byte(length>>8), byte(length), byte(typ), byte(flags),
		byte(id>>24)&0x7f, byte(id>>16), byte(id>>8), byte(id))
}

func appendUint32(b []byte, v uint32) []byte {
	return append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// Frame appenders: each appends one whole frame.

// appendSettings appends a SETTINGS frame carrying settings (RFC 9113 §6.5).
func appendSettings(b []byte, settings ...setting) []byte {
	b = AppendFrameHeader(b, 6*len(settings), FrameSettings, 0, 0)
	for _, s := range settings {
		b = append(b, byte(s.id>>8), byte(s.id))
		b = appendUint32(b, s.val)
	}
	return b
}

// appendSettingsAck appends an acknowledgement of the peer's SETTINGS.
func appendSettingsAck(b []byte) []byte {
	return AppendFrameHeader(b, 0, FrameSettings, FlagAck, 0)
}

// appendPing appends a PING, or its acknowledgement (RFC 9113 §6.7).
func appendPing(b []byte, ack bool, data [8]byte) []byte {
	var flags Flags
	if ack {
		flags = FlagAck
	}
	b = AppendFrameHeader(b, 8, FramePing, flags, 0)
	return append(b, data[:]...)
}

// appendWindowUpdate appends a WINDOW_UPDATE granting n bytes on stream
// id, or on the connection when id is 0 (RFC 9113 §6.9).
func appendWindowUpdate(b []byte, id, n uint32) []byte {
	b = AppendFrameHeader(b, 4, FrameWindowUpdate, 0, id)
	return appendUint32(b, n&(1<<31-1))
}

// appendRSTStream appends a RST_STREAM (RFC 9113 §6.4).
func appendRSTStream(b []byte, id uint32, code ErrCode) []byte {
	b = AppendFrameHeader(b, 4, FrameRSTStream, 0, id)
	return appendUint32(b, uint32(code))
}

// appendGoAway appends a GOAWAY naming last as the last stream processed
// (RFC 9113 §6.8), with no debug data.
func appendGoAway(b []byte, last uint32, code ErrCode) []byte {
	b = AppendFrameHeader(b, 8, FrameGoAway, 0, 0)
	b = appendUint32(b, last&(1<<31-1))
	return appendUint32(b, uint32(code))
}

// AppendRefusal appends what a server sends to a client's connection
// preface on a connection it will not serve as HTTP/2: its own preface (an
// empty SETTINGS, RFC 9113 §3.4) and a GOAWAY naming no stream processed,
// with code and debug as the reason (§6.8), after which it closes.
func AppendRefusal(b []byte, code ErrCode, debug string) []byte {
	b = appendSettings(b)
	b = AppendFrameHeader(b, 8+len(debug), FrameGoAway, 0, 0)
	b = appendUint32(b, 0)
	b = appendUint32(b, uint32(code))
	return append(b, debug...)
}

// appendData appends a DATA frame, unpadded (RFC 9113 §6.1).
func appendData(b []byte, id uint32, p []byte, end bool) []byte {
	var flags Flags
	if end {
		flags = FlagEndStream
	}
	b = AppendFrameHeader(b, len(p), FrameData, flags, id)
	return append(b, p...)
}

// appendHeaders appends a header block as a HEADERS frame and as many
// CONTINUATION frames as frames of at most max bytes need (RFC 9113 §6.2,
// §6.10), unpadded and without priority.
func appendHeaders(b []byte, id uint32, block []byte, end bool, max int) []byte {
	typ := FrameHeaders
	for first := true; first || len(block) > 0; first = false {
		n := min(len(block), max)
		var flags Flags
		if n == len(block) {
			flags |= FlagEndHeaders
		}
		if first && end {
			flags |= FlagEndStream
		}
		b = AppendFrameHeader(b, n, typ, flags, id)
		b = append(b, block[:n]...)
		block = block[n:]
		typ = FrameContinuation
	}
	return b
}

// setting is one setting of a SETTINGS frame.
type setting struct {
	id  SettingID
	val uint32
}

// valid checks a setting's value against its bounds (RFC 9113 §6.5.2,
// RFC 8441 §3).
func (s setting) valid() error {
	switch s.id {
	case SettingEnablePush, SettingEnableConnectProtocol, SettingNoRFC7540Priorities:
		// RFC 9113 §6.5.2, RFC 8441 §3, RFC 9218 §2.1: 0 or 1.
		if s.val > 1 {
			return connError(ErrCodeProtocol)
		}
	case SettingInitialWindowSize:
		if s.val > 1<<31-1 {
			return connError(ErrCodeFlowControl)
		}
	case SettingMaxFrameSize:
		if s.val < 1<<14 || s.val > maxFrameSize {
			return connError(ErrCodeProtocol)
		}
	}
	return nil
}

// frame is one frame read, its payload taken apart by parse. It refers to
// the reader's memory, and is valid until the next frame is read.
type frame struct {
	FrameHeader
	// data: DATA's data without padding; the header block fragment of
	// HEADERS and CONTINUATION; SETTINGS' settings (6 bytes each);
	// GOAWAY's debug data; the payload of other frames.
	data []byte
	// DATA, HEADERS: END_STREAM; SETTINGS, PING: ACK.
	endStream, ack bool
	// HEADERS with priority, and PRIORITY (RFC 9113 §5.3.2, §6.3).
	hasPriority bool
	exclusive   bool
	weight      uint8
	dep         uint32
	// WINDOW_UPDATE's increment; GOAWAY's last stream ID.
	n uint32
	// RST_STREAM's and GOAWAY's error code.
	code ErrCode
	// PING's opaque data.
	ping [8]byte
}

// numSettings is how many settings a SETTINGS frame carries.
func (f *frame) numSettings() int { return len(f.data) / 6 }

// setting returns the SETTINGS frame's i'th setting.
func (f *frame) setting(i int) setting {
	p := f.data[6*i:]
	return setting{id: SettingID(p[0])<<8 | SettingID(p[1]), val: readUint32(p[2:])}
}

// parse takes the payload p of the frame fh apart into f, checking its
// layout as RFC 9113 §6 requires of each type; a frame that fails is
// answered with the error returned (connError or streamError).
func (f *frame) parse(fh FrameHeader, p []byte) error {
	*f = frame{FrameHeader: fh}
	switch fh.Type {
	case FrameData:
		// §6.1: DATA belongs to a stream; padding may not reach past the
		// payload.
		if fh.StreamID == 0 {
			return connError(ErrCodeProtocol)
		}
		data, err := unpad(fh, p)
		if err != nil {
			return err
		}
		f.data, f.endStream = data, fh.Flags.Has(FlagEndStream)
	case FrameHeaders:
		// §6.2: as DATA, plus the optional priority fields.
		if fh.StreamID == 0 {
			return connError(ErrCodeProtocol)
		}
		pad := 0
		if fh.Flags.Has(FlagPadded) {
			if len(p) < 1 {
				return connError(ErrCodeFrameSize) // §4.2: too short for its fields
			}
			pad, p = int(p[0]), p[1:]
		}
		if fh.Flags.Has(FlagPriority) {
			if len(p) < 5 {
				return connError(ErrCodeFrameSize)
			}
			f.setPriority(p)
			p = p[5:]
		}
		if pad > len(p) {
			return connError(ErrCodeProtocol)
		}
		f.data, f.endStream = p[:len(p)-pad], fh.Flags.Has(FlagEndStream)
	case FramePriority:
		// §6.3: on a stream, 5 bytes.
		if fh.StreamID == 0 {
			return connError(ErrCodeProtocol)
		}
		if len(p) != 5 {
			return connError(ErrCodeFrameSize)
		}
		f.setPriority(p)
	case FrameRSTStream:
		// §6.4: 4 bytes, on a stream.
		if len(p) != 4 {
			return connError(ErrCodeFrameSize)
		}
		if fh.StreamID == 0 {
			return connError(ErrCodeProtocol)
		}
		f.code = ErrCode(readUint32(p))
	case FrameSettings:
		// §6.5: an ACK is empty; on the connection; whole settings.
		f.ack = fh.Flags.Has(FlagAck)
		if f.ack && len(p) > 0 {
			return connError(ErrCodeFrameSize)
		}
		if fh.StreamID != 0 {
			return connError(ErrCodeProtocol)
		}
		if len(p)%6 != 0 {
			return connError(ErrCodeFrameSize)
		}
		f.data = p
		// §6.5.2: the first INITIAL_WINDOW_SIZE within the largest
		// window; every setting's bounds are checked as the settings are
		// applied in turn (Conn.onSettings).
		for i := range f.numSettings() {
			if s := f.setting(i); s.id == SettingInitialWindowSize {
				if s.val > 1<<31-1 {
					return connError(ErrCodeFlowControl)
				}
				break
			}
		}
	case FramePushPromise:
		// §8.4: a client cannot push.
		return connError(ErrCodeProtocol)
	case FramePing:
		// §6.7: 8 bytes, on the connection.
		if len(p) != 8 {
			return connError(ErrCodeFrameSize)
		}
		if fh.StreamID != 0 {
			return connError(ErrCodeProtocol)
		}
		f.ack = fh.Flags.Has(FlagAck)
		copy(f.ping[:], p)
	case FrameGoAway:
		// §6.8: on the connection, at least 8 bytes.
		if fh.StreamID != 0 {
			return connError(ErrCodeProtocol)
		}
		if len(p) < 8 {
			return connError(ErrCodeFrameSize)
		}
		f.n = readUint32(p) & (1<<31 - 1)
		f.code = ErrCode(readUint32(p[4:]))
		f.data = p[8:]
	case FrameWindowUpdate:
		// §6.9: 4 bytes; an increment of 0 is an error of the stream, or
		// of the connection on stream 0.
		if len(p) != 4 {
			return connError(ErrCodeFrameSize)
		}
		f.n = readUint32(p) & (1<<31 - 1)
		if f.n == 0 {
			if fh.StreamID == 0 {
				return connError(ErrCodeProtocol)
			}
			return streamError{fh.StreamID, ErrCodeProtocol}
		}
	case FrameContinuation:
		// §6.10: on a stream (its order is the reader's check).
		if fh.StreamID == 0 {
			return connError(ErrCodeProtocol)
		}
		f.data = p
	case FramePriorityUpdate:
		// RFC 9218 §7.1: on the connection, naming a stream.
		if fh.StreamID != 0 {
			return connError(ErrCodeProtocol)
		}
		if len(p) < 4 {
			return connError(ErrCodeFrameSize)
		}
		if f.n = readUint32(p) & (1<<31 - 1); f.n == 0 {
			return connError(ErrCodeProtocol)
		}
		f.data = p[4:]
	default:
		f.data = p // ignored (§5.5)
	}
	return nil
}

// setPriority takes the 5 bytes of a priority (RFC 9113 §6.3).
func (f *frame) setPriority(p []byte) {
	v := readUint32(p)
	f.hasPriority = true
	f.dep = v & (1<<31 - 1)
	f.exclusive = v != f.dep
	f.weight = p[4]
}

// unpad returns a padded frame's data (RFC 9113 §6.1): padding as long as
// the payload or longer is a connection error, and a PADDED frame too
// short for its Pad Length field a frame size error (§4.2).
func unpad(fh FrameHeader, p []byte) ([]byte, error) {
	if !fh.Flags.Has(FlagPadded) {
		return p, nil
	}
	if len(p) < 1 {
		return nil, connError(ErrCodeFrameSize)
	}
	pad := int(p[0])
	p = p[1:]
	if pad > len(p) {
		return nil, connError(ErrCodeProtocol)
	}
	return p[:len(p)-pad], nil
}

// frameReader reads frames from a connection's read buffer.
type frameReader struct {
	r *h2ReadBuf
	// max is the SETTINGS_MAX_FRAME_SIZE the server advertised: longer
	// frames are a connection error (RFC 9113 §4.2).
	max uint32
	// contID is the stream whose header block awaits a CONTINUATION
	// frame; 0 when none does.
	contID uint32
	hdr    [frameHeaderLen]byte
	// big holds a payload the read buffer does not hold whole, until the
	// next frame is read; one over its size (when max is over 16 KiB)
	// is read into huge, which grows to the largest such frame.
	big  *[h2ReadBigSize]byte
	huge []byte
}

// readHeader reads the next frame header and checks the frame's length
// against SETTINGS_MAX_FRAME_SIZE (RFC 9113 §4.2) and its place in the
// frame sequence: a header block is a HEADERS frame and the CONTINUATION
// frames of its stream, with no other frame between them (§6.10). Errors
// are a connError, or the read buffer's.
func (fr *frameReader) readHeader() (FrameHeader, error) {
	b := fr.r.next(frameHeaderLen)
	if b == nil {
		b = fr.hdr[:]
		if _, err := io.ReadFull(fr.r, b); err != nil {
			return FrameHeader{}, err
		}
	}
	fh := parseFrameHeader(b)
	if fh.Length > fr.max {
		return fh, connError(ErrCodeFrameSize)
	}
	if fr.contID != 0 {
		if fh.Type != FrameContinuation || fh.StreamID != fr.contID {
			return fh, connError(ErrCodeProtocol)
		}
	} else if fh.Type == FrameContinuation {
		return fh, connError(ErrCodeProtocol)
	}
	if fh.Type == FrameHeaders || fh.Type == FrameContinuation {
		fr.contID = fh.StreamID
		if fh.Flags.Has(FlagEndHeaders) {
			fr.contID = 0
		}
	}
	return fh, nil
}

// readPayload reads the payload of the frame whose header fh was just
// read. It is valid until the next read: in the read buffer when whole
// there, else in fr.buf.
func (fr *frameReader) readPayload(fh FrameHeader) ([]byte, error) {
	n := int(fh.Length)
	if p := fr.r.next(n); p != nil {
		return p, nil
	}
	var p []byte
	if n <= h2ReadBigSize {
		fr.big = h2ReadBigPool.Get().(*[h2ReadBigSize]byte)
		p = fr.big[:n]
	} else {
		if cap(fr.huge) < n {
			fr.huge = make([]byte, n)
		}
		p = fr.huge[:n]
	}
	if _, err := io.ReadFull(fr.r, p); err != nil {
		return nil, err
	}
	return p, nil
}

// release gives back the buffer of the last frame's payload, if it took
// one.
func (fr *frameReader) release() {
	if fr.big != nil {
		h2ReadBigPool.Put(fr.big)
		fr.big = nil
	}
}

// readFrame reads the next frame into f; errors are a connError or a
// streamError for a malformed frame, or the read buffer's.
func (fr *frameReader) readFrame(f *frame) error {
	fr.release() // the last frame is processed
	fh, err := fr.readHeader()
	if err != nil {
		return err
	}
	p, err := fr.readPayload(fh)
	if err != nil {
		return err
	}
	return f.parse(fh, p)
}
