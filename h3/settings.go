package h3

// SETTINGS (RFC 9114 §7.2.4): a sequence of identifier/value varint pairs.

// Setting identifiers.
const (
	SettingQPACKMaxTableCapacity = 0x01 // RFC 9204 §5
	SettingMaxFieldSectionSize   = 0x06 // RFC 9114 §7.2.4.1
	SettingQPACKBlockedStreams   = 0x07 // RFC 9204 §5
	SettingEnableConnectProtocol = 0x08 // RFC 9220 §3
	SettingH3Datagram            = 0x33 // RFC 9297 §2.1.1
)

// MaxSettings is the most identifier/value pairs ParseSettings accepts in
// one frame; more is H3_EXCESSIVE_LOAD.
const MaxSettings = 256

// Settings are the values of the settings this package knows. A setting the
// peer did not send keeps its default: 0 and false, and an unlimited field
// section size (HasMaxFieldSectionSize false).
type Settings struct {
	QPACKMaxTableCapacity  uint64
	QPACKBlockedStreams    uint64
	MaxFieldSectionSize    uint64
	HasMaxFieldSectionSize bool
	EnableConnectProtocol  bool
	H3Datagram             bool
}

// ParseSettings parses a SETTINGS payload into s. Unknown identifiers are
// ignored; a repeated identifier, a reserved HTTP/2 one (0x02–0x05) or a
// boolean setting other than 0 or 1 is H3_SETTINGS_ERROR; a payload that
// ends inside a pair is H3_FRAME_ERROR. The caller bounds len(p) first
// (ControlStream does).
func ParseSettings(p []byte, s *Settings) error {
	*s = Settings{}
	var seen [MaxSettings]uint64
	n := 0
	for len(p) > 0 {
		id, k, err := parseVarintIn(p)
		if err != nil {
			return err
		}
		v, k2, err := parseVarintIn(p[k:])
		if err != nil {
			return err
		}
		p = p[k+k2:]
		if n == MaxSettings {
			return ErrTooManySettings
		}
		for _, o := range seen[:n] {
			if o == id {
				return ErrDuplicateSetting
			}
		}
		seen[n] = id
		n++
		switch id {
		case 0x02, 0x03, 0x04, 0x05:
			return ErrReservedSetting
		case SettingQPACKMaxTableCapacity:
			s.QPACKMaxTableCapacity = v
		case SettingMaxFieldSectionSize:
			s.MaxFieldSectionSize, s.HasMaxFieldSectionSize = v, true
		case SettingQPACKBlockedStreams:
			s.QPACKBlockedStreams = v
		case SettingEnableConnectProtocol, SettingH3Datagram:
			if v > 1 {
				return ErrBadSettingValue
			}
			if id == SettingH3Datagram {
				s.H3Datagram = v == 1
			} else {
				s.EnableConnectProtocol = v == 1
			}
		}
	}
	return nil
}

// AppendSettings appends a whole SETTINGS frame carrying the settings of s
// that differ from their defaults.
func AppendSettings(b []byte, s *Settings) []byte {
	var p [5 * 16]byte // five pairs of at most 8+8 bytes
	q := p[:0]
	if s.QPACKMaxTableCapacity != 0 {
		q = appendSetting(q, SettingQPACKMaxTableCapacity, s.QPACKMaxTableCapacity)
	}
	if s.HasMaxFieldSectionSize {
		q = appendSetting(q, SettingMaxFieldSectionSize, s.MaxFieldSectionSize)
	}
	if s.QPACKBlockedStreams != 0 {
		q = appendSetting(q, SettingQPACKBlockedStreams, s.QPACKBlockedStreams)
	}
	if s.EnableConnectProtocol {
		q = appendSetting(q, SettingEnableConnectProtocol, 1)
	}
	if s.H3Datagram {
		q = appendSetting(q, SettingH3Datagram, 1)
	}
	b = AppendFrameHeader(b, FrameSettings, uint64(len(q)))
	return append(b, q...)
}

func appendSetting(b []byte, id, v uint64) []byte {
	return AppendVarint(AppendVarint(b, id), v)
}
