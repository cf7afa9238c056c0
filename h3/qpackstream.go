package h3

// The QPACK encoder and decoder streams (RFC 9204 §4.3, §4.4). With the
// dynamic table capacity advertised as 0 and never used by this side's
// encoder, almost nothing is valid on them: the peer's encoder may only set
// the capacity to 0, and the peer's decoder may only cancel streams. A
// connection reads both streams to the end through these functions, which
// keep no state.

// QPACK stream errors.
var (
	ErrEncoderStream = connErr(CodeQPACKEncoderStreamError, "dynamic table instruction, capacity 0 advertised")
	ErrDecoderStream = connErr(CodeQPACKDecoderStreamError, "acknowledgment of a section or insert never sent")
)

// DrainEncoderStream reads the peer's QPACK encoder stream instructions at
// the start of p and returns how many bytes the complete ones take (the
// rest, a part of one instruction, is to be passed again with more bytes).
// Set Dynamic Table Capacity 0 is accepted; any other capacity, insertion
// or duplication is QPACK_ENCODER_STREAM_ERROR (RFC 9204 §4.3: it exceeds
// the maximum of 0, or adds an entry to a table of capacity 0).
func DrainEncoderStream(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if p[n]&0xe0 != 0x20 { // 1: insert with name ref; 01: with literal name; 000: duplicate
			return n, ErrEncoderStream
		}
		v, k, err := readInt(p[n:], 5) // 001 capacity(5)
		if err == ErrQPACKTruncated {
			return n, nil
		}
		if err != nil || v != 0 {
			return n, ErrEncoderStream
		}
		n += k
	}
	return n, nil
}

// DrainDecoderStream reads the peer's QPACK decoder stream instructions at
// the start of p and returns how many bytes the complete ones take. Stream
// Cancellation is accepted; a Section Acknowledgment or an Insert Count
// Increment is QPACK_DECODER_STREAM_ERROR (RFC 9204 §4.4: this side never
// sends a section with a non-zero Required Insert Count, nor inserts).
func DrainDecoderStream(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if p[n]&0xc0 != 0x40 { // 1: section acknowledgment; 00: insert count increment
			return n, ErrDecoderStream
		}
		_, k, err := readInt(p[n:], 6) // 01 stream ID(6)
		if err == ErrQPACKTruncated {
			return n, nil
		}
		if err != nil {
			return n, ErrDecoderStream
		}
		n += k
	}
	return n, nil
}
