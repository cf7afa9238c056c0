package h3

import (
	"errors"
	"strconv"
)

// ErrNeedMore is returned by the parsers when the buffer holds an incomplete
// but so far valid varint or frame header. Append more bytes (keeping those
// already passed) and call again.
var ErrNeedMore = errors.New("h3: need more data")

// ErrorCode is an HTTP/3 (RFC 9114 §8.1) or QPACK (RFC 9204 §6) error code,
// sent in CONNECTION_CLOSE, RESET_STREAM or STOP_SENDING.
type ErrorCode uint64

// HTTP/3 error codes (RFC 9114 §8.1).
const (
	CodeNoError              ErrorCode = 0x100 // H3_NO_ERROR
	CodeGeneralProtocolError ErrorCode = 0x101 // H3_GENERAL_PROTOCOL_ERROR
	CodeInternalError        ErrorCode = 0x102 // H3_INTERNAL_ERROR
	CodeStreamCreationError  ErrorCode = 0x103 // H3_STREAM_CREATION_ERROR
	CodeClosedCriticalStream ErrorCode = 0x104 // H3_CLOSED_CRITICAL_STREAM
	CodeFrameUnexpected      ErrorCode = 0x105 // H3_FRAME_UNEXPECTED
	CodeFrameError           ErrorCode = 0x106 // H3_FRAME_ERROR
	CodeExcessiveLoad        ErrorCode = 0x107 // H3_EXCESSIVE_LOAD
	CodeIDError              ErrorCode = 0x108 // H3_ID_ERROR
	CodeSettingsError        ErrorCode = 0x109 // H3_SETTINGS_ERROR
	CodeMissingSettings      ErrorCode = 0x10a // H3_MISSING_SETTINGS
	CodeRequestRejected      ErrorCode = 0x10b // H3_REQUEST_REJECTED
	CodeRequestCancelled     ErrorCode = 0x10c // H3_REQUEST_CANCELLED
	CodeRequestIncomplete    ErrorCode = 0x10d // H3_REQUEST_INCOMPLETE
	CodeMessageError         ErrorCode = 0x10e // H3_MESSAGE_ERROR
	CodeConnectError         ErrorCode = 0x10f // H3_CONNECT_ERROR
	CodeVersionFallback      ErrorCode = 0x110 // H3_VERSION_FALLBACK
)

// QPACK error codes (RFC 9204 §6).
const (
	CodeQPACKDecompressionFailed ErrorCode = 0x200 // QPACK_DECOMPRESSION_FAILED
	CodeQPACKEncoderStreamError  ErrorCode = 0x201 // QPACK_ENCODER_STREAM_ERROR
	CodeQPACKDecoderStreamError  ErrorCode = 0x202 // QPACK_DECODER_STREAM_ERROR
)

var codeNames = [...]string{
	"H3_NO_ERROR", "H3_GENERAL_PROTOCOL_ERROR", "H3_INTERNAL_ERROR",
	"H3_STREAM_CREATION_ERROR", "H3_CLOSED_CRITICAL_STREAM", "H3_FRAME_UNEXPECTED",
	"H3_FRAME_ERROR", "H3_EXCESSIVE_LOAD", "H3_ID_ERROR", "H3_SETTINGS_ERROR",
	"H3_MISSING_SETTINGS", "H3_REQUEST_REJECTED", "H3_REQUEST_CANCELLED",
	"H3_REQUEST_INCOMPLETE", "H3_MESSAGE_ERROR", "H3_CONNECT_ERROR",
	"H3_VERSION_FALLBACK",
}

// String returns the code's name as the RFC writes it, or its hex value.
func (c ErrorCode) String() string {
	switch {
	case c >= CodeNoError && c <= CodeVersionFallback:
		return codeNames[c-CodeNoError]
	case c == CodeQPACKDecompressionFailed:
		return "QPACK_DECOMPRESSION_FAILED"
	case c == CodeQPACKEncoderStreamError:
		return "QPACK_ENCODER_STREAM_ERROR"
	case c == CodeQPACKDecoderStreamError:
		return "QPACK_DECODER_STREAM_ERROR"
	}
	return "0x" + strconv.FormatUint(uint64(c), 16)
}

// Error is a protocol error found in the peer's bytes. Code is the error code
// to send; Conn reports a connection error (close the whole connection with
// Code) rather than a stream error (reset the one stream). Status, when not
// 0, is the response a server may send instead of resetting a request stream
// (400 for a malformed request, 431 for a field section over the limit).
type Error struct {
	Code   ErrorCode
	Conn   bool
	Status int
	Reason string
}

// Error returns the reason and the code's name.
func (e *Error) Error() string { return "h3: " + e.Reason + " (" + e.Code.String() + ")" }

