package h2

import "testing"

// TestIdleStreamsStayIdle: a frame naming an idle stream (RFC 9113 §5.1)
// neither opens it nor closes the streams below it, and an even-numbered
// stream, which only a server opens and riptide never does, is idle for
// good: any frame on one but PRIORITY is a connection error PROTOCOL_ERROR,
// as net/http's server treats them. Before, a WINDOW_UPDATE of 0 on idle
// stream 101 was answered RST_STREAM and counted 101 as opened, so that
// every stream below it counted as closed; and a RST_STREAM, WINDOW_UPDATE
// or DATA on stream 2 below the highest client stream was ignored or reset.
func TestIdleStreamsStayIdle(t *testing.T) {
	const (
		noError  = 0x0
		protocol = 0x1
	)
	// HEADERS of a GET / (HPACK static indexes) with END_HEADERS and
	// END_STREAM: a whole request on stream id.
	get := func(id uint32) []byte { return rawFrame(1, 0x4|0x1, id, 0x82, 0x86, 0x84, 0x41, 0x01, 'x') }
	open2 := rawSeq(get(1), get(3))
	for _, tc := range []struct {
		name   string
		frames []byte
		goAway int64
		last   uint32 // the first GOAWAY's last stream ID
	}{
		{"§5.1 §6.9 WINDOW_UPDATE of 0 on idle stream 101 opens nothing", rawSeq(get(1), rawFrame(8, 0, 101, 0, 0, 0, 0)), protocol, 1},
		{"§5.1 RST_STREAM on even stream 2 below the highest client stream", rawSeq(open2, rawFrame(3, 0, 2, 0, 0, 0, 8)), protocol, 3},
		{"RFC 9218 §7.1 PRIORITY_UPDATE naming idle stream 5, then RST_STREAM on stream 2",
			rawSeq(open2, rawFrame(0x10, 0, 0, 0, 0, 0, 5, 'u', '=', '1'), rawFrame(3, 0, 2, 0, 0, 0, 8)), protocol, 3},
		{"§5.1 WINDOW_UPDATE on even stream 2", rawSeq(open2, rawFrame(8, 0, 2, 0, 0, 0, 1)), protocol, 3},
		{"§5.1 DATA on even stream 2", rawSeq(open2, rawFrame(0, 0x1, 2, 'x')), protocol, 3},
		{"§5.1 PRIORITY on even stream 2 is allowed", rawSeq(open2, rawFrame(2, 0, 2, 0, 0, 0, 1, 16)), noError, 3},
		{"§5.1 PRIORITY_UPDATE naming idle stream 5 opens nothing", rawSeq(get(1), rawFrame(0x10, 0, 0, 0, 0, 0, 5, 'u', '=', '1')), noError, 1},
		{"§5.1 PRIORITY on idle stream 101 closes nothing below it: HEADERS on 5 is served",
			rawSeq(rawFrame(2, 0, 101, 0, 0, 0, 0, 16), get(5)), noError, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := serveRaw(t, tc.frames)
			if res.goAway != tc.goAway || res.last != tc.last {
				t.Errorf("GOAWAY code %d last stream %d, want code %d last stream %d", res.goAway, res.last, tc.goAway, tc.last)
			}
			for _, r := range res.resets {
				if id := uint32(r >> 32); id%2 == 0 || id > tc.last {
					t.Errorf("RST_STREAM on idle stream %d (§6.4)", id)
				}
			}
		})
	}
}
