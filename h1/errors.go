package h1

import "errors"

// ErrNeedMore is returned by the parsers when the buffer holds an incomplete
// but so far valid message part. Append more bytes (keeping the bytes already
// passed) and call again.
var ErrNeedMore = errors.New("h1: need more data")

// Error is a protocol error found in a message. Status is the response status
// a server should send before closing the connection (400, 413, 414, 431, 501
// or 505).
type Error struct {
	Status int
	Reason string
}

func (e *Error) Error() string { return "h1: " + e.Reason }

// StatusOf returns the status code a server should answer err with: the
// Status of an *Error, or 400 for any other non-nil error.
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 400
}

// Request-line errors.
var (
	ErrBadRequestLine  = &Error{400, "malformed request line"}
	ErrBadMethod       = &Error{400, "invalid method"}
	ErrBadTarget       = &Error{400, "invalid request-target"}
	ErrURITooLong      = &Error{414, "request-target too long"}
	ErrBadVersion      = &Error{400, "malformed HTTP version"}
	ErrVersionNotSupp  = &Error{505, "HTTP version not supported"}
	ErrBadLineEnding   = &Error{400, "line not terminated by CRLF"}
	ErrHeaderTooLarge  = &Error{431, "header section too large"}
	ErrHeaderLineLarge = &Error{431, "header field too large"}
	ErrTooManyHeaders  = &Error{431, "too many header fields"}
)

// Header-section errors.
var (
	ErrBadHeaderName    = &Error{400, "invalid header field name"}
	ErrBadHeaderValue   = &Error{400, "invalid header field value"}
	ErrSpaceBeforeColon = &Error{400, "whitespace between field name and colon"}
	ErrObsFold          = &Error{400, "obsolete line folding"}
	ErrMissingHost      = &Error{400, "missing Host header"}
	ErrDuplicateHost    = &Error{400, "more than one Host header"}
	ErrBadHost          = &Error{400, "invalid Host header"}
	ErrBadContentLength = &Error{400, "invalid Content-Length"}
	ErrDupContentLength = &Error{400, "conflicting Content-Length values"}
	ErrTEWithCL         = &Error{400, "Transfer-Encoding together with Content-Length"}
	ErrChunkedNotFinal  = &Error{400, "chunked is not the final transfer coding"}
	ErrUnsupportedTE    = &Error{501, "unsupported transfer coding"}
	// ErrBadTransferEncoding reports a Transfer-Encoding value that is not a
	// plain list of codings (empty value or element, parameters, non-token).
	ErrBadTransferEncoding = &Error{400, "malformed Transfer-Encoding"}
	ErrTEOnHTTP10          = &Error{400, "Transfer-Encoding in an HTTP/1.0 message"}
	ErrBodyTooLarge        = &Error{413, "request body too large"}
	ErrBadStatusLine       = &Error{400, "malformed status line"}
	ErrBadChunk            = &Error{400, "malformed chunked encoding"}
	ErrChunkTooLarge       = &Error{400, "chunk size overflows"}
	ErrChunkExtTooLarge    = &Error{400, "chunk extensions too large"}
	ErrTrailerTooLarge     = &Error{431, "trailer section too large"}
	ErrBadTrailer          = &Error{400, "invalid trailer field"}
	ErrUnexpectedContent   = &Error{400, "unexpected body framing"}
)
