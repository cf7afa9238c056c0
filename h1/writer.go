package h1

import (
	"strconv"
	"time"
)

// statusLines holds "HTTP/1.1 NNN Reason\r\n" for every code 100..599, built
// once so writing a status line is a single append.
var statusLines [600]string

func init() {
	for code := 100; code < 600; code++ {
		statusLines[code] = "HTTP/1.1 " + strconv.Itoa(code) + " " + StatusText(code) + "\r\n"
	}
}

// AppendStatusLine appends the HTTP/1.1 status line for code. Codes outside
// 100..599 are written as 500, since they cannot be sent.
func AppendStatusLine(dst []byte, code int) []byte {
	if code < 100 || code >= 600 {
		code = 500
	}
	return append(dst, statusLines[code]...)
}

// AppendHeader appends "name: value\r\n". The caller validates name and
// value (ValidHeaderName, ValidHeaderValue) when they come from untrusted
// code.
func AppendHeader[N, V ~string | ~[]byte](dst []byte, name N, value V) []byte {
	dst = append(dst, name...)
	dst = append(dst, ':', ' ')
	dst = append(dst, value...)
	return append(dst, '\r', '\n')
}

// AppendContentLength appends "Content-Length: n\r\n".
func AppendContentLength(dst []byte, n int64) []byte {
	dst = append(dst, "Content-Length: "...)
	dst = strconv.AppendInt(dst, n, 10)
	return append(dst, '\r', '\n')
}

// AppendDate appends "Date: <IMF-fixdate>\r\n" for t. Servers cache the
// result and refresh it once a second.
func AppendDate(dst []byte, t time.Time) []byte {
	dst = append(dst, "Date: "...)
	dst = AppendHTTPDate(dst, t)
	return append(dst, '\r', '\n')
}

const (
	dayNames   = "SunMonTueWedThuFriSat"
	monthNames = "JanFebMarAprMayJunJulAugSepOctNovDec"
)

// AppendHTTPDate appends t in IMF-fixdate form (RFC 9110 §5.6.7), e.g.
// "Sun, 06 Nov 1994 08:49:37 GMT", without allocating. IMF-fixdate has a
// four-digit year, so t must lie in years 0 to 9999.
func AppendHTTPDate(dst []byte, t time.Time) []byte {
	t = t.UTC()
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	wd := int(t.Weekday()) * 3
	m := (int(mo) - 1) * 3
	dst = append(dst, dayNames[wd:wd+3]...)
	dst = append(dst, ',', ' ')
	dst = append2(dst, d)
	dst = append(dst, ' ')
	dst = append(dst, monthNames[m:m+3]...)
	dst = append(dst, ' ')
	dst = append2(dst, y/100)
	dst = append2(dst, y%100)
	dst = append(dst, ' ')
	dst = append2(dst, h)
	dst = append(dst, ':')
	dst = append2(dst, mi)
	dst = append(dst, ':')
	dst = append2(dst, s)
	return append(dst, " GMT"...)
}

func append2(dst []byte, v int) []byte {
	return append(dst, byte('0'+v/10), byte('0'+v%10))
}

// StatusText returns the reason phrase registered for code (RFC 9110 §15 and
// the IANA registry), or "" for unregistered codes (the status line then has
// an empty reason phrase, which RFC 9112 §4 allows).
func StatusText(code int) string {
	switch code {
	case 100:
		return "Continue"
	case 101:
		return "Switching Protocols"
	case 102:
		return "Processing"
	case 103:
		return "Early Hints"
	case 200:
		return "OK"
	case 201:
		return "Created"
	case 202:
		return "Accepted"
	case 203:
		return "Non-Authoritative Information"
	case 204:
		return "No Content"
	case 205:
		return "Reset Content"
	case 206:
		return "Partial Content"
	case 207:
		return "Multi-Status"
	case 208:
		return "Already Reported"
	case 226:
		return "IM Used"
	case 300:
		return "Multiple Choices"
	case 301:
		return "Moved Permanently"
	case 302:
		return "Found"
	case 303:
		return "See Other"
	case 304:
		return "Not Modified"
	case 305:
		return "Use Proxy"
	case 307:
		return "Temporary Redirect"
	case 308:
		return "Permanent Redirect"
	case 400:
		return "Bad Request"
	case 401:
		return "Unauthorized"
	case 402:
		return "Payment Required"
	case 403:
		return "Forbidden"
	case 404:
		return "Not Found"
	case 405:
		return "Method Not Allowed"
	case 406:
		return "Not Acceptable"
	case 407:
		return "Proxy Authentication Required"
	case 408:
		return "Request Timeout"
	case 409:
		return "Conflict"
	case 410:
		return "Gone"
	case 411:
		return "Length Required"
	case 412:
		return "Precondition Failed"
	case 413:
		return "Request Entity Too Large"
	case 414:
		return "Request URI Too Long"
	case 415:
		return "Unsupported Media Type"
	case 416:
		return "Requested Range Not Satisfiable"
	case 417:
		return "Expectation Failed"
	case 418:
		return "I'm a teapot"
	case 421:
		return "Misdirected Request"
	case 422:
		return "Unprocessable Entity"
	case 423:
		return "Locked"
	case 424:
		return "Failed Dependency"
	case 425:
		return "Too Early"
	case 426:
		return "Upgrade Required"
	case 428:
		return "Precondition Required"
	case 429:
		return "Too Many Requests"
	case 431:
		return "Request Header Fields Too Large"
	case 451:
		return "Unavailable For Legal Reasons"
	case 500:
		return "Internal Server Error"
	case 501:
		return "Not Implemented"
	case 502:
		return "Bad Gateway"
	case 503:
		return "Service Unavailable"
	case 504:
		return "Gateway Timeout"
	case 505:
		return "HTTP Version Not Supported"
	case 506:
		return "Variant Also Negotiates"
	case 507:
		return "Insufficient Storage"
	case 508:
		return "Loop Detected"
	case 510:
		return "Not Extended"
	case 511:
		return "Network Authentication Required"
	}
	return ""
}

// AppendRequestLine appends "METHOD target HTTP/1.1\r\n". The caller
// validates method (IsToken) and target (no SP, CR, LF or NUL).
func AppendRequestLine[M, T ~string | ~[]byte](dst []byte, method M, target T) []byte {
	dst = append(dst, method...)
	dst = append(dst, ' ')
	dst = append(dst, target...)
	return append(dst, " HTTP/1.1\r\n"...)
}
