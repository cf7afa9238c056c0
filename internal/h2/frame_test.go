package h2

import (
	"bytes"
	"io"
	"reflect"
	"testing"

	"github.com/riptide-http/riptide/internal/israce"
)

// readFrames reads every frame of wire (with SETTINGS_MAX_FRAME_SIZE
// 16 KiB), the socket's reads being chunk bytes at most (0: all at once).
// It returns the frames read, each copied, and the error that ended the
// reading (io.EOF at a clean end).
func readFrames(wire []byte, chunk int) ([]frame, error) {
	if chunk <= 0 {
		chunk = len(wire) + 1
	}
	var br h2ReadBuf
	br.init(&chunkReader{data: wire, sizes: []int{chunk}})
	fr := frameReader{r: &br, max: 16 << 10}
	var out []frame
	for {
		var f frame
		err := fr.readFrame(&f)
		if err != nil {
			if _, ok := err.(streamError); !ok {
				return out, err
			}
			out = append(out, frame{FrameHeader: f.FrameHeader})
			continue
		}
		f.data = bytes.Clone(f.data)
		out = append(out, f)
	}
}

// TestFrameParse reads one frame per row, and checks what it is taken to
// be, or the error it is answered with, by RFC 9113 section.
func TestFrameParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		wire []byte
		want frame // its FrameHeader is filled in from wire
		err  error
	}{
		// §4.1 the frame header: the reserved bit is dropped.
		{"§4.1 reserved bit of the stream ID", []byte{0, 0, 2, 0xfb, 0x42, 0x80, 0, 0, 9, 'h', 'i'}, frame{data: []byte("hi")}, nil},
		{"§4.2 a frame of SETTINGS_MAX_FRAME_SIZE", rawFrameN(0, 0, 1, 16<<10), frame{data: make([]byte, 16<<10)}, nil},
		{"§4.2 a frame over SETTINGS_MAX_FRAME_SIZE", rawFrameN(0, 0, 1, 16<<10+1), frame{}, connError(ErrCodeFrameSize)},
		{"§5.5 an unknown frame type", rawFrame(0xfa, 0xff, 3, 1, 2), frame{data: []byte{1, 2}}, nil},

		{"§6.1 DATA", rawFrame(0, 0x1, 1, 'a', 'b'), frame{data: []byte("ab"), endStream: true}, nil},
		{"§6.1 DATA padded", rawFrame(0, 0x8, 1, 2, 'a', 'b', 0, 0), frame{data: []byte("ab")}, nil},
		{"§6.1 DATA padded to the end", rawFrame(0, 0x8, 1, 2, 0, 0), frame{data: []byte{}}, nil},
		{"§6.1 DATA with padding as long as its payload", rawFrame(0, 0x8, 1, 2, 0), frame{}, connError(ErrCodeProtocol)},
		{"§6.1 §4.2 PADDED DATA without Pad Length", rawFrame(0, 0x8, 1), frame{}, connError(ErrCodeFrameSize)},
		{"§6.1 DATA on stream 0", rawFrame(0, 0, 0, 'a'), frame{}, connError(ErrCodeProtocol)},

		{"§6.2 HEADERS", rawFrame(1, 0x5, 1, 0x82), frame{data: []byte{0x82}, endStream: true}, nil},
		{"§6.2 HEADERS padded, with priority", rawFrame(1, 0x4|0x8|0x20, 3, 1, 0x80, 0, 0, 1, 200, 0x82, 0),
			frame{data: []byte{0x82}, hasPriority: true, exclusive: true, dep: 1, weight: 200}, nil},
		{"§6.2 HEADERS on stream 0", rawFrame(1, 0x4, 0, 0x82), frame{}, connError(ErrCodeProtocol)},
		{"§6.2 HEADERS padding past the payload", rawFrame(1, 0x4|0x8, 1, 2, 0x82), frame{}, connError(ErrCodeProtocol)},
		{"§6.2 §4.2 PADDED HEADERS without Pad Length", rawFrame(1, 0x4|0x8, 1), frame{}, connError(ErrCodeFrameSize)},
		{"§6.2 §4.2 HEADERS too short for its priority", rawFrame(1, 0x4|0x20, 1, 0, 0, 0, 1), frame{}, connError(ErrCodeFrameSize)},

		{"§6.3 PRIORITY", rawFrame(2, 0, 3, 0, 0, 0, 1, 15), frame{hasPriority: true, dep: 1, weight: 15}, nil},
		{"§6.3 PRIORITY on stream 0", rawFrame(2, 0, 0, 0, 0, 0, 1, 15), frame{}, connError(ErrCodeProtocol)},
		{"§6.3 PRIORITY of 6 bytes", rawFrameN(2, 0, 3, 6), frame{}, connError(ErrCodeFrameSize)},

		{"§6.4 RST_STREAM", rawFrame(3, 0, 1, 0, 0, 0, 8), frame{code: ErrCodeCancel}, nil},
		{"§6.4 RST_STREAM of 5 bytes", rawFrameN(3, 0, 1, 5), frame{}, connError(ErrCodeFrameSize)},
		{"§6.4 RST_STREAM on stream 0", rawFrameN(3, 0, 0, 4), frame{}, connError(ErrCodeProtocol)},

		{"§6.5 SETTINGS", rawFrame(4, 0, 0, 0, 3, 0, 0, 0, 7, 0, 0x99, 1, 2, 3, 4), frame{data: []byte{0, 3, 0, 0, 0, 7, 0, 0x99, 1, 2, 3, 4}}, nil},
		{"§6.5 SETTINGS ACK", rawFrame(4, 0x1, 0), frame{ack: true, data: []byte{}}, nil},
		{"§6.5 SETTINGS ACK with a payload", rawFrameN(4, 0x1, 0, 6), frame{}, connError(ErrCodeFrameSize)},
		{"§6.5 SETTINGS on a stream", rawFrameN(4, 0, 1, 6), frame{}, connError(ErrCodeProtocol)},
		{"§6.5 SETTINGS of 7 bytes", rawFrameN(4, 0, 0, 7), frame{}, connError(ErrCodeFrameSize)},
		{"§6.5.2 SETTINGS_INITIAL_WINDOW_SIZE of 2^31-1", rawFrame(4, 0, 0, 0, 4, 0x7f, 0xff, 0xff, 0xff), frame{data: []byte{0, 4, 0x7f, 0xff, 0xff, 0xff}}, nil},
		{"§6.5.2 SETTINGS_INITIAL_WINDOW_SIZE of 2^31", rawFrame(4, 0, 0, 0, 4, 0x80, 0, 0, 0), frame{}, connError(ErrCodeFlowControl)},
		{"§6.5.2 a later SETTINGS_INITIAL_WINDOW_SIZE is checked when applied", rawFrame(4, 0, 0, 0, 4, 0, 0, 0, 1, 0, 4, 0x80, 0, 0, 0),
			frame{data: []byte{0, 4, 0, 0, 0, 1, 0, 4, 0x80, 0, 0, 0}}, nil},

		{"§6.6 §8.4 PUSH_PROMISE from a client", rawFrame(5, 0x4, 1, 0, 0, 0, 2), frame{}, connError(ErrCodeProtocol)},

		{"§6.7 PING", rawFrame(6, 0x1, 0, 1, 2, 3, 4, 5, 6, 7, 8), frame{ack: true, ping: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}}, nil},
		{"§6.7 PING of 9 bytes", rawFrameN(6, 0, 0, 9), frame{}, connError(ErrCodeFrameSize)},
		{"§6.7 PING on a stream", rawFrameN(6, 0, 1, 8), frame{}, connError(ErrCodeProtocol)},

		{"§6.8 GOAWAY", rawFrame(7, 0, 0, 0x80, 0, 0, 5, 0, 0, 0, 2, 'x'), frame{n: 5, code: ErrCodeInternal, data: []byte("x")}, nil},
		{"§6.8 GOAWAY on a stream", rawFrameN(7, 0, 1, 8), frame{}, connError(ErrCodeProtocol)},
		{"§6.8 GOAWAY of 7 bytes", rawFrameN(7, 0, 0, 7), frame{}, connError(ErrCodeFrameSize)},

		{"§6.9 WINDOW_UPDATE, reserved bit dropped", rawFrame(8, 0, 1, 0x80, 0, 1, 0), frame{n: 256}, nil},
		{"§6.9 WINDOW_UPDATE of 5 bytes", rawFrameN(8, 0, 1, 5), frame{}, connError(ErrCodeFrameSize)},
		{"§6.9 WINDOW_UPDATE of 0 on the connection", rawFrameN(8, 0, 0, 4), frame{}, connError(ErrCodeProtocol)},
		{"§6.9 WINDOW_UPDATE of 0 on a stream", rawFrameN(8, 0, 7, 4), frame{}, streamError{7, ErrCodeProtocol}},

		{"§6.10 CONTINUATION without HEADERS", rawFrame(9, 0x4, 1), frame{}, connError(ErrCodeProtocol)},

		{"RFC 9218 §7.1 PRIORITY_UPDATE", rawFrame(0x10, 0, 0, 0, 0, 0, 3, 'u', '=', '1'), frame{n: 3, data: []byte("u=1")}, nil},
		{"RFC 9218 §7.1 PRIORITY_UPDATE on a stream", rawFrameN(0x10, 0, 1, 4), frame{}, connError(ErrCodeProtocol)},
		{"RFC 9218 §7.1 PRIORITY_UPDATE of 3 bytes", rawFrameN(0x10, 0, 0, 3), frame{}, connError(ErrCodeFrameSize)},
		{"RFC 9218 §7.1 PRIORITY_UPDATE for stream 0", rawFrameN(0x10, 0, 0, 4), frame{}, connError(ErrCodeProtocol)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, chunk := range []int{len(tc.wire), 1, 5} { // whole in the read buffer, or not
				var br h2ReadBuf
				br.init(&chunkReader{data: tc.wire, sizes: []int{chunk}})
				fr := frameReader{r: &br, max: 16 << 10}
				var got frame
				if err := fr.readFrame(&got); err != tc.err {
					t.Fatalf("chunk %d: error %v, want %v", chunk, err, tc.err)
				}
				if tc.err != nil {
					continue
				}
				if err := fr.readFrame(new(frame)); err != io.EOF {
					t.Fatalf("chunk %d: after the frame: %v, want io.EOF", chunk, err)
				}
				want := tc.want
				want.FrameHeader = parseFrameHeader(tc.wire)
				if want.Type == FrameData || want.Type == FrameHeaders {
					want.endStream = want.Flags.Has(FlagEndStream)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("chunk %d:\n got %+v\nwant %+v", chunk, got, want)
				}
			}
		})
	}
}

