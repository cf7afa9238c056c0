package probe

import "strings"

// cookieChecks are the cookie checks, in the order of the Http11Probe documentation.
var cookieChecks = []Check{
	{ // docs: cookies/control-chars.md
		ID:          "COOK-CONTROL-CHARS",
		Category:    Cookies,
		Level:       Unscored,
		Requirement: "N/A",
		Expected:    "400 (rejected) or 2xx without control chars",
		Scored:      false,
		Steps: send("GET /echo HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Cookie: foo=\x01\x02\x03\r\n" +
			"\r\n"),
		Judge: cookieStripped("\x01", "\x02", "\x03"),
	},
	{ // docs: cookies/echo.md
		ID:          "COOK-ECHO",
		Category:    Cookies,
		Level:       Unscored,
		Requirement: "N/A",
		Expected:    "2xx with Cookie in body",
		Scored:      false,
		Steps: send("GET /echo HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Cookie: foo=bar\r\n" +
			"\r\n"),
		Judge: cookieEcho(),
	},
	{ // docs: cookies/empty.md
		ID:          "COOK-EMPTY",
		Category:    Cookies,
		Level:       Unscored,
		Requirement: "N/A",
		Expected:    "2xx or 400",
		Scored:      false,
		Steps: send("GET /echo HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Cookie: \r\n" +
			"\r\n"),
		Judge: survives("2xx|400"),
	},
	{ // docs: cookies/malformed.md
		ID:          "COOK-MALFORMED",
		Category:    Cookies,
		Level:       Unscored,
		Requirement: "N/A",
		Expected:    "2xx or 400",
		Scored:      false,
		Steps: send("GET /echo HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Cookie: ===;;;\r\n" +
			"\r\n"),
		Judge: survives("2xx|400"),
	},
	{ // docs: cookies/many-pairs.md
		ID:          "COOK-MANY-PAIRS",
		Category:    Cookies,
		Level:       Unscored,
		Requirement: "N/A",
		Expected:    "2xx or 400/431",
		Scored:      false,
		Steps: send("GET /echo HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Cookie: " + numbered("k%[1]d=v%[1]d", "; ", 1000) + "\r\n" +
			"\r\n"),
		Judge: survives("2xx|400|431|close"),
	},
	{ // docs: cookies/multi-header.md
		ID:          "COOK-MULTI-HEADER",
		Category:    Cookies,
		Level:       Unscored,
		Requirement: "N/A",
		Expected:    "2xx with both cookies",
		Scored:      false,
		Steps: send("GET /echo HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Cookie: a=1\r\n" +
			"Cookie: b=2\r\n" +
			"\r\n"),
		Judge: cookieMultiHeader(),
	},
	{ // docs: cookies/nul.md
		ID:          "COOK-NUL",
		Category:    Cookies,
		Level:       Unscored,
		Requirement: "N/A",
		Expected:    "400 (rejected) or 2xx without NUL",
		Scored:      false,
		Steps: send("GET /echo HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Cookie: foo=\x00bar\r\n" +
			"\r\n"),
		Judge: cookieStripped("\x00"),
	},
	{ // docs: cookies/oversized.md
		ID:          "COOK-OVERSIZED",
		Category:    Cookies,
		Level:       Unscored,
		Requirement: "N/A",
		Expected:    "400/431 (rejected) or 2xx (survived)",
		Scored:      false,
		Steps: send("GET /echo HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Cookie: big=" + strings.Repeat("A", 65_536) + "\r\n" +
			"\r\n"),
		Judge: survives("2xx|400|431|close"),
	},
	{ // docs: cookies/parsed-basic.md
		ID:          "COOK-PARSED-BASIC",
		Category:    Cookies,
		Level:       Unscored,
		Requirement: "N/A",
		Expected:    "2xx with foo=bar in body",
		Scored:      false,
		Steps: send("GET /cookie HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Cookie: foo=bar\r\n" +
			"\r\n"),
		Judge: cookieParsed(true, "foo=bar"),
	},
	{ // docs: cookies/parsed-empty-val.md
		ID:          "COOK-PARSED-EMPTY-VAL",
		Category:    Cookies,
		Level:       Unscored,
		Requirement: "N/A",
		Expected:    "2xx (no crash)",
		Scored:      false,
		Steps: send("GET /cookie HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Cookie: foo=\r\n" +
			"\r\n"),
		Judge: cookieParsed(false),
	},
	{ // docs: cookies/parsed-multi.md
		ID:          "COOK-PARSED-MULTI",
		Category:    Cookies,
		Level:       Unscored,
		Requirement: "N/A",
		Expected:    "2xx with a=1, b=2, c=3 in body",
		Scored:      false,
		Steps: send("GET /cookie HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Cookie: a=1; b=2; c=3\r\n" +
			"\r\n"),
		Judge: cookieParsed(true, "a=1", "b=2", "c=3"),
	},
	{ // docs: cookies/parsed-special.md
		ID:          "COOK-PARSED-SPECIAL",
		Category:    Cookies,
		Level:       Unscored,
		Requirement: "N/A",
		Expected:    "2xx (no crash)",
		Scored:      false,
		Steps: send("GET /cookie HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Cookie: a=hello world; b=x=y\r\n" +
			"\r\n"),
		Judge: cookieParsed(false),
	},
}
