package h3

import (
	"bytes"
	"testing"
)

func TestParseFrameHeader(t *testing.T) {
	// RFC 9114 §7.1: type and length varints, the payload after them.
	in := AppendFrameHeader(nil, FramePriorityUpdateRequest, 300)
	if want := unhex(t, "800f0700412c"); !bytes.Equal(in, want) {
		t.Fatalf("AppendFrameHeader = %x, want %x", in, want)
	}
	for i := range len(in) {
		if _, _, err := ParseFrameHeader(in[:i]); err != ErrNeedMore {
			t.Fatalf("ParseFrameHeader(%d of %d bytes) err = %v, want ErrNeedMore", i, len(in), err)
		}
	}
	h, n, err := ParseFrameHeader(append(in, 1, 2, 3))
	if err != nil || n != len(in) || h != (FrameHeader{FramePriorityUpdateRequest, 300}) {
		t.Fatalf("ParseFrameHeader = %+v, %d, %v", h, n, err)
	}
}

func hdr(t FrameType, l uint64) FrameHeader { return FrameHeader{Type: t, Length: l} }

// settingsFrame returns a SETTINGS payload of identifier/value pairs.
func settingsPayload(kv ...uint64) []byte {
	var b []byte
	for _, v := range kv {
		b = AppendVarint(b, v)
	}
	return b
}

func TestParseSettings(t *testing.T) {
	tests := []struct {
		rule string
		p    []byte
		want Settings
		err  error
	}{
		{"RFC 9114 §7.2.4: empty SETTINGS", nil, Settings{}, nil},
		{"RFC 9114 §7.2.4.1: known settings", settingsPayload(0x01, 4096, 0x06, 16384, 0x07, 100, 0x08, 1, 0x33, 1),
			Settings{QPACKMaxTableCapacity: 4096, MaxFieldSectionSize: 16384, HasMaxFieldSectionSize: true, QPACKBlockedStreams: 100, EnableConnectProtocol: true, H3Datagram: true}, nil},
		{"RFC 9114 §7.2.4: unknown and grease identifiers ignored", settingsPayload(0x1f*7+0x21, 5, 0x4242, 9, 0x06, 10),
			Settings{MaxFieldSectionSize: 10, HasMaxFieldSectionSize: true}, nil},
		{"RFC 9114 §7.2.4: repeated identifier", settingsPayload(0x06, 1, 0x06, 1), Settings{}, ErrDuplicateSetting},
		{"RFC 9114 §7.2.4: repeated unknown identifier", settingsPayload(0x4242, 1, 0x4242, 2), Settings{}, ErrDuplicateSetting},
		{"RFC 9114 §7.2.4.1: HTTP/2 ENABLE_PUSH reserved", settingsPayload(0x02, 0), Settings{}, ErrReservedSetting},
		{"RFC 9114 §7.2.4.1: HTTP/2 MAX_CONCURRENT_STREAMS reserved", settingsPayload(0x03, 100), Settings{}, ErrReservedSetting},
		{"RFC 9114 §7.2.4.1: HTTP/2 INITIAL_WINDOW_SIZE reserved", settingsPayload(0x04, 100), Settings{}, ErrReservedSetting},
		{"RFC 9114 §7.2.4.1: HTTP/2 MAX_FRAME_SIZE reserved", settingsPayload(0x05, 100), Settings{}, ErrReservedSetting},
		{"RFC 9220 §3: ENABLE_CONNECT_PROTOCOL above 1", settingsPayload(0x08, 2), Settings{}, ErrBadSettingValue},
		{"RFC 9297 §2.1.1: H3_DATAGRAM above 1", settingsPayload(0x33, 2), Settings{}, ErrBadSettingValue},
		{"RFC 9114 §7.1: pair cut by the frame end", append(settingsPayload(0x06), 0x40), Settings{}, ErrMalformedFrame},
		{"RFC 9114 §7.1: identifier without value", settingsPayload(0x06), Settings{}, ErrMalformedFrame},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			var s Settings
			err := ParseSettings(tt.p, &s)
			if err != tt.err {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if err == nil && s != tt.want {
				t.Fatalf("settings = %+v, want %+v", s, tt.want)
			}
		})
	}
}