// TestFrameSequence checks the order of a header block's frames (RFC 9113
// §6.10): HEADERS without END_HEADERS is followed by CONTINUATION frames
// of its stream and nothing else, until one has END_HEADERS.
func TestFrameSequence(t *testing.T) {
	h := rawFrame(1, 0, 1, 0x82)          // HEADERS, no END_HEADERS
	c := rawFrame(9, 0, 1, 0x84)          // CONTINUATION, no END_HEADERS
	ce := rawFrame(9, 0x4, 1, 0x86)       // CONTINUATION, END_HEADERS
	ping := rawFrameN(6, 0, 0, 8)         // PING
	unknown := rawFrame(0xfa, 0, 0, 1, 2) // an extension frame
	for _, tc := range []struct {
		name string
		wire []byte
		n    int   // frames read
		err  error // the error after them
	}{
		{"HEADERS, CONTINUATION, CONTINUATION with END_HEADERS, PING", rawSeq(h, c, ce, ping), 4, io.EOF},
		{"HEADERS with END_HEADERS, CONTINUATION", rawSeq(rawFrame(1, 0x4, 1, 0x82), ce), 1, connError(ErrCodeProtocol)},
		{"CONTINUATION after the block ended", rawSeq(h, ce, ce), 2, connError(ErrCodeProtocol)},
		{"PING inside a block", rawSeq(h, c, ping), 2, connError(ErrCodeProtocol)},
		{"an unknown frame inside a block", rawSeq(h, unknown), 1, connError(ErrCodeProtocol)},
		{"HEADERS inside a block", rawSeq(h, h), 1, connError(ErrCodeProtocol)},
		{"CONTINUATION of another stream", rawSeq(h, rawFrame(9, 0x4, 3)), 1, connError(ErrCodeProtocol)},
		{"CONTINUATION on stream 0", rawSeq(h, rawFrame(9, 0x4, 0)), 1, connError(ErrCodeProtocol)},
		{"a block on another stream after one ended", rawSeq(h, ce, rawFrame(1, 0, 3), rawFrame(9, 0x4, 3)), 4, io.EOF},
	} {
		frames, err := readFrames(tc.wire, 0)
		if len(frames) != tc.n || err != tc.err {
			t.Errorf("%s: %d frames, then %v; want %d, then %v", tc.name, len(frames), err, tc.n, tc.err)
		}
	}
	// A truncated frame is the socket's error, not the peer's.
	if _, err := readFrames(ping[:12], 0); err != io.ErrUnexpectedEOF {
		t.Errorf("truncated PING: %v, want io.ErrUnexpectedEOF", err)
	}
}