// CodeOf returns the error code to send for err: the Code of an *Error, or
// H3_INTERNAL_ERROR for any other non-nil error, or H3_NO_ERROR for nil.
func CodeOf(err error) ErrorCode {
	if err == nil {
		return CodeNoError
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternalError
}

func connErr(c ErrorCode, reason string) *Error { return &Error{Code: c, Conn: true, Reason: reason} }
func msgErr(reason string) *Error {
	return &Error{Code: CodeMessageError, Status: 400, Reason: reason}
}

// Frame and stream errors (RFC 9114 §7, §6.2).
var (
	ErrFrameUnexpected   = connErr(CodeFrameUnexpected, "frame not allowed here")
	ErrReservedFrameType = connErr(CodeFrameUnexpected, "reserved HTTP/2 frame type")
	ErrPushPromise       = connErr(CodeFrameUnexpected, "PUSH_PROMISE from a client")
	ErrMalformedFrame    = connErr(CodeFrameError, "frame payload does not match its length")
	ErrFrameTooLarge     = connErr(CodeExcessiveLoad, "frame exceeds the byte budget")
	ErrUnknownBudget     = connErr(CodeExcessiveLoad, "unknown frames exceed the byte budget")
	ErrMissingSettings   = connErr(CodeMissingSettings, "control stream does not start with SETTINGS")
	ErrSecondSettings    = connErr(CodeFrameUnexpected, "second SETTINGS frame")
	ErrDuplicateSetting  = connErr(CodeSettingsError, "setting identifier repeated")
	ErrReservedSetting   = connErr(CodeSettingsError, "reserved HTTP/2 setting identifier")
	ErrBadSettingValue   = connErr(CodeSettingsError, "invalid setting value")
	ErrSettingsTooLarge  = connErr(CodeExcessiveLoad, "SETTINGS frame too large")
	ErrPushStream        = connErr(CodeStreamCreationError, "push stream opened by a client")
	ErrPushIDDecreased   = connErr(CodeIDError, "MAX_PUSH_ID reduced")
	ErrGoawayIDIncreased = connErr(CodeIDError, "GOAWAY identifier increased")
	ErrPriorityTooLarge  = connErr(CodeExcessiveLoad, "PRIORITY_UPDATE too large")
	ErrPriorityID        = connErr(CodeIDError, "PRIORITY_UPDATE for an invalid stream or push ID")
	ErrTooManySettings   = connErr(CodeExcessiveLoad, "too many settings")
	ErrSecondUniStream   = connErr(CodeStreamCreationError, "second control or QPACK stream")
	// ErrClosedCriticalStream is for a caller whose peer closed its control
	// or QPACK stream (RFC 9114 §6.2.1, RFC 9204 §4.2).
	ErrClosedCriticalStream = connErr(CodeClosedCriticalStream, "critical stream closed")
	// ErrUnknownStreamType is the stream error to stop reading a
	// unidirectional stream of an unknown type with (RFC 9114 §6.2).
	ErrUnknownStreamType = &Error{Code: CodeStreamCreationError, Reason: "unknown unidirectional stream type"}
)

// QPACK errors (RFC 9204 §2.2.3, §4.5): all connection errors of type
// QPACK_DECOMPRESSION_FAILED except the size limit.
var (
	ErrDynamicReference = connErr(CodeQPACKDecompressionFailed, "reference to the dynamic table, whose capacity is 0")
	ErrBadStaticIndex   = connErr(CodeQPACKDecompressionFailed, "static table index out of range")
	ErrQPACKTruncated   = connErr(CodeQPACKDecompressionFailed, "truncated field line")
	ErrQPACKInteger     = connErr(CodeQPACKDecompressionFailed, "prefix integer overflows")
	ErrHuffman          = connErr(CodeQPACKDecompressionFailed, "invalid Huffman code")
	// ErrFieldSectionTooLarge reports a field section over the decoder's
	// limit (RFC 9114 §4.2.2): a server may answer 431, or reset the stream.
	ErrFieldSectionTooLarge = &Error{Code: CodeExcessiveLoad, Status: 431, Reason: "field section too large"}
)

// Field-section errors (RFC 9114 §4.2–4.3): the message is malformed, a
// stream error of type H3_MESSAGE_ERROR.
var (
	ErrUppercaseName      = msgErr("uppercase field name")
	ErrBadFieldName       = msgErr("invalid field name")
	ErrBadFieldValue      = msgErr("invalid field value")
	ErrConnectionSpecific = msgErr("connection-specific field")
	ErrBadTE              = msgErr("te other than trailers")
	ErrPseudoAfterRegular = msgErr("pseudo-header field after a regular field")
	ErrUnknownPseudo      = msgErr("unknown or response pseudo-header field in a request")
	ErrDuplicatePseudo    = msgErr("repeated pseudo-header field")
	ErrMissingPseudo      = msgErr("missing required pseudo-header field")
	ErrConnectPseudo      = msgErr("CONNECT with :scheme or :path")
	ErrProtocolNotConnect = msgErr(":protocol without CONNECT, or not enabled")
	ErrBadPath            = msgErr("invalid :path")
	ErrBadAuthority       = msgErr("empty or mismatched :authority and host")
	ErrPseudoInTrailers   = msgErr("pseudo-header field in trailers")
	ErrBadContentLength   = msgErr("invalid or conflicting content-length")
	ErrBodyLength         = msgErr("body length differs from content-length")
	// ErrExtendedConnect refuses an extended CONNECT a server does not
	// serve: not a protocol error, so its Code is H3_REQUEST_REJECTED and
	// Status 501. (RequestHead.Build builds extended CONNECTs since
	// RFC 9220 is served, and no longer returns it.)
	ErrExtendedConnect = &Error{Code: CodeRequestRejected, Status: 501, Reason: "extended CONNECT has no HTTP/1.1 form"}
)
