package probe

import "strings"

// complianceChecks are the RFC 9110/9112 compliance checks, in the order of the Http11Probe documentation.
var complianceChecks = []Check{
	{ // docs: baseline.md
		ID:       "COMP-BASELINE",
		Category: Compliance,
		Level:    NotApplicable,
		Expected: "2xx",
		Scored:   true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("2xx", ""),
	},
	{ // docs: body/chunked-body.md
		ID:          "COMP-CHUNKED-BODY",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 7.1",
		Level:       Must,
		Requirement: "MUST accept",
		Expected:    "2xx",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"5\r\n" +
			"hello\r\n" +
			"0\r\n" +
			"\r\n"),
		Judge: expect("2xx", ""),
	},
	{ // docs: body/chunked-empty.md
		ID:          "COMP-CHUNKED-EMPTY",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 7.1",
		Level:       Must,
		Requirement: "MUST accept",
		Expected:    "2xx or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"0\r\n" +
			"\r\n"),
		Judge: expect("2xx|close", ""),
	},
	{ // docs: body/chunked-extension.md
		ID:          "COMP-CHUNKED-EXTENSION",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 7.1.1",
		Level:       Must,
		Requirement: "MUST ignore unrecognized extensions",
		Expected:    "2xx = Pass, 400 = Warn",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"5;ext=value\r\n" +
			"hello\r\n" +
			"0\r\n" +
			"\r\n"),
		Judge: expect("2xx", "400"),
	},
	{ // docs: body/chunked-hex-uppercase.md
		ID:          "COMP-CHUNKED-HEX-UPPERCASE",
		Category:    Compliance,
		RFC:         "RFC 9112 §7.1",
		Level:       Must,
		Requirement: "MUST accept",
		Expected:    "2xx",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"A\r\n" +
			"helloworld\r\n" +
			"0\r\n" +
			"\r\n"),
		Judge: expect("2xx", ""),
	},
	{ // docs: body/chunked-multi.md
		ID:          "COMP-CHUNKED-MULTI",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 7.1",
		Level:       Must,
		Requirement: "MUST accept",
		Expected:    "2xx",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"5\r\n" +
			"hello\r\n" +
			"6\r\n" +
			" world\r\n" +
			"0\r\n" +
			"\r\n"),
		Judge: expect("2xx", ""),
	},
	{ // docs: body/chunked-no-final.md
		ID:          "COMP-CHUNKED-NO-FINAL",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 7.1",
		Level:       Must,
		Requirement: "MUST read until terminator",
		Expected:    "400, close, or timeout",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"5\r\n" +
			"hello\r\n"),
		Judge: expect("400|close|timeout", ""),
	},
	{ // docs: body/chunked-trailer-valid.md
		ID:          "COMP-CHUNKED-TRAILER-VALID",
		Category:    Compliance,
		RFC:         "RFC 9112 §7.1.2",
		Level:       Must,
		Requirement: "MUST accept",
		Expected:    "2xx",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"5\r\n" +
			"hello\r\n" +
			"0\r\n" +
			"X-Checksum: abc\r\n" +
			"\r\n"),
		Judge: expect("2xx", ""),
	},
	{ // docs: body/get-with-cl-body.md
		ID:          "COMP-GET-WITH-CL-BODY",
		Category:    Compliance,
		RFC:         "RFC 9110 Section 9.3.1",
		Level:       May,
		Requirement: "MAY reject",
		Expected:    "400 = Pass; 2xx = Warn",
		Scored:      false,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost\r\n" +
			"Content-Length: 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: body/post-cl-body.md
		ID:          "COMP-POST-CL-BODY",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 6.2",
		Level:       Must,
		Requirement: "MUST accept",
		Expected:    "2xx",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost\r\n" +
			"Content-Length: 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("2xx", ""),
	},
	{ // docs: body/post-cl-undersend.md
		ID:          "COMP-POST-CL-UNDERSEND",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 6.2",
		Level:       Must,
		Requirement: "MUST read declared length",
		Expected:    "400, close, or timeout",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost\r\n" +
			"Content-Length: 10\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close|timeout", ""),
	},
	{ // docs: body/post-cl-zero.md
		ID:          "COMP-POST-CL-ZERO",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 6.2",
		Level:       Must,
		Requirement: "MUST accept",
		Expected:    "2xx or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost\r\n" +
			"Content-Length: 0\r\n" +
			"\r\n"),
		Judge: expect("2xx|close", ""),
	},
	{ // docs: body/post-no-cl-no-te.md
		ID:          "COMP-POST-NO-CL-NO-TE",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 6.3",
		Level:       Must,
		Requirement: "MUST treat as zero-length",
		Expected:    "2xx or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost\r\n" +
			"\r\n"),
		Judge: expect("2xx|close", ""),
	},
	{ // docs: body/post-unsupported-ct.md
		ID:          "COMP-POST-UNSUPPORTED-CT",
		Category:    Compliance,
		RFC:         "RFC 9110 §15.5.16",
		Level:       Unscored,
		Requirement: "MAY",
		Expected:    "415 or 2xx",
		Scored:      false,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 5\r\n" +
			"Content-Type: application/x-nonsense\r\n" +
			"\r\n" +
			"hello"),
		Judge: expectElseWarn("415|2xx"),
	},
	{ // docs: body/range-invalid.md
		ID:          "COMP-RANGE-INVALID",
		Category:    Compliance,
		RFC:         "RFC 9110 §14.2",
		Level:       Unscored,
		Requirement: "MAY",
		Expected:    "2xx (ignore) or 416",
		Scored:      false,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Range: bytes=abc-xyz\r\n" +
			"\r\n"),
		Judge: expectElseWarn("2xx|416"),
	},
	{ // docs: body/range-post.md
		ID:          "COMP-RANGE-POST",
		Category:    Compliance,
		RFC:         "RFC 9110 §14.2",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "2xx (Range ignored)",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 5\r\n" +
			"Range: bytes=0-10\r\n" +
			"\r\n" +
			"hello"),
		Judge: rangeIgnoredOnPost(),
	},
	{ // docs: content-length/cl-non-numeric.md
		ID:          "RFC9112-6.1-CL-NON-NUMERIC",
		Category:    Compliance,
		RFC:         "RFC 9110 Section 8.6, RFC 9112 Section 6.3",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: abc\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: content-length/cl-plus-sign.md
		ID:          "RFC9112-6.1-CL-PLUS-SIGN",
		Category:    Compliance,
		RFC:         "RFC 9110 Section 8.6, RFC 9112 Section 6.3",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: +5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", ""),
	},
	{ // docs: content-length/no-cl-in-204.md
		ID:          "COMP-NO-CL-IN-204",
		Category:    Compliance,
		RFC:         "RFC 9110 §8.6",
		Level:       Must,
		Requirement: "MUST NOT",
		Expected:    "204 without Content-Length",
		Scored:      true,
		Steps: send("OPTIONS / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: noContentLengthIn204(),
	},
	{ // docs: headers/accept-nonsense.md
		ID:          "COMP-ACCEPT-NONSENSE",
		Category:    Compliance,
		RFC:         "RFC 9110 §12.5.1",
		Level:       Unscored,
		Requirement: "SHOULD",
		Expected:    "406 preferred, 2xx acceptable",
		Scored:      false,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Accept: application/x-nonsense\r\n" +
			"\r\n"),
		Judge: expect("406", "2xx"),
	},
	{ // docs: headers/connection-close.md
		ID:          "COMP-CONNECTION-CLOSE",
		Category:    Compliance,
		RFC:         "RFC 9112 §9.6",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "2xx + connection closed",
		Scored:      true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Connection: close\r\n" +
			"\r\n"),
		Judge: closedAfter2xx(Fail),
	},
	{ // docs: headers/content-type-presence.md
		ID:          "COMP-CONTENT-TYPE",
		Category:    Compliance,
		RFC:         "RFC 9110 §8.3",
		Level:       Should,
		Requirement: "SHOULD",
		Expected:    "2xx with Content-Type header",
		Scored:      true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: contentTypePresent(),
	},
	{ // docs: headers/date-format.md
		ID:          "COMP-DATE-FORMAT",
		Category:    Compliance,
		RFC:         "RFC 9110 §5.6.7",
		Level:       Unscored,
		Requirement: "SHOULD",
		Expected:    "IMF-fixdate format",
		Scored:      false,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: dateIsIMFFixdate(),
	},
	{ // docs: headers/date-header.md
		ID:          "COMP-DATE-HEADER",
		Category:    Compliance,
		RFC:         "RFC 9110 §6.6.1",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "2xx with Date header",
		Scored:      true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: okWithHeader("Date", Fail),
	},
	{ // docs: headers/duplicate-ct.md
		ID:          "COMP-DUPLICATE-CT",
		Category:    Compliance,
		RFC:         "RFC 9110 §5.3",
		Level:       Should,
		Requirement: "SHOULD",
		Expected:    "400 preferred, 2xx acceptable",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 5\r\n" +
			"Content-Type: text/plain\r\n" +
			"Content-Type: text/html\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: headers/empty-header-name.md
		ID:          "RFC9112-5-EMPTY-HEADER-NAME",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 5",
		Level:       Must,
		Requirement: "Implicit MUST (grammar violation)",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			": empty-name\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: headers/expect-unknown.md
		ID:          "COMP-EXPECT-UNKNOWN",
		Category:    Compliance,
		RFC:         "RFC 9110 Section 10.1.1",
		Level:       May,
		Requirement: "MAY respond with 417",
		Expected:    "417; 2xx is a warning",
		Scored:      true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Expect: 200-ok\r\n" +
			"\r\n"),
		Judge: expect("417", "2xx"),
	},
	{ // docs: headers/header-no-colon.md
		ID:          "RFC9112-5-HEADER-NO-COLON",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 5",
		Level:       Must,
		Requirement: "Implicit MUST (grammar violation)",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"NoColonHere\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: headers/http10-default-close.md
		ID:          "COMP-HTTP10-DEFAULT-CLOSE",
		Category:    Compliance,
		RFC:         "RFC 9112 §9.3",
		Level:       Should,
		Requirement: "SHOULD",
		Expected:    "2xx + connection closed",
		Scored:      true,
		Steps: send("GET / HTTP/1.0\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: closedAfter2xx(Warn),
	},
	{ // docs: headers/invalid-header-name.md
		ID:          "RFC9112-5-INVALID-HEADER-NAME",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 5",
		Level:       Must,
		Requirement: "Implicit MUST (grammar violation)",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Bad[Name: value\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: headers/no-1xx-http10.md
		ID:          "COMP-NO-1XX-HTTP10",
		Category:    Compliance,
		RFC:         "RFC 9110 §15.2",
		Level:       Must,
		Requirement: "MUST NOT",
		Expected:    "Non-1xx response",
		Scored:      true,
		Steps: send("POST / HTTP/1.0\r\n" +
			"Host: localhost:8080\r\n" +
			"Expect: 100-continue\r\n" +
			"Content-Length: 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: noInterimForHTTP10(),
	},
	{ // docs: headers/obs-fold.md
		ID:          "RFC9112-5.1-OBS-FOLD",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 5.2",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400",
		Scored:      true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"X-Test: value\r\n" +
			" continued\r\n" +
			"\r\n"),
		Judge: expect("400", ""),
	},
	{ // docs: headers/sp-before-colon.md
		ID:          "RFC9110-5.6.2-SP-BEFORE-COLON",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 5",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400",
		Scored:      true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"X-Test : value\r\n" +
			"\r\n"),
		Judge: expect("400", ""),
	},
	{ // docs: headers/whitespace-before-headers.md
		ID:          "COMP-WHITESPACE-BEFORE-HEADERS",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 2.2",
		Level:       Must,
		Requirement: "MUST reject or ignore",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("GET / HTTP/1.1\r\n" +
			" \r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: host-header/duplicate-host-same.md
		ID:          "COMP-DUPLICATE-HOST-SAME",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 3.2",
		Level:       Must,
		Requirement: "MUST respond with 400",
		Expected:    "400",
		Scored:      true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400", ""),
	},
	{ // docs: host-header/duplicate-host.md
		ID:          "RFC9110-5.4-DUPLICATE-HOST",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 3.2",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400",
		Scored:      true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Host: other.example.com\r\n" +
			"\r\n"),
		Judge: expect("400", ""),
	},
	{ // docs: host-header/host-empty-value.md
		ID:          "COMP-HOST-EMPTY-VALUE",
		Category:    Compliance,
		RFC:         "RFC 9112 §3.2",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: \r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: host-header/host-with-path.md
		ID:          "COMP-HOST-WITH-PATH",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 3.2",
		Level:       Must,
		Requirement: "MUST respond with 400",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080/path\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: host-header/host-with-userinfo.md
		ID:          "COMP-HOST-WITH-USERINFO",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 3.2",
		Level:       Must,
		Requirement: "MUST respond with 400",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: user@localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: host-header/http10-no-host.md
		ID:          "COMP-HTTP10-NO-HOST",
		Category:    Compliance,
		RFC:         "RFC 9112 §3.2",
		Level:       May,
		Requirement: "MAY (unscored)",
		Expected:    "200 = Warn, 400 = Pass",
		Scored:      false,
		Steps: send("GET / HTTP/1.0\r\n" +
			"\r\n"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: host-header/missing-host.md
		ID:          "RFC9112-7.1-MISSING-HOST",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 3.2",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400",
		Scored:      true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"\r\n"),
		Judge: expect("400", ""),
	},
	{ // docs: line-endings/bare-lf-header.md
		ID:          "RFC9112-2.2-BARE-LF-HEADER",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 2.2",
		Level:       May,
		Requirement: "MAY",
		Expected:    "400 or close (pass), 2xx (warn)",
		Scored:      true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\n" +
			"X-Test: value\r\n" +
			"\r\n"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: line-endings/bare-lf-request-line.md
		ID:          "RFC9112-2.2-BARE-LF-REQUEST-LINE",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 2.2",
		Level:       May,
		Requirement: "MAY",
		Expected:    "400 or close (pass), 2xx (warn)",
		Scored:      true,
		Steps: send("GET / HTTP/1.1\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: line-endings/cr-only-line-ending.md
		ID:          "RFC9112-3-CR-ONLY-LINE-ENDING",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 2.2",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400",
		Scored:      true,
		Steps: send("GET / HTTP/1.1\rHost: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400", ""),
	},
	{ // docs: line-endings/leading-crlf.md
		ID:          "COMP-LEADING-CRLF",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 2.2",
		Level:       Should,
		Requirement: "SHOULD ignore",
		Expected:    "400 or 2xx",
		Scored:      true,
		Steps: send("\r\n" +
			"\r\n" +
			"GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: request-line/405-allow.md
		ID:          "COMP-405-ALLOW",
		Category:    Compliance,
		RFC:         "RFC 9110 §15.5.6",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "405 with Allow header",
		Scored:      true,
		Steps: send("DELETE / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: methodNotAllowedHasAllow(),
	},
	{ // docs: request-line/absolute-form.md
		ID:          "COMP-ABSOLUTE-FORM",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 3.2.2",
		Level:       Unscored,
		Requirement: "MUST accept (server)",
		Expected:    "2xx = Pass, 400 = Warn (unscored)",
		Scored:      false,
		Steps: send("GET http://localhost:8080/ HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("2xx", "400"),
	},
	{ // docs: request-line/asterisk-with-get.md
		ID:          "COMP-ASTERISK-WITH-GET",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 3.2.4",
		Level:       Must,
		Requirement: "MUST only be used with OPTIONS",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("GET * HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: request-line/fragment-in-target.md
		ID:          "RFC9112-3.2-FRAGMENT-IN-TARGET",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 3.2",
		Level:       Should,
		Requirement: "SHOULD",
		Expected:    "400 = Pass; 2xx = Warn",
		Scored:      true,
		Steps: send("GET /path#frag HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: request-line/head-no-body.md
		ID:          "COMP-HEAD-NO-BODY",
		Category:    Compliance,
		RFC:         "RFC 9110 §9.3.2",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "2xx with no body",
		Scored:      true,
		Steps: send("HEAD / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: headHasNoBody(),
	},
	{ // docs: request-line/http09-request.md
		ID:          "RFC9112-2.3-HTTP09-REQUEST",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 2.3",
		Level:       Should,
		Requirement: "SHOULD",
		Expected:    "400, close, or timeout",
		Scored:      true,
		Steps:       send("GET /\r\n"),
		Judge:       expect("400|close|timeout", ""),
	},
	{ // docs: request-line/http12-version.md
		ID:          "COMP-HTTP12-VERSION",
		Category:    Compliance,
		RFC:         "RFC 9112 §2.3",
		Level:       May,
		Requirement: "MAY (unscored)",
		Expected:    "200 or 505 = Warn",
		Scored:      false,
		Steps: send("GET / HTTP/1.2\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("", "2xx|505"),
	},
	{ // docs: request-line/invalid-version.md
		ID:          "RFC9112-2.3-INVALID-VERSION",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 2.3",
		Level:       Should,
		Requirement: "No MUST",
		Expected:    "400, 505, or close",
		Scored:      true,
		Steps: send("GET / HTTP/9.9\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|505|close", ""),
	},
	{ // docs: request-line/long-url-ok.md
		ID:          "COMP-LONG-URL-OK",
		Category:    Compliance,
		RFC:         "RFC 9112 §3",
		Level:       Should,
		Requirement: "SHOULD",
		Expected:    "Any status except 414",
		Scored:      true,
		Steps: send("GET /" + strings.Repeat("a", 7900) + " HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: notURITooLong(),
	},
	{ // docs: request-line/method-case.md
		ID:          "COMP-METHOD-CASE",
		Category:    Compliance,
		RFC:         "RFC 9110 Section 9.1",
		Level:       Unscored,
		Requirement: "Case-sensitive",
		Expected:    "400/405/501 or 2xx",
		Scored:      false,
		Steps: send("get / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|405|501", "2xx"),
	},
	{ // docs: request-line/method-connect.md
		ID:          "COMP-METHOD-CONNECT",
		Category:    Compliance,
		RFC:         "RFC 9110 Section 9.3.6",
		Level:       Should,
		Requirement: "origin server SHOULD reject",
		Expected:    "400, 405, 501, or close",
		Scored:      true,
		Steps: send("CONNECT example.com:443 HTTP/1.1\r\n" +
			"Host: example.com:443\r\n" +
			"\r\n"),
		Judge: expect("400|405|501|close", ""),
	},
	{ // docs: request-line/method-trace.md
		ID:          "COMP-METHOD-TRACE",
		Category:    Compliance,
		RFC:         "RFC 9110 Section 9.3.8",
		Level:       Should,
		Requirement: "SHOULD disable",
		Expected:    "405 or 501 preferred; 200 is a warning",
		Scored:      false,
		Steps: send("TRACE / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("405|501", "2xx"),
	},
	{ // docs: request-line/missing-target.md
		ID:          "RFC9112-3-MISSING-TARGET",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 3",
		Level:       Must,
		Requirement: "MUST (grammar violation)",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("GET HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: request-line/multi-sp-request-line.md
		ID:          "RFC9112-3-MULTI-SP-REQUEST-LINE",
		Category:    Compliance,
		RFC:         "RFC 9112 §3",
		Level:       Should,
		Requirement: "SHOULD reject, MAY parse leniently",
		Expected:    "400 or 2xx",
		Scored:      true,
		Steps: send("GET  / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: request-line/options-allow.md
		ID:          "COMP-OPTIONS-ALLOW",
		Category:    Compliance,
		RFC:         "RFC 9110 §9.3.7",
		Level:       Should,
		Requirement: "SHOULD",
		Expected:    "2xx with Allow header",
		Scored:      true,
		Steps: send("OPTIONS / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: okWithHeader("Allow", Warn),
	},
	{ // docs: request-line/options-star.md
		ID:          "COMP-OPTIONS-STAR",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 3.2.4",
		Level:       Must,
		Requirement: "MUST accept",
		Expected:    "2xx",
		Scored:      true,
		Steps: send("OPTIONS * HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("2xx", ""),
	},
	{ // docs: request-line/request-line-tab.md
		ID:          "COMP-REQUEST-LINE-TAB",
		Category:    Compliance,
		RFC:         "RFC 9112 §3",
		Level:       Should,
		Requirement: "SHOULD reject, MAY accept",
		Expected:    "400 or 2xx",
		Scored:      true,
		Steps: send("GET\t/ HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: request-line/space-in-target.md
		ID:          "COMP-SPACE-IN-TARGET",
		Category:    Compliance,
		RFC:         "RFC 9112 §3.2",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400 or connection close",
		Scored:      true,
		Steps: send("GET /pa th HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: request-line/trace-sensitive.md
		ID:          "COMP-TRACE-SENSITIVE",
		Category:    Compliance,
		RFC:         "RFC 9110 §9.3.8",
		Level:       Unscored,
		Requirement: "SHOULD",
		Expected:    "Sensitive headers excluded from echo",
		Scored:      false,
		Steps: send("TRACE / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Authorization: Bearer secret-token-123\r\n" +
			"\r\n"),
		Judge: traceHidesSecret("secret-token-123"),
	},
	{ // docs: request-line/trace-with-body.md
		ID:          "COMP-TRACE-WITH-BODY",
		Category:    Compliance,
		RFC:         "RFC 9110 §9.3.8",
		Level:       Should,
		Requirement: "SHOULD reject (unscored)",
		Expected:    "400/405 = Pass, 200 = Warn",
		Scored:      false,
		Steps: send("TRACE / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|405|501", "2xx"),
	},
	{ // docs: request-line/unknown-method.md
		ID:          "COMP-UNKNOWN-METHOD",
		Category:    Compliance,
		RFC:         "RFC 9110 §9.1",
		Level:       Should,
		Requirement: "SHOULD",
		Expected:    "501, 405, or 400",
		Scored:      true,
		Steps: send("FOOBAR / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|405|501", ""),
	},
	{ // docs: request-line/unknown-te-501.md
		ID:          "COMP-UNKNOWN-TE-501",
		Category:    Compliance,
		RFC:         "RFC 9112 Section 6.1",
		Level:       Must,
		Requirement: "SHOULD respond with 501",
		Expected:    "400/501 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: gzip\r\n" +
			"\r\n"),
		Judge: expect("400|501|close", ""),
	},
	{ // docs: request-line/version-case.md
		ID:          "COMP-VERSION-CASE",
		Category:    Compliance,
		RFC:         "RFC 9112 §2.3",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400 or connection close",
		Scored:      true,
		Steps: send("GET / http/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: request-line/version-leading-zeros.md
		ID:          "COMP-VERSION-LEADING-ZEROS",
		Category:    Compliance,
		RFC:         "RFC 9112 §2.3",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("GET / HTTP/01.01\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: request-line/version-missing-minor.md
		ID:          "COMP-VERSION-MISSING-MINOR",
		Category:    Compliance,
		RFC:         "RFC 9112 §2.3",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("GET / HTTP/1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: request-line/version-whitespace.md
		ID:          "COMP-VERSION-WHITESPACE",
		Category:    Compliance,
		RFC:         "RFC 9112 §2.3",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("GET / HTTP/ 1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: upgrade/upgrade-http10.md
		ID:          "COMP-UPGRADE-HTTP10",
		Category:    Compliance,
		RFC:         "RFC 9110 §7.8",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "Not 101",
		Scored:      true,
		Steps: send("GET / HTTP/1.0\r\n" +
			"Host: localhost:8080\r\n" +
			"Connection: Upgrade\r\n" +
			"Upgrade: websocket\r\n" +
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" +
			"Sec-WebSocket-Version: 13\r\n" +
			"\r\n"),
		Judge: upgradeRefused(false),
	},
	{ // docs: upgrade/upgrade-invalid-ver.md
		ID:          "COMP-UPGRADE-INVALID-VER",
		Category:    Compliance,
		RFC:         "RFC 6455 Section 4.4",
		Level:       Must,
		Requirement: "MUST abort handshake (426 preferred)",
		Expected:    "426 or non-101",
		Scored:      true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Connection: Upgrade\r\n" +
			"Upgrade: websocket\r\n" +
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" +
			"Sec-WebSocket-Version: 99\r\n" +
			"\r\n"),
		Judge: upgradeRefused(true),
	},
	{ // docs: upgrade/upgrade-missing-conn.md
		ID:          "COMP-UPGRADE-MISSING-CONN",
		Category:    Compliance,
		RFC:         "RFC 9110 Section 7.8",
		Level:       Must,
		Requirement: "MUST NOT switch",
		Expected:    "any non-101 response",
		Scored:      true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Upgrade: websocket\r\n" +
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" +
			"Sec-WebSocket-Version: 13\r\n" +
			"\r\n"),
		Judge: upgradeRefused(false),
	},
	{ // docs: upgrade/upgrade-post.md
		ID:          "COMP-UPGRADE-POST",
		Category:    Compliance,
		RFC:         "RFC 6455 Section 4.1",
		Level:       Must,
		Requirement: "MUST use GET",
		Expected:    "any non-101 response",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Connection: Upgrade\r\n" +
			"Upgrade: websocket\r\n" +
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" +
			"Sec-WebSocket-Version: 13\r\n" +
			"\r\n"),
		Judge: upgradeRefused(false),
	},
	{ // docs: upgrade/upgrade-unknown.md
		ID:          "COMP-UPGRADE-UNKNOWN",
		Category:    Compliance,
		RFC:         "RFC 9110 Section 7.8",
		Level:       Must,
		Requirement: "MUST NOT switch",
		Expected:    "any non-101 response",
		Scored:      true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Connection: Upgrade\r\n" +
			"Upgrade: totally-made-up/1.0\r\n" +
			"\r\n"),
		Judge: upgradeRefused(false),
	},
}