// TestFrameAppend reads back what the writer's appenders write.
func TestFrameAppend(t *testing.T) {
	block := bytes.Repeat([]byte("hpack"), 10)
	var b []byte
	b = appendSettings(b, setting{SettingMaxFrameSize, 1 << 20}, setting{SettingInitialWindowSize, 1<<31 - 1})
	b = appendSettingsAck(b)
	b = appendPing(b, false, [8]byte{1, 2, 3})
	b = appendPing(b, true, [8]byte{4})
	b = appendWindowUpdate(b, 0, 1<<20)
	b = appendWindowUpdate(b, 3, 1)
	b = appendRSTStream(b, 5, ErrCodeRefusedStream)
	b = appendGoAway(b, 7, ErrCodeEnhanceYourCalm)
	b = appendData(b, 9, []byte("body"), false)
	b = appendData(b, 9, nil, true)
	b = appendHeaders(b, 11, block, true, 16) // HEADERS and 3 CONTINUATION
	b = appendHeaders(b, 13, block[:3], false, 16)
	frames, err := readFrames(b, 7)
	if err != io.EOF {
		t.Fatalf("reading back: %v after %d frames", err, len(frames))
	}
	type summary struct {
		typ   FrameType
		flags Flags
		id    uint32
		data  string
		n     uint32
		code  ErrCode
		ping  [8]byte
	}
	var got []summary
	for _, f := range frames {
		got = append(got, summary{f.Type, f.Flags, f.StreamID, string(f.data), f.n, f.code, f.ping})
	}
	want := []summary{
		{typ: FrameSettings, data: "\x00\x05\x00\x10\x00\x00\x00\x04\x7f\xff\xff\xff"},
		{typ: FrameSettings, flags: FlagAck, data: ""},
		{typ: FramePing, ping: [8]byte{1, 2, 3}},
		{typ: FramePing, flags: FlagAck, ping: [8]byte{4}},
		{typ: FrameWindowUpdate, n: 1 << 20},
		{typ: FrameWindowUpdate, id: 3, n: 1},
		{typ: FrameRSTStream, id: 5, code: ErrCodeRefusedStream},
		{typ: FrameGoAway, n: 7, code: ErrCodeEnhanceYourCalm, data: ""},
		{typ: FrameData, id: 9, data: "body"},
		{typ: FrameData, flags: FlagEndStream, id: 9, data: ""},
		{typ: FrameHeaders, flags: FlagEndStream, id: 11, data: string(block[:16])},
		{typ: FrameContinuation, id: 11, data: string(block[16:32])},
		{typ: FrameContinuation, id: 11, data: string(block[32:48])},
		{typ: FrameContinuation, flags: FlagEndHeaders, id: 11, data: string(block[48:])},
		{typ: FrameHeaders, flags: FlagEndHeaders, id: 13, data: string(block[:3])},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read back:\n got %+v\nwant %+v", got, want)
	}
}