// RFC 9114 §7.2.4: a frame with more identifiers than MaxSettings is refused
// (H3_EXCESSIVE_LOAD) rather than scanned quadratically.
func TestParseSettingsTooMany(t *testing.T) {
	var p []byte
	for i := range MaxSettings + 1 {
		p = append(p, AppendVarint(AppendVarint(nil, uint64(0x100+i)), 0)...)
	}
	var s Settings
	if err := ParseSettings(p[:len(p)-3], &s); err != nil {
		t.Fatalf("MaxSettings pairs: %v", err)
	}
	if err := ParseSettings(p, &s); err != ErrTooManySettings {
		t.Fatalf("MaxSettings+1 pairs: err = %v, want ErrTooManySettings", err)
	}
}

func TestAppendSettings(t *testing.T) {
	in := Settings{MaxFieldSectionSize: 65536, HasMaxFieldSectionSize: true, EnableConnectProtocol: true, H3Datagram: true, QPACKBlockedStreams: 3, QPACKMaxTableCapacity: 7}
	b := AppendSettings([]byte{0xee}, &in)
	h, n, err := ParseFrameHeader(b[1:])
	if err != nil || h.Type != FrameSettings || int(h.Length) != len(b)-1-n {
		t.Fatalf("header %+v, %d, %v for %x", h, n, err, b)
	}
	var out Settings
	if err := ParseSettings(b[1+n:], &out); err != nil || out != in {
		t.Fatalf("round trip: %+v, %v; want %+v", out, err, in)
	}
	// RFC 9114 §7.2.4.2: defaults are not sent; an empty SETTINGS is valid.
	if b := AppendSettings(nil, &Settings{}); !bytes.Equal(b, []byte{0x04, 0x00}) {
		t.Fatalf("empty SETTINGS = %x", b)
	}
}

func TestParseIDAndPriorityUpdate(t *testing.T) {
	b := AppendGoaway(nil, 1<<20)
	h, n, err := ParseFrameHeader(b)
	if err != nil || h.Type != FrameGoaway || int(h.Length) != len(b)-n {
		t.Fatalf("GOAWAY header %+v, %v", h, err)
	}
	if id, err := ParseID(b[n:]); err != nil || id != 1<<20 {
		t.Fatalf("GOAWAY id = %d, %v", id, err)
	}
	// RFC 9114 §7.2.6: the payload is exactly one varint.
	if _, err := ParseID(append(b[n:], 0)); err != ErrMalformedFrame {
		t.Fatalf("GOAWAY with a trailing byte: %v", err)
	}
	if _, err := ParseID(b[n : len(b)-1]); err != ErrMalformedFrame {
		t.Fatalf("GOAWAY cut short: %v", err)
	}
	if _, err := ParseID(nil); err != ErrMalformedFrame {
		t.Fatalf("empty GOAWAY: %v", err)
	}
	// RFC 9218 §7.1: element ID then the Priority Field Value.
	id, v, err := ParsePriorityUpdate(append(AppendVarint(nil, 8), "u=1, i"...))
	if err != nil || id != 8 || string(v) != "u=1, i" {
		t.Fatalf("PRIORITY_UPDATE = %d, %q, %v", id, v, err)
	}
	if _, _, err := ParsePriorityUpdate([]byte{0x40}); err != ErrMalformedFrame {
		t.Fatalf("PRIORITY_UPDATE cut in its ID: %v", err)
	}
}

