package h3

// HTTP/3 frames (RFC 9114 §7): a varint type, a varint length and a payload
// of exactly that length.

// FrameType is an HTTP/3 frame type.
type FrameType uint64

// Frame types (RFC 9114 §7.2, RFC 9218 §7.1).
const (
	FrameData                  FrameType = 0x00
	FrameHeaders               FrameType = 0x01
	FrameCancelPush            FrameType = 0x03
	FrameSettings              FrameType = 0x04
	FramePushPromise           FrameType = 0x05
	FrameGoaway                FrameType = 0x07
	FrameMaxPushID             FrameType = 0x0d
	FramePriorityUpdateRequest FrameType = 0xf0700
	FramePriorityUpdatePush    FrameType = 0xf0701
)

// ReservedHTTP2 reports the frame types HTTP/2 defined and HTTP/3 reserved
// (PRIORITY, PING, WINDOW_UPDATE, CONTINUATION): receiving one is a
// connection error of type H3_FRAME_UNEXPECTED (RFC 9114 §7.2.8).
func (t FrameType) ReservedHTTP2() bool {
	return t == 0x02 || t == 0x06 || t == 0x08 || t == 0x09
}

// known reports the types this package interprets; all others are skipped.
func (t FrameType) known() bool {
	switch t {
	case FrameData, FrameHeaders, FrameCancelPush, FrameSettings, FramePushPromise,
		FrameGoaway, FrameMaxPushID, FramePriorityUpdateRequest, FramePriorityUpdatePush:
		return true
	}
	return t.ReservedHTTP2()
}

// FrameHeader is the type and payload length of a frame.
type FrameHeader struct {
	Type   FrameType
	Length uint64
}

// ParseFrameHeader parses the frame header at the start of b and returns it
// with its length in bytes, or ErrNeedMore while b holds only part of it.
// The payload is the next h.Length bytes; checking the type and length
// against the stream is the caller's (see ControlStream and RequestStream).
func ParseFrameHeader(b []byte) (h FrameHeader, n int, err error) {
	t, n1, err := ParseVarint(b)
	if err != nil {
		return h, 0, err
	}
	l, n2, err := ParseVarint(b[n1:])
	if err != nil {
		return h, 0, err
	}
	return FrameHeader{Type: FrameType(t), Length: l}, n1 + n2, nil
}

// AppendFrameHeader appends a frame header; the caller appends the payload
// of exactly length bytes.
func AppendFrameHeader(b []byte, t FrameType, length uint64) []byte {
	return AppendVarint(AppendVarint(b, uint64(t)), length)
}

// ParseID parses the payload of a GOAWAY, MAX_PUSH_ID or CANCEL_PUSH frame:
// exactly one varint (RFC 9114 §7.2.3, §7.2.6, §7.2.7).
func ParseID(p []byte) (uint64, error) {
	v, n, err := parseVarintIn(p)
	if err != nil || n != len(p) {
		return 0, ErrMalformedFrame
	}
	return v, nil
}

// AppendGoaway appends a GOAWAY frame carrying id: from a server, the
// lowest client-initiated bidirectional stream ID it will not process.
func AppendGoaway(b []byte, id uint64) []byte {
	b = AppendFrameHeader(b, FrameGoaway, uint64(VarintLen(id)))
	return AppendVarint(b, id)
}

// ParsePriorityUpdate parses a PRIORITY_UPDATE payload (RFC 9218 §7.1):
// the prioritized element ID and the Priority Field Value, a slice of p.
func ParsePriorityUpdate(p []byte) (id uint64, value []byte, err error) {
	id, n, err := parseVarintIn(p)
	if err != nil {
		return 0, nil, err
	}
	return id, p[n:], nil
}

// Limits bound what the stream states accept. A zero field takes its
// default.
type Limits struct {
	// MaxSettingsBytes bounds a SETTINGS payload. Default 8 KiB; more is
	// H3_EXCESSIVE_LOAD.
	MaxSettingsBytes uint64
	// MaxPriorityUpdateBytes bounds a PRIORITY_UPDATE payload. Default 1 KiB.
	MaxPriorityUpdateBytes uint64
	// MaxUnknownBytes bounds the payload bytes of unknown (and grease)
	// frames skipped on one stream, all together. Default 64 KiB; more is
	// H3_EXCESSIVE_LOAD.
	MaxUnknownBytes uint64
	// MaxHeadersBytes bounds a HEADERS payload (the encoded field section),
	// checked before it is read. Default 64 KiB; more is
	// ErrFieldSectionTooLarge, a stream error a server may answer with 431.
	MaxHeadersBytes uint64
}

// DefaultLimits are the limits used for a nil *Limits or a zero field.
var DefaultLimits = Limits{MaxSettingsBytes: 8 << 10, MaxPriorityUpdateBytes: 1 << 10, MaxUnknownBytes: 64 << 10, MaxHeadersBytes: 64 << 10}

func (l *Limits) norm() Limits {
	d := DefaultLimits
	if l == nil {
		return d
	}
	o := *l
	if o.MaxSettingsBytes == 0 {
		o.MaxSettingsBytes = d.MaxSettingsBytes
	}
	if o.MaxPriorityUpdateBytes == 0 {
		o.MaxPriorityUpdateBytes = d.MaxPriorityUpdateBytes
	}
	if o.MaxUnknownBytes == 0 {
		o.MaxUnknownBytes = d.MaxUnknownBytes
	}
	if o.MaxHeadersBytes == 0 {
		o.MaxHeadersBytes = d.MaxHeadersBytes
	}
	return o
}

// skipUnknown charges an unknown frame's payload to a stream's budget.
func skipUnknown(used *uint64, length, budget uint64) error {
	if length > budget-*used {
		return ErrUnknownBudget
	}
	*used += length
	return nil
}