// TestFrameReaderAllocs checks that reading frames allocates nothing,
// whether the read buffer holds them whole or not, once the payload
// buffer has grown.
func TestFrameReaderAllocs(t *testing.T) {
	if israce.Enabled {
		t.Skip("allocation counts need a build without -race")
	}
	wire := rawSeq(
		rawFrame(1, 0x4|0x8|0x20, 1, 1, 0, 0, 0, 0, 16, 0x82, 0),
		rawFrame(0, 0x8, 1, 1, 'a', 0),
		rawFrameN(0, 0, 1, 4<<10),
		rawFrame(4, 0, 0, 0, 3, 0, 0, 0, 7),
		rawFrame(4, 0x1, 0),
		rawFrameN(6, 0, 0, 8),
		rawFrame(8, 0, 1, 0, 0, 1, 0),
		rawFrame(3, 0, 1, 0, 0, 0, 8),
		rawFrame(1, 0, 3, 0x82),
		rawFrame(9, 0x4, 3, 0x84),
		rawFrameN(7, 0, 0, 8),
	)
	for _, chunk := range []int{len(wire), 100} {
		r := &chunkReader{sizes: []int{chunk}}
		var br h2ReadBuf
		br.init(r)
		fr := frameReader{r: &br, max: 16 << 10}
		read := func() {
			r.data = wire
			for len(r.data) > 0 || br.Buffered() > 0 {
				var f frame
				if err := fr.readFrame(&f); err != nil {
					t.Fatal(err)
				}
			}
		}
		read() // grows the payload buffer
		if n := testing.AllocsPerRun(100, read); n != 0 {
			t.Errorf("socket reads of %d bytes: %v allocations per %d bytes of frames, want 0", chunk, n, len(wire))
		}
	}
}