func TestUniStreams(t *testing.T) {
	tests := []struct {
		rule  string
		types []StreamType
		err   error // for the last one
	}{
		{"RFC 9114 §6.2.1: one control stream", []StreamType{StreamControl}, nil},
		{"RFC 9114 §6.2.1: a second control stream", []StreamType{StreamControl, StreamQPACKEncoder, StreamControl}, ErrSecondUniStream},
		{"RFC 9204 §4.2: a second encoder stream", []StreamType{StreamQPACKEncoder, StreamQPACKEncoder}, ErrSecondUniStream},
		{"RFC 9204 §4.2: a second decoder stream", []StreamType{StreamQPACKDecoder, StreamControl, StreamQPACKDecoder}, ErrSecondUniStream},
		{"RFC 9204 §4.2: encoder and decoder streams", []StreamType{StreamControl, StreamQPACKEncoder, StreamQPACKDecoder}, nil},
		{"RFC 9114 §6.2.2: a client's push stream", []StreamType{StreamPush}, ErrPushStream},
		{"RFC 9114 §6.2: unknown type (grease 0x21)", []StreamType{0x21}, ErrUnknownStreamType},
		{"RFC 9114 §6.2: unknown types do not count", []StreamType{0x54, 0x54, StreamControl}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			var u UniStreams
			var err error
			for _, st := range tt.types {
				err = u.Accept(st)
			}
			if err != tt.err {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
		})
	}
}

// ctlFrame is a frame on the control stream: its header, and its payload
// unless it is skipped.
type ctlFrame struct {
	h FrameHeader
	p []byte
}

func settingsFrame(kv ...uint64) ctlFrame {
	p := settingsPayload(kv...)
	return ctlFrame{hdr(FrameSettings, uint64(len(p))), p}
}

func idFrame(t FrameType, id uint64) ctlFrame {
	p := AppendVarint(nil, id)
	return ctlFrame{hdr(t, uint64(len(p))), p}
}

