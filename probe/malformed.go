package probe

import "strings"

// malformedChecks are the malformed-input checks, in the order of the Http11Probe documentation.
var malformedChecks = []Check{
	{ // docs: malformed-input/binary-garbage.md
		ID:       "MAL-BINARY-GARBAGE",
		Category: MalformedInput,
		Level:    Should,
		Expected: "400, close, or timeout",
		Scored:   true,
		Steps:    send(binaryGarbage(256, 42)),
		Judge:    expect("400|close|timeout", ""),
	},
	{ // docs: malformed-input/chunk-extension-long.md
		ID:       "MAL-CHUNK-EXT-64K",
		Category: MalformedInput,
		Level:    NotApplicable,
		Expected: "400/431 = Pass, 2xx = Warn, close = Pass",
		Scored:   true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"5;ext=" + strings.Repeat("a", 65_536) + "\r\n" +
			"hello\r\n" +
			"0\r\n" +
			"\r\n"),
		Judge: expect("400|431|close", "2xx"),
	},
	{ // docs: malformed-input/chunk-size-overflow.md
		ID:       "MAL-CHUNK-SIZE-OVERFLOW",
		Category: MalformedInput,
		Level:    Must,
		Expected: "400 or close",
		Scored:   true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"FFFFFFFFFFFFFFFF0\r\n" +
			"hello\r\n" +
			"0\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: malformed-input/cl-empty.md
		ID:          "MAL-CL-EMPTY",
		Category:    MalformedInput,
		RFC:         "RFC 9110 Section 8.6",
		Level:       Must,
		Requirement: "MUST reject",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: \r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: malformed-input/cl-overflow.md
		ID:       "MAL-CL-OVERFLOW",
		Category: MalformedInput,
		Level:    Must,
		Expected: "400 or close",
		Scored:   true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 99999999999999999999\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: malformed-input/cl-tab-before-value.md
		ID:          "MAL-CL-TAB-BEFORE-VALUE",
		Category:    MalformedInput,
		RFC:         "RFC 9110 Section 5.5",
		Level:       May,
		Requirement: "valid per RFC",
		Expected:    "400 preferred; 2xx is a warning",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length:\t5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: malformed-input/control-chars-header.md
		ID:       "MAL-CONTROL-CHARS-HEADER",
		Category: MalformedInput,
		RFC:      "RFC 9110 Section 5.5",
		Level:    Must,
		Expected: "400 or close",
		Scored:   true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"X-Test: abc\x07\x08\x0bdef\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: malformed-input/empty-request.md
		ID:       "MAL-EMPTY-REQUEST",
		Category: MalformedInput,
		Level:    NotApplicable,
		Expected: "400, close, or timeout",
		Scored:   true,
		Steps:    send(""),
		Judge:    expect("400|close|timeout", ""),
	},
	{ // docs: malformed-input/h2-preface.md
		ID:       "MAL-H2-PREFACE",
		Category: MalformedInput,
		Level:    NotApplicable,
		Expected: "400/505, close, or timeout",
		Scored:   true,
		Steps: send("PRI * HTTP/2.0\r\n" +
			"\r\n" +
			"SM\r\n" +
			"\r\n"),
		Judge: expect("400|505|close|timeout", ""),
	},
	{ // docs: malformed-input/incomplete-request.md
		ID:       "MAL-INCOMPLETE-REQUEST",
		Category: MalformedInput,
		Level:    NotApplicable,
		Expected: "400, close, or timeout",
		Scored:   true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"X-Test: value"),
		Judge: expect("400|close|timeout", ""),
	},
	{ // docs: malformed-input/long-header-name.md
		ID:       "MAL-LONG-HEADER-NAME",
		Category: MalformedInput,
		Level:    Should,
		Expected: "400, 431, or close",
		Scored:   true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			strings.Repeat("A", 100_000) + ": val\r\n" +
			"\r\n"),
		Judge: expect("400|431|close", ""),
	},
	{ // docs: malformed-input/long-header-value.md
		ID:       "MAL-LONG-HEADER-VALUE",
		Category: MalformedInput,
		Level:    Should,
		Expected: "400, 431, or close",
		Scored:   true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"X-Big: " + strings.Repeat("B", 100_000) + "\r\n" +
			"\r\n"),
		Judge: expect("400|431|close", ""),
	},
	{ // docs: malformed-input/long-method.md
		ID:       "MAL-LONG-METHOD",
		Category: MalformedInput,
		Level:    Should,
		Expected: "400 or close",
		Scored:   true,
		Steps: send(strings.Repeat("A", 100_000) + " / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: malformed-input/long-url.md
		ID:       "MAL-LONG-URL",
		Category: MalformedInput,
		RFC:      "RFC 9112 Section 3",
		Level:    Should,
		Expected: "400, 414, 431, or close",
		Scored:   true,
		Steps: send("GET /" + strings.Repeat("A", 100_000) + " HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|414|431|close", ""),
	},
	{ // docs: malformed-input/many-headers.md
		ID:       "MAL-MANY-HEADERS",
		Category: MalformedInput,
		Level:    NotApplicable,
		Expected: "400, 431, or close",
		Scored:   true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			numbered("X-H-%d: value\r\n", "", 10_000) +
			"\r\n"),
		Judge: expect("400|431|close", ""),
	},
	{ // docs: malformed-input/non-ascii-header-name.md
		ID:       "MAL-NON-ASCII-HEADER-NAME",
		Category: MalformedInput,
		Level:    Must,
		Expected: "400 or close",
		Scored:   true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"X-T\xc3\xabst: value\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: malformed-input/non-ascii-url.md
		ID:       "MAL-NON-ASCII-URL",
		Category: MalformedInput,
		Level:    Must,
		Expected: "400 or close",
		Scored:   true,
		Steps: send("GET /caf\xc3\xa9 HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: malformed-input/nul-in-header-value.md
		ID:       "MAL-NUL-IN-HEADER-VALUE",
		Category: MalformedInput,
		Level:    Must,
		Expected: "400 or close",
		Scored:   true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"X-Test: val\x00ue\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: malformed-input/nul-in-url.md
		ID:       "MAL-NUL-IN-URL",
		Category: MalformedInput,
		Level:    Must,
		Expected: "400 or close",
		Scored:   true,
		Steps: send("GET /\x00test HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: malformed-input/post-cl-huge-no-body.md
		ID:       "MAL-POST-CL-HUGE-NO-BODY",
		Category: MalformedInput,
		RFC:      "RFC 9112 Section 6.2",
		Level:    Must,
		Expected: "400/close/timeout",
		Scored:   true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 999999999\r\n" +
			"\r\n"),
		Judge: expect("400|close|timeout", ""),
	},
	{ // docs: malformed-input/range-overlapping.md
		ID:       "MAL-RANGE-OVERLAPPING",
		Category: MalformedInput,
		RFC:      "RFC 9110 Section 14.2",
		Level:    Unscored,
		Expected: "Any response = Warn",
		Scored:   false,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Range: bytes=" + numbered("0-", ",", 1000) + "\r\n" +
			"\r\n"),
		Judge: anyResponseWarn(),
	},
	{ // docs: malformed-input/url-backslash.md
		ID:       "MAL-URL-BACKSLASH",
		Category: MalformedInput,
		Level:    Unscored,
		Expected: "400 = Pass, 2xx/404 = Warn",
		Scored:   false,
		Steps: send("GET /path\\file HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|close", "2xx|404"),
	},
	{ // docs: malformed-input/url-overlong-utf8.md
		ID:       "MAL-URL-OVERLONG-UTF8",
		Category: MalformedInput,
		Level:    Must,
		Expected: "400 or close",
		Scored:   true,
		Steps: send("GET /\xc0\xaf HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: malformed-input/url-percent-crlf.md
		ID:       "MAL-URL-PERCENT-CRLF",
		Category: MalformedInput,
		Level:    NotApplicable,
		Expected: "400 = Pass, 2xx/404 = Warn",
		Scored:   true,
		Steps: send("GET /path%0d%0aX-Injected:%20true HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|close", "2xx|404"),
	},
	{ // docs: malformed-input/url-percent-null.md
		ID:       "MAL-URL-PERCENT-NULL",
		Category: MalformedInput,
		Level:    NotApplicable,
		Expected: "400 = Pass, 2xx/404 = Warn",
		Scored:   true,
		Steps: send("GET /path%00.html HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|close", "2xx|404"),
	},
	{ // docs: malformed-input/whitespace-only-line.md
		ID:       "MAL-WHITESPACE-ONLY-LINE",
		Category: MalformedInput,
		Level:    NotApplicable,
		Expected: "400, close, or timeout",
		Scored:   true,
		Steps: send("   \r\n" +
			"\r\n"),
		Judge: expect("400|close|timeout", ""),
	},
}
