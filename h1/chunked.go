package h1

import (
	"bytes"
	"strconv"
)

// ChunkedDecoder decodes the chunked transfer coding (RFC 9112 §7.1)
// incrementally and without copying: each Decode call consumes framing bytes
// and returns the next run of body bytes as a slice of the input.
// The zero value is ready to use with default limits.
type ChunkedDecoder struct {
	// MaxLineBytes bounds a chunk-size line including extensions. Default 4 KiB.
	MaxLineBytes int
	// MaxTrailerBytes bounds the trailer section. Default 16 KiB.
	MaxTrailerBytes int
	// Limits applies to each trailer field line (MaxHeaderLine, MaxHeaders).
	Limits *Limits
	// Trailers holds the trailer fields once Done reports true; they are
	// slices into the buffer passed to the final Decode call.
	Trailers []Header

	state   uint8
	left    int64 // bytes of chunk data still to come
	scanned int   // trailer scan progress
	known   [numKnown]uint8
}

const (
	csSize = iota
	csData
	csDataCRLF
	csTrailer
	csDone
)

// Reset prepares d for a new body, keeping its limits and trailer storage.
func (d *ChunkedDecoder) Reset() {
	d.state, d.left, d.scanned = csSize, 0, 0
	d.Trailers = d.Trailers[:0]
}

// Done reports whether the last chunk and trailer section have been decoded.
func (d *ChunkedDecoder) Done() bool { return d.state == csDone }

// Remaining returns how many bytes of the current chunk's data are still to
// come (0 between chunks).
func (d *ChunkedDecoder) Remaining() int64 {
	if d.state == csData {
		return d.left
	}
	return 0
}

// Decode consumes chunked framing from src and returns the number of bytes
// consumed and any body bytes found (data is a slice of src[:n]). Call it
// again with the unconsumed rest plus newly read bytes until Done. It returns
// ErrNeedMore, with n == 0, when src holds no complete unit; an *Error for
// malformed input.
func (d *ChunkedDecoder) Decode(src []byte) (n int, data []byte, err error) {
	for {
		switch d.state {
		case csSize:
			m, err := d.sizeLine(src[n:])
			if err != nil {
				if err == ErrNeedMore && n > 0 {
					return n, nil, nil
				}
				return n, nil, err
			}
			n += m
		case csData:
			avail := src[n:]
			if len(avail) == 0 {
				if n > 0 {
					return n, nil, nil
				}
				return 0, nil, ErrNeedMore
			}
			if int64(len(avail)) > d.left {
				avail = avail[:d.left]
			}
			d.left -= int64(len(avail))
			if d.left == 0 {
				d.state = csDataCRLF
			}
			return n + len(avail), avail, nil
		case csDataCRLF:
			rest := src[n:]
			if len(rest) < 2 {
				if len(rest) == 1 && rest[0] != '\r' {
					return n, nil, ErrBadChunk
				}
				if n > 0 {
					return n, nil, nil
				}
				return 0, nil, ErrNeedMore
			}
			if rest[0] != '\r' || rest[1] != '\n' {
				return n, nil, ErrBadChunk
			}
			n += 2
			d.state = csSize
		case csTrailer:
			m, err := d.trailer(src[n:])
			if err != nil {
				if err == ErrNeedMore && n > 0 {
					return n, nil, nil
				}
				return n, nil, err
			}
			return n + m, nil, nil
		default:
			return n, nil, nil
		}
	}
}

// sizeLine parses chunk-size [ chunk-ext ] CRLF.
func (d *ChunkedDecoder) sizeLine(b []byte) (int, error) {
	max := d.MaxLineBytes
	if max <= 0 {
		max = 4 << 10
	}
	eol := bytes.IndexByte(b, '\n')
	if eol < 0 {
		if len(b) > max {
			return 0, ErrChunkExtTooLarge
		}
		// Reject garbage early rather than waiting for a line end.
		if err := checkSizePrefix(b); err != nil {
			return 0, err
		}
		return 0, ErrNeedMore
	}
	if eol == 0 || b[eol-1] != '\r' {
		return 0, ErrBadChunk
	}
	if eol > max {
		return 0, ErrChunkExtTooLarge
	}
	line := b[:eol-1]
	var size int64
	i := 0
	for ; i < len(line); i++ {
		v, ok := hexVal(line[i])
		if !ok {
			break
		}
		if size > (1<<62)>>4 {
			return 0, ErrChunkTooLarge
		}
		size = size<<4 | int64(v)
	}
	if i == 0 {
		return 0, ErrBadChunk
	}
	if !validChunkExt(line[i:]) {
		return 0, ErrBadChunk
	}
	if size == 0 {
		d.state = csTrailer
	} else {
		d.state, d.left = csData, size
	}
	return eol + 1, nil
}