func TestControlStream(t *testing.T) {
	prio := append(AppendVarint(nil, 0), "u=2"...)
	prio1 := append(AppendVarint(nil, 1), "u=2"...)
	tests := []struct {
		rule   string
		frames []ctlFrame
		lim    *Limits
		err    error
	}{
		{"RFC 9114 §6.2.1: SETTINGS first", []ctlFrame{settingsFrame(0x06, 100)}, nil, nil},
		{"RFC 9114 §6.2.1: GOAWAY first is H3_MISSING_SETTINGS", []ctlFrame{idFrame(FrameGoaway, 0)}, nil, ErrMissingSettings},
		{"RFC 9114 §6.2.1: grease frame first is H3_MISSING_SETTINGS", []ctlFrame{{hdr(0x21, 0), nil}}, nil, ErrMissingSettings},
		{"RFC 9114 §7.2.4: second SETTINGS", []ctlFrame{settingsFrame(), settingsFrame()}, nil, ErrSecondSettings},
		{"RFC 9114 §7.2.4: SETTINGS over the byte budget", []ctlFrame{{hdr(FrameSettings, 8<<10+1), nil}}, nil, ErrSettingsTooLarge},
		{"RFC 9114 §7.2.4: SETTINGS within a set budget", []ctlFrame{{hdr(FrameSettings, 100), nil}}, &Limits{MaxSettingsBytes: 99}, ErrSettingsTooLarge},
		{"RFC 9114 §7.2.4: SETTINGS payload errors surface", []ctlFrame{settingsFrame(0x02, 1)}, nil, ErrReservedSetting},
		{"RFC 9114 §7.2.1: DATA on the control stream", []ctlFrame{settingsFrame(), {hdr(FrameData, 1), []byte{0}}}, nil, ErrFrameUnexpected},
		{"RFC 9114 §7.2.2: HEADERS on the control stream", []ctlFrame{settingsFrame(), {hdr(FrameHeaders, 2), []byte{0, 0}}}, nil, ErrFrameUnexpected},
		{"RFC 9114 §7.2.5: PUSH_PROMISE on the control stream", []ctlFrame{settingsFrame(), {hdr(FramePushPromise, 1), []byte{0}}}, nil, ErrFrameUnexpected},
		{"RFC 9114 §7.2.8: HTTP/2 PRIORITY (0x02) reserved", []ctlFrame{settingsFrame(), {hdr(0x02, 0), nil}}, nil, ErrReservedFrameType},
		{"RFC 9114 §7.2.8: HTTP/2 PING (0x06) reserved", []ctlFrame{settingsFrame(), {hdr(0x06, 8), nil}}, nil, ErrReservedFrameType},
		{"RFC 9114 §7.2.8: HTTP/2 WINDOW_UPDATE (0x08) reserved", []ctlFrame{settingsFrame(), {hdr(0x08, 4), nil}}, nil, ErrReservedFrameType},
		{"RFC 9114 §7.2.8: HTTP/2 CONTINUATION (0x09) reserved, even first", []ctlFrame{{hdr(0x09, 0), nil}}, nil, ErrReservedFrameType},
		{"RFC 9114 §9: unknown frames skipped", []ctlFrame{settingsFrame(), {hdr(0x21, 1000), nil}, {hdr(0x1f*3+0x21, 1000), nil}, idFrame(FrameGoaway, 4)}, nil, nil},
		{"RFC 9114 §10.5: unknown frames past the byte budget", []ctlFrame{settingsFrame(), {hdr(0x21, 40<<10), nil}, {hdr(0x21, 24<<10+1), nil}}, nil, ErrUnknownBudget},
		{"RFC 9114 §10.5: one unknown frame past the budget", []ctlFrame{settingsFrame(), {hdr(0x21, 1<<61), nil}}, nil, ErrUnknownBudget},
		{"RFC 9114 §5.2: GOAWAY identifiers may decrease", []ctlFrame{settingsFrame(), idFrame(FrameGoaway, 8), idFrame(FrameGoaway, 4)}, nil, nil},
		{"RFC 9114 §5.2: GOAWAY identifier increased", []ctlFrame{settingsFrame(), idFrame(FrameGoaway, 4), idFrame(FrameGoaway, 8)}, nil, ErrGoawayIDIncreased},
		{"RFC 9114 §7.2.6: GOAWAY longer than a varint", []ctlFrame{settingsFrame(), {hdr(FrameGoaway, 9), nil}}, nil, ErrMalformedFrame},
		{"RFC 9114 §7.2.7: MAX_PUSH_ID may grow", []ctlFrame{settingsFrame(), idFrame(FrameMaxPushID, 1), idFrame(FrameMaxPushID, 5)}, nil, nil},
		{"RFC 9114 §7.2.7: MAX_PUSH_ID reduced", []ctlFrame{settingsFrame(), idFrame(FrameMaxPushID, 5), idFrame(FrameMaxPushID, 1)}, nil, ErrPushIDDecreased},
		{"RFC 9114 §7.2.3: CANCEL_PUSH accepted, nothing was pushed", []ctlFrame{settingsFrame(), idFrame(FrameCancelPush, 3)}, nil, nil},
		{"RFC 9114 §7.2.3: CANCEL_PUSH with two varints", []ctlFrame{settingsFrame(), {hdr(FrameCancelPush, 2), []byte{1, 1}}}, nil, ErrMalformedFrame},
		{"RFC 9218 §7.1: PRIORITY_UPDATE", []ctlFrame{settingsFrame(), idFrame(FrameMaxPushID, 0), {hdr(FramePriorityUpdateRequest, uint64(len(prio))), prio}, {hdr(FramePriorityUpdatePush, uint64(len(prio))), prio}}, nil, nil},
		{"RFC 9218 §7.1: PRIORITY_UPDATE for a server-initiated stream ID", []ctlFrame{settingsFrame(), {hdr(FramePriorityUpdateRequest, uint64(len(prio1))), prio1}}, nil, ErrPriorityID},
		{"RFC 9218 §7.1: PRIORITY_UPDATE for a push ID without MAX_PUSH_ID", []ctlFrame{settingsFrame(), {hdr(FramePriorityUpdatePush, uint64(len(prio))), prio}}, nil, ErrPriorityID},
		{"RFC 9218 §7.1: PRIORITY_UPDATE for a push ID above MAX_PUSH_ID", []ctlFrame{settingsFrame(), idFrame(FrameMaxPushID, 0), {hdr(FramePriorityUpdatePush, uint64(len(prio1))), prio1}}, nil, ErrPriorityID},
		{"RFC 9218 §7.1: PRIORITY_UPDATE over its bound", []ctlFrame{settingsFrame(), {hdr(FramePriorityUpdateRequest, 1025), nil}}, nil, ErrPriorityTooLarge},
		{"RFC 9218 §7.1: PRIORITY_UPDATE without an ID", []ctlFrame{settingsFrame(), {hdr(FramePriorityUpdateRequest, 0), []byte{}}}, nil, ErrMalformedFrame},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			var c ControlStream
			var err error
			for _, f := range tt.frames {
				var skip bool
				if skip, err = c.Check(f.h, tt.lim); err != nil {
					break
				}
				if skip != !f.h.Type.known() {
					t.Fatalf("frame %#x: skip = %v", f.h.Type, skip)
				}
				if !skip {
					if err = c.Apply(f.h, f.p); err != nil {
						break
					}
				}
			}
			if err != tt.err {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
		})
	}
}