// TestErrCodeString checks the names of error codes (RFC 9113 §7).
func TestErrCodeString(t *testing.T) {
	for code, want := range map[ErrCode]string{ErrCodeNo: "NO_ERROR", ErrCodeFrameSize: "FRAME_SIZE_ERROR", ErrCodeHTTP11Required: "HTTP_1_1_REQUIRED", 0xe: "ERR_UNKNOWN_14"} {
		if got := code.String(); got != want {
			t.Errorf("ErrCode(%d).String() = %q, want %q", code, got, want)
		}
	}
	if got := (streamError{3, ErrCodeCancel}).Error(); got != "http2: stream error on stream 3: CANCEL" {
		t.Errorf("streamError: %q", got)
	}
	if got := connError(ErrCodeProtocol).Error(); got != "http2: connection error: PROTOCOL_ERROR" {
		t.Errorf("connError: %q", got)
	}
}

// TestFrameReaderRelease checks that a payload the read buffer does not
// hold whole is read into a pooled buffer that goes back before the next
// frame is read: a connection that received large frames does not keep
// one while it waits for the next.
func TestFrameReaderRelease(t *testing.T) {
	wire := rawSeq(rawFrameN(0, 0, 1, 16<<10), rawFrameN(6, 0, 0, 8))
	var br h2ReadBuf
	br.init(&chunkReader{data: wire, sizes: []int{1000}})
	fr := frameReader{r: &br, max: 16 << 10}
	var f frame
	if err := fr.readFrame(&f); err != nil || len(f.data) != 16<<10 {
		t.Fatalf("DATA: %d bytes, %v", len(f.data), err)
	}
	if fr.big == nil {
		t.Fatal("a 16 KiB payload read without the pooled buffer")
	}
	if err := fr.readFrame(&f); err != nil || f.Type != FramePing {
		t.Fatalf("PING: %+v, %v", f.FrameHeader, err)
	}
	if fr.big != nil || fr.huge != nil {
		t.Fatal("the payload buffer is kept after the next frame was read")
	}
}

// TestSettingValid checks the bounds of settings' values (RFC 9113
// §6.5.2), which the connection checks as it applies them in turn.
func TestSettingValid(t *testing.T) {
	for _, tc := range []struct {
		s    setting
		want error
	}{
		{setting{SettingEnablePush, 1}, nil},
		{setting{SettingEnablePush, 2}, connError(ErrCodeProtocol)},
		{setting{SettingInitialWindowSize, 1<<31 - 1}, nil},
		{setting{SettingInitialWindowSize, 1 << 31}, connError(ErrCodeFlowControl)},
		{setting{SettingMaxFrameSize, 1 << 14}, nil},
		{setting{SettingMaxFrameSize, 1<<14 - 1}, connError(ErrCodeProtocol)},
		{setting{SettingMaxFrameSize, 1<<24 - 1}, nil},
		{setting{SettingMaxFrameSize, 1 << 24}, connError(ErrCodeProtocol)},
		{setting{SettingEnableConnectProtocol, 2}, connError(ErrCodeProtocol)}, // RFC 8441 §3
		{setting{SettingHeaderTableSize, 1<<32 - 1}, nil},
		{setting{SettingMaxConcurrentStreams, 0}, nil},
		{setting{0xffff, 1<<32 - 1}, nil}, // unknown settings are ignored (§6.5.2)
	} {
		if got := tc.s.valid(); got != tc.want {
			t.Errorf("setting %#x = %d: %v, want %v", tc.s.id, tc.s.val, got, tc.want)
		}
	}
}