// checkSizePrefix validates an incomplete chunk-size line so far.
func checkSizePrefix(b []byte) error {
	i := 0
	for i < len(b) {
		if _, ok := hexVal(b[i]); !ok {
			break
		}
		i++
	}
	if i == 0 && len(b) > 0 {
		return ErrBadChunk
	}
	for _, c := range b[i:] {
		if c != '\r' && !valueTable[c] {
			return ErrBadChunk
		}
	}
	if cr := bytes.IndexByte(b, '\r'); cr >= 0 && cr != len(b)-1 {
		return ErrBadChunk // bare CR
	}
	return nil
}

// validChunkExt checks the chunk extensions after the size (RFC 9112 §7.1.1):
//
//	*( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] ), ext-val = token / quoted-string
//
// Whitespace after the size without a ';' is rejected: lenient parsers
// disagree on it, and disagreement is what smuggling needs.
func validChunkExt(b []byte) bool {
	for len(b) > 0 {
		b = skipWS(b)
		if len(b) == 0 || b[0] != ';' {
			return false
		}
		b = skipWS(b[1:])
		n := tokenLen(b)
		if n == 0 {
			return false
		}
		b = b[n:]
		if rest := skipWS(b); len(rest) > 0 && rest[0] == '=' {
			b = skipWS(rest[1:])
			if len(b) > 0 && b[0] == '"' {
				n = quotedLen(b)
			} else {
				n = tokenLen(b)
			}
			if n == 0 {
				return false
			}
			b = b[n:]
		}
	}
	return true
}

func skipWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

// tokenLen returns the length of the token at the start of b.
func tokenLen(b []byte) int {
	for i, c := range b {
		if !tokenTable[c] {
			return i
		}
	}
	return len(b)
}

// quotedLen returns the length of the quoted-string (RFC 9110 §5.6.4) at the
// start of b, or 0 if it is malformed or unterminated.
func quotedLen(b []byte) int {
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c == '\\':
			i++
			if i == len(b) || !valueTable[b[i]] {
				return 0
			}
		case !valueTable[c]:
			return 0
		}
	}
	return 0
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// trailer parses the trailer section and its final CRLF.
func (d *ChunkedDecoder) trailer(b []byte) (int, error) {
	max := d.MaxTrailerBytes
	if max <= 0 {
		max = 16 << 10
	}
	if len(b) >= 2 && b[0] == '\r' && b[1] == '\n' {
		d.state = csDone
		return 2, nil
	}
	if len(b) == 1 && b[0] == '\r' {
		return 0, ErrNeedMore
	}
	if len(b) >= 1 && b[0] == '\n' {
		return 0, ErrBadChunk
	}
	end, err := scanTrailer(b, &d.scanned, max)
	if err != nil {
		return 0, err
	}
	l := d.Limits.norm()
	d.Trailers = d.Trailers[:0]
	d.known = [numKnown]uint8{}
	if err := parseHeaders(b[:end], &d.Trailers, &d.known, &l); err != nil {
		if e, ok := err.(*Error); ok && e.Status == 400 {
			return 0, ErrBadTrailer
		}
		return 0, err
	}
	d.state = csDone
	return end, nil
}

// scanTrailer finds the end of a non-empty trailer section (just past CRLF
// CRLF), rejecting bare LF.
func scanTrailer(b []byte, scanned *int, max int) (int, error) {
	i := *scanned
	for {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			break
		}
		p := i + j
		if p == 0 || b[p-1] != '\r' {
			return 0, ErrBadChunk
		}
		if p >= 3 && b[p-2] == '\n' && b[p-3] == '\r' {
			if p+1 > max {
				return 0, ErrTrailerTooLarge
			}
			*scanned = 0
			return p + 1, nil
		}
		i = p + 1
	}
	*scanned = i
	if len(b) > max {
		return 0, ErrTrailerTooLarge
	}
	return 0, ErrNeedMore
}

// AppendChunk appends p as one chunk. An empty p appends nothing, since a
// zero-size chunk would end the body.
func AppendChunk(dst, p []byte) []byte {
	if len(p) == 0 {
		return dst
	}
	dst = AppendChunkHeader(dst, len(p))
	dst = append(dst, p...)
	return append(dst, '\r', '\n')
}

// AppendChunkHeader appends the size line for a chunk of n > 0 bytes; the
// caller appends the data and then CRLF.
func AppendChunkHeader(dst []byte, n int) []byte {
	dst = strconv.AppendUint(dst, uint64(n), 16)
	return append(dst, '\r', '\n')
}

// AppendLastChunk appends the last chunk, the given trailer fields and the
// final CRLF. Trailers must already be validated by the caller.
func AppendLastChunk(dst []byte, trailers []Header) []byte {
	dst = append(dst, '0', '\r', '\n')
	for i := range trailers {
		dst = AppendHeader(dst, trailers[i].Name, trailers[i].Value)
	}
	return append(dst, '\r', '\n')
}

// AppendLastChunkLines is AppendLastChunk for trailer fields already
// encoded as header lines ("Name: value\r\n" each), as a server collects
// them while the body streams.
func AppendLastChunkLines(dst, lines []byte) []byte {
	dst = append(dst, '0', '\r', '\n')
	dst = append(dst, lines...)
	return append(dst, '\r', '\n')
}
