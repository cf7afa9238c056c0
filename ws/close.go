package ws

import (
	"encoding/binary"
	"unicode/utf8"
)

// Close status codes (RFC 6455 section 7.4.1 and the IANA registry).
const (
	CloseNormal          = 1000
	CloseGoingAway       = 1001
	CloseProtocolError   = 1002
	CloseUnsupportedData = 1003
	CloseNoStatus        = 1005 // never sent: the close frame had no code
	CloseAbnormal        = 1006 // never sent: the connection dropped without a close frame
	CloseInvalidPayload  = 1007
	ClosePolicyViolation = 1008
	CloseTooBig          = 1009
	CloseMandatoryExt    = 1010
	CloseInternalError   = 1011
	CloseServiceRestart  = 1012
	CloseTryAgainLater   = 1013
	CloseBadGateway      = 1014
	CloseTLSHandshake    = 1015 // never sent
)

// ValidCloseCode reports whether code may appear in a close frame: the
// registered codes an endpoint may send and the ranges 3000-4999 for
// libraries, frameworks and applications.
func ValidCloseCode(code int) bool {
	switch {
	case code >= 1000 && code <= 1003, code >= 1007 && code <= 1014:
		return true
	case code >= 3000 && code <= 4999:
		return true
	}
	return false
}

// ParseClose parses a close frame's payload: a status code and a UTF-8
// reason, or nothing (code CloseNoStatus). A one-byte payload, a code that
// may not be sent or a reason that is not UTF-8 is an *Error.
func ParseClose(p []byte) (code int, reason []byte, err error) {
	switch {
	case len(p) == 0:
		return CloseNoStatus, nil, nil
	case len(p) == 1:
		return 0, nil, &Error{CloseProtocolError, "close frame with a one-byte payload"}
	case len(p) > MaxControlPayload:
		return 0, nil, errControlLen
	}
	code = int(binary.BigEndian.Uint16(p))
	if !ValidCloseCode(code) {
		return 0, nil, &Error{CloseProtocolError, "invalid close code"}
	}
	if !utf8.Valid(p[2:]) {
		return 0, nil, &Error{CloseInvalidPayload, "close reason is not UTF-8"}
	}
	return code, p[2:], nil
}

// AppendClose appends a close frame's payload for code and reason to b; code
// CloseNoStatus gives an empty payload. The reason is cut to fit the
// 125-byte control frame limit (at a UTF-8 boundary).
func AppendClose(b []byte, code int, reason string) []byte {
	if code == CloseNoStatus {
		return b
	}
	if len(reason) > MaxControlPayload-2 {
		reason = reason[:MaxControlPayload-2]
		for len(reason) > 0 && !utf8.ValidString(reason) {
			reason = reason[:len(reason)-1]
		}
	}
	b = binary.BigEndian.AppendUint16(b, uint16(code))
	return append(b, reason...)
}