func TestControlStreamState(t *testing.T) {
	var c ControlStream
	for _, f := range []ctlFrame{settingsFrame(0x06, 4096, 0x08, 1), idFrame(FrameGoaway, 12), idFrame(FrameMaxPushID, 2)} {
		if _, err := c.Check(f.h, nil); err != nil {
			t.Fatal(err)
		}
		if err := c.Apply(f.h, f.p); err != nil {
			t.Fatal(err)
		}
	}
	if !c.HasSettings || c.Settings.MaxFieldSectionSize != 4096 || !c.Settings.EnableConnectProtocol ||
		!c.Goaway || c.GoawayID != 12 || !c.HasMaxPushID || c.MaxPushID != 2 {
		t.Fatalf("state %+v", c)
	}
	// Apply checks the payload against the header's length.
	if err := c.Apply(hdr(FrameGoaway, 2), []byte{4}); err != ErrMalformedFrame {
		t.Fatalf("short payload: %v", err)
	}
}

func TestRequestStream(t *testing.T) {
	tests := []struct {
		rule   string
		frames []FrameHeader
		lim    *Limits
		parts  []Part
		err    error
	}{
		{"RFC 9114 §4.1: HEADERS, DATA, trailers", []FrameHeader{hdr(FrameHeaders, 10), hdr(FrameData, 5), hdr(FrameData, 0), hdr(FrameHeaders, 3)}, nil,
			[]Part{PartHeaders, PartData, PartData, PartTrailers}, nil},
		{"RFC 9114 §4.1: unknown frames anywhere", []FrameHeader{hdr(0x21, 3), hdr(FrameHeaders, 10), hdr(0x40, 1), hdr(FrameData, 5), hdr(FrameHeaders, 3), hdr(0x21, 0)}, nil,
			[]Part{PartSkip, PartHeaders, PartSkip, PartData, PartTrailers, PartSkip}, nil},
		{"RFC 9114 §4.1: DATA before HEADERS", []FrameHeader{hdr(FrameData, 5)}, nil, nil, ErrFrameUnexpected},
		{"RFC 9114 §4.1: DATA after trailers", []FrameHeader{hdr(FrameHeaders, 1), hdr(FrameHeaders, 1), hdr(FrameData, 1)}, nil, []Part{PartHeaders, PartTrailers}, ErrFrameUnexpected},
		{"RFC 9114 §4.1: HEADERS after trailers", []FrameHeader{hdr(FrameHeaders, 1), hdr(FrameData, 1), hdr(FrameHeaders, 1), hdr(FrameHeaders, 1)}, nil, []Part{PartHeaders, PartData, PartTrailers}, ErrFrameUnexpected},
		{"RFC 9114 §7.2.4: SETTINGS on a request stream", []FrameHeader{hdr(FrameSettings, 0)}, nil, nil, ErrFrameUnexpected},
		{"RFC 9114 §7.2.6: GOAWAY on a request stream", []FrameHeader{hdr(FrameHeaders, 1), hdr(FrameGoaway, 1)}, nil, []Part{PartHeaders}, ErrFrameUnexpected},
		{"RFC 9114 §7.2.7: MAX_PUSH_ID on a request stream", []FrameHeader{hdr(FrameMaxPushID, 1)}, nil, nil, ErrFrameUnexpected},
		{"RFC 9114 §7.2.3: CANCEL_PUSH on a request stream", []FrameHeader{hdr(FrameCancelPush, 1)}, nil, nil, ErrFrameUnexpected},
		{"RFC 9218 §7.1: PRIORITY_UPDATE on a request stream", []FrameHeader{hdr(FramePriorityUpdateRequest, 2)}, nil, nil, ErrFrameUnexpected},
		{"RFC 9114 §7.2.5: PUSH_PROMISE from a client", []FrameHeader{hdr(FrameHeaders, 1), hdr(FramePushPromise, 3)}, nil, []Part{PartHeaders}, ErrPushPromise},
		{"RFC 9114 §7.2.8: reserved 0x02", []FrameHeader{hdr(0x02, 1)}, nil, nil, ErrReservedFrameType},
		{"RFC 9114 §7.2.8: reserved 0x06", []FrameHeader{hdr(FrameHeaders, 1), hdr(0x06, 1)}, nil, []Part{PartHeaders}, ErrReservedFrameType},
		{"RFC 9114 §7.2.8: reserved 0x08", []FrameHeader{hdr(0x08, 1)}, nil, nil, ErrReservedFrameType},
		{"RFC 9114 §7.2.8: reserved 0x09", []FrameHeader{hdr(FrameHeaders, 1), hdr(0x09, 1)}, nil, []Part{PartHeaders}, ErrReservedFrameType},
		{"RFC 9114 §4.2.2: HEADERS longer than the limit, before reading it", []FrameHeader{hdr(FrameHeaders, 1<<20)}, nil, nil, ErrFieldSectionTooLarge},
		{"RFC 9114 §4.2.2: HEADERS at a set limit", []FrameHeader{hdr(FrameHeaders, 100), hdr(FrameHeaders, 101)}, &Limits{MaxHeadersBytes: 100}, []Part{PartHeaders}, ErrFieldSectionTooLarge},
		{"RFC 9114 §10.5: unknown frames past the budget", []FrameHeader{hdr(0x21, 1000), hdr(0x21, 1)}, &Limits{MaxUnknownBytes: 1000}, []Part{PartSkip}, ErrUnknownBudget},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			var r RequestStream
			var parts []Part
			var err error
			for _, h := range tt.frames {
				var p Part
				if p, err = r.Check(h, tt.lim); err != nil {
					break
				}
				parts = append(parts, p)
			}
			if err != tt.err || len(parts) != len(tt.parts) {
				t.Fatalf("parts %v, err %v; want %v, %v", parts, err, tt.parts, tt.err)
			}
			for i := range parts {
				if parts[i] != tt.parts[i] {
					t.Fatalf("parts %v, want %v", parts, tt.parts)
				}
			}
		})
	}
	var r RequestStream
	if r.Complete() {
		t.Fatal("RFC 9114 §4.1: a stream without HEADERS is complete")
	}
	r.Check(hdr(FrameHeaders, 1), nil)
	if !r.Complete() {
		t.Fatal("a stream after HEADERS is not complete")
	}
}
