package h1

import "testing"

// BodyFraming is the one send-side framing rule: each row is a case the
// server (HTTP/1.1, HTTP/1.0 peers, HTTP/2) or the client depends on.
func TestBodyFraming(t *testing.T) {
	post, get := []byte("POST"), []byte("GET")
	for _, tc := range []struct {
		name string
		m    Outgoing
		mode BodyMode
		n    int64
	}{
		// Responses, HTTP/1.1.
		{"buffered body", Outgoing{Status: 200, ContentLength: -1, Complete: true, Size: 5}, BodyLength, 5},
		{"buffered empty body", Outgoing{Status: 200, ContentLength: -1, Complete: true}, BodyLength, 0},
		{"declared length wins", Outgoing{Status: 200, ContentLength: 10, Complete: true, Size: 3}, BodyLength, 10},
		{"declared length streamed", Outgoing{Status: 200, ContentLength: 10}, BodyLength, 10},
		{"streamed", Outgoing{Status: 200, ContentLength: -1}, BodyChunked, 0},
		{"buffered with trailers", Outgoing{Status: 200, ContentLength: -1, Complete: true, Size: 5, Trailers: true}, BodyChunked, 0},
		{"declared length with trailers", Outgoing{Status: 200, ContentLength: 5, Trailers: true}, BodyLength, 5},
		{"204", Outgoing{Status: 204, ContentLength: -1, Complete: true}, BodyNone, 0},
		{"304 with declared length", Outgoing{Status: 304, ContentLength: 42, Complete: true}, BodyNone, 0},
		{"1xx", Outgoing{Status: 103, ContentLength: -1}, BodyNone, 0},
		{"HEAD buffered empty", Outgoing{Status: 200, Head: true, ContentLength: -1, Complete: true}, BodyNone, 0},
		{"HEAD buffered body", Outgoing{Status: 200, Head: true, ContentLength: -1, Complete: true, Size: 7}, BodyLength, 7},
		{"HEAD declared", Outgoing{Status: 200, Head: true, ContentLength: 9}, BodyLength, 9},
		{"HEAD streamed", Outgoing{Status: 200, Head: true, ContentLength: -1}, BodyNone, 0},
		{"HEAD with trailers", Outgoing{Status: 200, Head: true, ContentLength: -1, Complete: true, Trailers: true}, BodyNone, 0},
		// Responses to HTTP/1.0: no chunked.
		{"1.0 streamed", Outgoing{Status: 200, ContentLength: -1, HTTP10: true}, BodyUntilClose, 0},
		{"1.0 buffered with trailers", Outgoing{Status: 200, ContentLength: -1, Complete: true, Size: 4, Trailers: true, HTTP10: true}, BodyLength, 4},
		{"1.0 declared", Outgoing{Status: 200, ContentLength: 4, HTTP10: true}, BodyLength, 4},
		// HTTP/2 and HTTP/3 frame bodies themselves.
		{"framed streamed", Outgoing{Status: 200, ContentLength: -1, Framed: true}, BodyUntilClose, 0},
		{"framed buffered with trailers", Outgoing{Status: 200, ContentLength: -1, Complete: true, Size: 4, Trailers: true, Framed: true}, BodyLength, 4},
		{"framed HEAD streamed", Outgoing{Status: 200, Head: true, ContentLength: -1, Framed: true}, BodyNone, 0},
		{"framed 304", Outgoing{Status: 304, ContentLength: 3, Framed: true}, BodyNone, 0},
		// Requests (the client).
		{"POST bytes", Outgoing{Method: post, ContentLength: -1, Complete: true, Size: 3}, BodyLength, 3},
		{"POST empty", Outgoing{Method: post, ContentLength: -1, Complete: true}, BodyLength, 0},
		{"GET empty", Outgoing{Method: get, ContentLength: -1, Complete: true}, BodyNone, 0},
		{"GET bytes", Outgoing{Method: get, ContentLength: -1, Complete: true, Size: 2}, BodyLength, 2},
		{"stream of known size", Outgoing{Method: post, ContentLength: 0}, BodyLength, 0},
		{"stream of unknown size", Outgoing{Method: get, ContentLength: -1}, BodyChunked, 0},
		{"request ignores HTTP10", Outgoing{Method: post, ContentLength: -1, HTTP10: true}, BodyChunked, 0},
	} {
		mode, n := BodyFraming(tc.m)
		if mode != tc.mode || n != tc.n {
			t.Errorf("%s: BodyFraming(%+v) = %v, %d; want %v, %d", tc.name, tc.m, mode, n, tc.mode, tc.n)
		}
	}
	if allocs := testing.AllocsPerRun(100, func() {
		BodyFraming(Outgoing{Method: post, ContentLength: -1, Complete: true})
	}); allocs != 0 {
		t.Errorf("%v allocs", allocs)
	}
}
