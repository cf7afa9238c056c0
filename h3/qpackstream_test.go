package h3

import "testing"

func TestDrainQPACKStreams(t *testing.T) {
	tests := []struct {
		rule    string
		decoder bool
		in      string
		n       int
		err     error
	}{
		{"RFC 9204 §4.3.1: Set Dynamic Table Capacity 0", false, "2020", 2, nil},
		{"RFC 9204 §4.3.1: capacity above the advertised 0", false, "3f01", 0, ErrEncoderStream},
		{"RFC 9204 §4.3.1: capacity cut in its integer", false, "203f", 1, nil},
		{"RFC 9204 §4.3.2: Insert With Name Reference", false, "20c00161", 1, ErrEncoderStream},
		{"RFC 9204 §4.3.3: Insert With Literal Name", false, "4161016162", 0, ErrEncoderStream},
		{"RFC 9204 §4.3.4: Duplicate", false, "00", 0, ErrEncoderStream},
		{"RFC 9204 §4.4.2: Stream Cancellation", true, "44407f05", 4, nil},
		{"RFC 9204 §4.4.2: Stream Cancellation cut", true, "447f", 1, nil},
		{"RFC 9204 §4.4.1: Section Acknowledgment of a section never sent", true, "4484", 1, ErrDecoderStream},
		{"RFC 9204 §4.4.3: Insert Count Increment, nothing inserted", true, "01", 0, ErrDecoderStream},
		{"RFC 9204 §4.4.3: Insert Count Increment of 0", true, "00", 0, ErrDecoderStream},
		{"RFC 9204 §4.1.1: integer overflow", true, "7fffffffffffffffffffff01", 0, ErrDecoderStream},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			in := unhex(t, tt.in)
			drain := DrainEncoderStream
			if tt.decoder {
				drain = DrainDecoderStream
			}
			n, err := drain(in)
			if n != tt.n || err != tt.err {
				t.Fatalf("drain(%s) = %d, %v; want %d, %v", tt.in, n, err, tt.n, tt.err)
			}
		})
	}
}
