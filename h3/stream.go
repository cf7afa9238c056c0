package h3

// Stream rules (RFC 9114 §6): which unidirectional streams a server accepts
// and which frames may appear, in which order, on the peer's control stream
// and on a request stream. Each state is a small value a connection keeps
// per stream; it sees frame headers and payloads, never the stream itself.

// StreamType is the type of a unidirectional stream, its first varint.
type StreamType uint64

// Unidirectional stream types (RFC 9114 §6.2, RFC 9204 §4.2).
const (
	StreamControl      StreamType = 0x00
	StreamPush         StreamType = 0x01
	StreamQPACKEncoder StreamType = 0x02
	StreamQPACKDecoder StreamType = 0x03
)

// UniStreams tracks the unidirectional streams a client opened to a server.
type UniStreams struct {
	seen uint8 // bit per StreamControl, StreamQPACKEncoder, StreamQPACKDecoder
}

// Accept classifies a client's new unidirectional stream by its type. It
// returns nil for the control and QPACK streams (the first of each); a
// connection error for a push stream (a client never sends one, RFC 9114
// §6.2.2) or a second control or QPACK stream (§6.2.1, RFC 9204 §4.2); and
// ErrUnknownStreamType, a stream error, for any other type, whose stream
// the caller stops reading (§6.2).
func (u *UniStreams) Accept(t StreamType) error {
	switch t {
	case StreamPush:
		return ErrPushStream
	case StreamControl, StreamQPACKEncoder, StreamQPACKDecoder:
		bit := uint8(1) << t
		if u.seen&bit != 0 {
			return ErrSecondUniStream
		}
		u.seen |= bit
		return nil
	}
	return ErrUnknownStreamType
}

// ControlStream is the state of the peer's control stream (RFC 9114
// §6.2.1): SETTINGS first and once, then GOAWAY, MAX_PUSH_ID, CANCEL_PUSH
// and PRIORITY_UPDATE; unknown types skipped within a budget.
type ControlStream struct {
	// Settings are the peer's settings, valid once HasSettings.
	Settings    Settings
	HasSettings bool
	// GoawayID is the last GOAWAY identifier received, valid if Goaway.
	GoawayID uint64
	Goaway   bool
	// MaxPushID is the client's last MAX_PUSH_ID (push is never used;
	// it is kept only to check that it does not decrease).
	MaxPushID    uint64
	HasMaxPushID bool

	unknown uint64
}

// Check checks a frame header read on the control stream before its
// payload is read. skip reports a frame of unknown type whose payload the
// caller discards unread; otherwise the caller reads h.Length bytes (the
// checks bound them) and passes them to Apply.
func (c *ControlStream) Check(h FrameHeader, lim *Limits) (skip bool, err error) {
	l := lim.norm()
	if h.Type.ReservedHTTP2() {
		return false, ErrReservedFrameType
	}
	if !c.HasSettings && h.Type != FrameSettings {
		return false, ErrMissingSettings
	}
	switch h.Type {
	case FrameSettings:
		if c.HasSettings {
			return false, ErrSecondSettings
		}
		if h.Length > l.MaxSettingsBytes {
			return false, ErrSettingsTooLarge
		}
	case FrameGoaway, FrameMaxPushID, FrameCancelPush:
		if h.Length > 8 {
			return false, ErrMalformedFrame
		}
	case FramePriorityUpdateRequest, FramePriorityUpdatePush:
		if h.Length > l.MaxPriorityUpdateBytes {
			return false, ErrPriorityTooLarge
		}
	case FrameData, FrameHeaders, FramePushPromise:
		return false, ErrFrameUnexpected
	default:
		return true, skipUnknown(&c.unknown, h.Length, l.MaxUnknownBytes)
	}
	return false, nil
}

// Apply applies the payload p of a frame Check accepted and did not skip.
func (c *ControlStream) Apply(h FrameHeader, p []byte) error {
	if uint64(len(p)) != h.Length {
		return ErrMalformedFrame
	}
	switch h.Type {
	case FrameSettings:
		if err := ParseSettings(p, &c.Settings); err != nil {
			return err
		}
		c.HasSettings = true
	case FrameGoaway:
		id, err := ParseID(p)
		if err != nil {
			return err
		}
		if c.Goaway && id > c.GoawayID {
			return ErrGoawayIDIncreased // RFC 9114 §5.2
		}
		c.GoawayID, c.Goaway = id, true
	case FrameMaxPushID:
		id, err := ParseID(p)
		if err != nil {
			return err
		}
		if c.HasMaxPushID && id < c.MaxPushID {
			return ErrPushIDDecreased // RFC 9114 §7.2.7
		}
		c.MaxPushID, c.HasMaxPushID = id, true
	case FrameCancelPush:
		// The server never promised a push: nothing to cancel (§7.2.3).
		if _, err := ParseID(p); err != nil {
			return err
		}
	case FramePriorityUpdateRequest, FramePriorityUpdatePush:
		id, _, err := ParsePriorityUpdate(p)
		if err != nil {
			return err
		}
		// RFC 9218 §7.1: a request stream's ID is client-initiated
		// bidirectional; a push ID is within MAX_PUSH_ID.
		if h.Type == FramePriorityUpdateRequest && id%4 != 0 ||
			h.Type == FramePriorityUpdatePush && (!c.HasMaxPushID || id > c.MaxPushID) {
			return ErrPriorityID
		}
	default:
		return ErrFrameUnexpected
	}
	return nil
}

// Part says what a frame on a request stream carries.
type Part uint8

// Parts of a request stream.
const (
	PartSkip     Part = iota // an unknown frame: discard its payload unread
	PartHeaders              // the request's HEADERS: decode the payload
	PartData                 // a DATA frame: the payload is body
	PartTrailers             // trailing HEADERS: decode the payload
)

// RequestStream is the state of a request stream as a server reads it
// (RFC 9114 §4.1): HEADERS, any DATA, optionally trailing HEADERS, with
// unknown frames anywhere (within a budget). Anything else is a connection
// error of type H3_FRAME_UNEXPECTED.
type RequestStream struct {
	state   uint8 // 0 before HEADERS, 1 after, 2 after trailers
	unknown uint64
}

// Check checks a frame header read on a request stream before its payload
// is read, and says what the payload is.
func (r *RequestStream) Check(h FrameHeader, lim *Limits) (Part, error) {
	l := lim.norm()
	switch h.Type {
	case FrameHeaders:
		if r.state == 2 {
			return 0, ErrFrameUnexpected
		}
		if h.Length > l.MaxHeadersBytes {
			return 0, ErrFieldSectionTooLarge
		}
		r.state++
		if r.state == 1 {
			return PartHeaders, nil
		}
		return PartTrailers, nil
	case FrameData:
		if r.state != 1 {
			return 0, ErrFrameUnexpected // DATA before HEADERS or after trailers
		}
		return PartData, nil
	case FramePushPromise:
		return 0, ErrPushPromise
	}
	if h.Type.known() {
		if h.Type.ReservedHTTP2() {
			return 0, ErrReservedFrameType
		}
		// SETTINGS, GOAWAY, MAX_PUSH_ID, CANCEL_PUSH, PRIORITY_UPDATE
		// belong on the control stream.
		return 0, ErrFrameUnexpected
	}
	return PartSkip, skipUnknown(&r.unknown, h.Length, l.MaxUnknownBytes)
}

// Complete reports whether the stream may end here: after HEADERS (a FIN
// before them is H3_REQUEST_INCOMPLETE, RFC 9114 §4.1).
func (r *RequestStream) Complete() bool { return r.state > 0 }
