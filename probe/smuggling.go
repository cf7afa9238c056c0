package probe

import "strings"

// smugglingChecks are the request-smuggling checks, in the order of the Http11Probe documentation.
var smugglingChecks = []Check{
	{ // docs: smuggling/absolute-uri-host-mismatch.md
		ID:          "SMUG-ABSOLUTE-URI-HOST-MISMATCH",
		Category:    Smuggling,
		RFC:         "RFC 9112 §3.2.2",
		Level:       Unscored,
		Requirement: "Unscored",
		Expected:    "400 or 2xx",
		Scored:      false,
		Steps: send("GET http://other.example.com/ HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/bare-cr-header-value.md
		ID:          "SMUG-BARE-CR-HEADER-VALUE",
		Category:    Smuggling,
		RFC:         "RFC 9112 §2.2",
		Level:       Must,
		Requirement: "MUST reject or replace with SP",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 5\r\n" +
			"X-Test: val\rue\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/chunk-bare-cr-term.md
		ID:          "SMUG-CHUNK-BARE-CR-TERM",
		Category:    Smuggling,
		RFC:         "RFC 9112 §2.2",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"5\rhello\r\n" +
			"0\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/chunk-bare-semicolon.md
		ID:          "SMUG-CHUNK-BARE-SEMICOLON",
		Category:    Smuggling,
		RFC:         "RFC 9112 §7.1.1",
		Level:       Must,
		Requirement: "MUST reject",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"5;\r\n" +
			"hello\r\n" +
			"0\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/chunk-ext-cr.md
		ID:          "SMUG-CHUNK-EXT-CR",
		Category:    Smuggling,
		RFC:         "RFC 9112 §7.1.1, RFC 9112 §2.2",
		Level:       Must,
		Requirement: "MUST reject malformed chunk line",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"5;a\rX\r\n" +
			"hello\r\n" +
			"0\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/chunk-ext-ctrl.md
		ID:          "SMUG-CHUNK-EXT-CTRL",
		Category:    Smuggling,
		RFC:         "RFC 9112 §7.1.1",
		Level:       Must,
		Requirement: "MUST reject",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"5;\x00ext\r\n" +
			"hello\r\n" +
			"0\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/chunk-ext-invalid-token.md
		ID:          "SMUG-CHUNK-EXT-INVALID-TOKEN",
		Category:    Smuggling,
		RFC:         "RFC 9112 §7.1.1",
		Level:       Must,
		Requirement: "Implicit MUST (grammar violation)",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"5;bad[=x\r\n" +
			"hello\r\n" +
			"0\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/chunk-ext-lf.md
		ID:          "SMUG-CHUNK-EXT-LF",
		Category:    Smuggling,
		RFC:         "RFC 9112 §7.1.1",
		Level:       May,
		Requirement: "MAY accept bare LF",
		Expected:    "400 or 2xx",
		Scored:      false,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"5;\n" +
			"hello\r\n" +
			"0\r\n" +
			"\r\n"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/chunk-hex-prefix.md
		ID:          "SMUG-CHUNK-HEX-PREFIX",
		Category:    Smuggling,
		RFC:         "RFC 9112 §7.1",
		Level:       Must,
		Requirement: "MUST reject",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"0x5\r\n" +
			"hello\r\n" +
			"0\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/chunk-invalid-size-desync.md
		ID:          "SMUG-CHUNK-INVALID-SIZE-DESYNC",
		Category:    Smuggling,
		RFC:         "RFC 9112 §7.1",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send(
			"POST / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"Transfer-Encoding: chunked\r\n"+
				"\r\n"+
				"+0\r\n"+
				"\r\n"+
				"X",
			"GET / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"\r\n",
		),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/chunk-leading-sp.md
		ID:          "SMUG-CHUNK-LEADING-SP",
		Category:    Smuggling,
		RFC:         "RFC 9112 §7.1",
		Level:       Must,
		Requirement: "MUST reject",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			" 5\r\n" +
			"hello\r\n" +
			"0\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/chunk-lf-term.md
		ID:          "SMUG-CHUNK-LF-TERM",
		Category:    Smuggling,
		RFC:         "RFC 9112 §7.1",
		Level:       May,
		Requirement: "MAY accept bare LF",
		Expected:    "400 or 2xx",
		Scored:      false,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"5\r\n" +
			"hello\n" +
			"0\r\n" +
			"\r\n"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/chunk-lf-trailer.md
		ID:          "SMUG-CHUNK-LF-TRAILER",
		Category:    Smuggling,
		RFC:         "RFC 9112 §7.1",
		Level:       May,
		Requirement: "MAY accept bare LF",
		Expected:    "400 or 2xx",
		Scored:      false,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"5\r\n" +
			"hello\r\n" +
			"0\r\n" +
			"\n"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/chunk-missing-trailing-crlf.md
		ID:          "SMUG-CHUNK-MISSING-TRAILING-CRLF",
		Category:    Smuggling,
		RFC:         "RFC 9112 §7.1",
		Level:       Must,
		Requirement: "MUST reject",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"5\r\n" +
			"hello0\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/chunk-negative.md
		ID:          "SMUG-CHUNK-NEGATIVE",
		Category:    Smuggling,
		RFC:         "RFC 9112 §7.1",
		Level:       Must,
		Requirement: "MUST reject",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"-1\r\n" +
			"hello\r\n" +
			"0\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/chunk-size-plus.md
		ID:          "SMUG-CHUNK-SIZE-PLUS",
		Category:    Smuggling,
		RFC:         "RFC 9112 §7.1",
		Level:       Must,
		Requirement: "Implicit MUST (grammar violation)",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"+5\r\n" +
			"hello\r\n" +
			"0\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/chunk-size-trailing-ows.md
		ID:          "SMUG-CHUNK-SIZE-TRAILING-OWS",
		Category:    Smuggling,
		RFC:         "RFC 9112 §7.1",
		Level:       Must,
		Requirement: "Implicit MUST (grammar violation)",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"5 \r\n" +
			"hello\r\n" +
			"0\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/chunk-spill.md
		ID:          "SMUG-CHUNK-SPILL",
		Category:    Smuggling,
		RFC:         "RFC 9112 §7.1",
		Level:       Must,
		Requirement: "MUST reject",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"5\r\n" +
			"hello!!\r\n" +
			"0\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/chunk-underscore.md
		ID:          "SMUG-CHUNK-UNDERSCORE",
		Category:    Smuggling,
		RFC:         "RFC 9112 §7.1",
		Level:       Must,
		Requirement: "MUST reject",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"1_0\r\n" +
			"hello world!!!!!\r\n" +
			"0\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/chunked-with-params.md
		ID:          "SMUG-CHUNKED-WITH-PARAMS",
		Category:    Smuggling,
		RFC:         "RFC 9112 §7.1",
		Level:       Unscored,
		Requirement: "Unscored",
		Expected:    "400 or 2xx",
		Scored:      false,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked;ext=val\r\n" +
			"Content-Length: 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/cl-comma-different.md
		ID:          "SMUG-CL-COMMA-DIFFERENT",
		Category:    Smuggling,
		RFC:         "RFC 9110 Section 8.6",
		Level:       Must,
		Requirement: "MUST reject",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 5, 10\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/cl-comma-same.md
		ID:          "SMUG-CL-COMMA-SAME",
		Category:    Smuggling,
		RFC:         "RFC 9110 Section 8.6",
		Level:       Unscored,
		Requirement: "Unscored",
		Expected:    "400 or 2xx",
		Scored:      false,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 5, 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/cl-comma-triple.md
		ID:          "SMUG-CL-COMMA-TRIPLE",
		Category:    Smuggling,
		RFC:         "RFC 9110 §8.6",
		Level:       Unscored,
		Requirement: "Unscored",
		Expected:    "400 or 2xx",
		Scored:      false,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 5, 5, 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/cl-double-zero.md
		ID:          "SMUG-CL-DOUBLE-ZERO",
		Category:    Smuggling,
		RFC:         "RFC 9110 §8.6",
		Level:       Should,
		Requirement: "SHOULD",
		Expected:    "400 or 2xx",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 00\r\n" +
			"\r\n"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/cl-extra-leading-sp.md
		ID:          "SMUG-CL-EXTRA-LEADING-SP",
		Category:    Smuggling,
		RFC:         "RFC 9112 §5",
		Level:       Should,
		Requirement: "SHOULD",
		Expected:    "400 or 2xx",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length:  5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/cl-hex-prefix.md
		ID:          "SMUG-CL-HEX-PREFIX",
		Category:    Smuggling,
		RFC:         "RFC 9110 Section 8.6",
		Level:       Must,
		Requirement: "MUST reject",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 0x5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/cl-internal-space.md
		ID:          "SMUG-CL-INTERNAL-SPACE",
		Category:    Smuggling,
		RFC:         "RFC 9110 Section 8.6",
		Level:       Must,
		Requirement: "MUST reject",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 1 0\r\n" +
			"\r\n" +
			"hello12345"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/cl-leading-zeros-octal.md
		ID:          "SMUG-CL-LEADING-ZEROS-OCTAL",
		Category:    Smuggling,
		RFC:         "RFC 9110 §8.6",
		Level:       Should,
		Requirement: "SHOULD",
		Expected:    "400 or 2xx",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 0200\r\n" +
			"\r\n" +
			strings.Repeat("A", 200)),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/cl-leading-zeros.md
		ID:          "SMUG-CL-LEADING-ZEROS",
		Category:    Smuggling,
		RFC:         "RFC 9110 §8.6",
		Level:       Should,
		Requirement: "SHOULD",
		Expected:    "400 or 2xx",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 005\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/cl-negative-zero.md
		ID:          "SMUG-CL-NEGATIVE-ZERO",
		Category:    Smuggling,
		RFC:         "RFC 9110 §8.6",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: -0\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/cl-negative.md
		ID:          "SMUG-CL-NEGATIVE",
		Category:    Smuggling,
		RFC:         "RFC 9110 Section 8.6",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: -1\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/cl-octal.md
		ID:          "SMUG-CL-OCTAL",
		Category:    Smuggling,
		RFC:         "RFC 9110 Section 8.6",
		Level:       Must,
		Requirement: "MUST reject",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 0o5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/cl-te-both.md
		ID:          "SMUG-CL-TE-BOTH",
		Category:    Smuggling,
		RFC:         "RFC 9112 §6.1",
		Level:       OughtTo,
		Requirement: "\"ought to\" handle as error",
		Expected:    "400 or 2xx",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 23\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"D\r\n" +
			"hello-bananas\r\n" +
			"0\r\n" +
			"\r\n"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/cl-trailing-space.md
		ID:          "SMUG-CL-TRAILING-SPACE",
		Category:    Smuggling,
		RFC:         "RFC 9112 §5",
		Level:       Should,
		Requirement: "SHOULD",
		Expected:    "400 or 2xx",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 5 \r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/cl-underscore.md
		ID:          "SMUG-CL-UNDERSCORE",
		Category:    Smuggling,
		RFC:         "RFC 9110 §8.6",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 1_0\r\n" +
			"\r\n" +
			"helloworld"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/cl0-body-poison.md
		ID:          "SMUG-CL0-BODY-POISON",
		Category:    Smuggling,
		RFC:         "RFC 9112 §6.2",
		Level:       Unscored,
		Requirement: "Unscored",
		Expected:    "400/close preferred; poisoned follow-up = warn",
		Scored:      false,
		Steps: send(
			"POST / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"Content-Length: 0\r\n"+
				"\r\n"+
				"X",
			"GET / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"\r\n",
		),
		Judge: poisonedFollowUp(),
	},
	{ // docs: smuggling/clte-conn-close.md
		ID:          "SMUG-CLTE-CONN-CLOSE",
		Category:    Smuggling,
		RFC:         "RFC 9112 §6.1",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400, or 2xx + connection close",
		Scored:      true,
		Steps: send(
			"POST / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"Content-Length: 5\r\n"+
				"Transfer-Encoding: chunked\r\n"+
				"\r\n"+
				"0\r\n"+
				"\r\n",
			"GET / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"\r\n",
		),
		Judge: mustCloseAfter(),
	},
	{ // docs: smuggling/clte-desync.md
		ID:          "SMUG-CLTE-DESYNC",
		Category:    Smuggling,
		RFC:         "RFC 9112 §6.1",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400, or connection close",
		Scored:      true,
		Steps: send(
			"POST / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"Content-Length: 6\r\n"+
				"Transfer-Encoding: chunked\r\n"+
				"\r\n"+
				"0\r\n"+
				"\r\n"+
				"X",
			"GET / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"\r\n",
		),
		Judge: mustCloseAfter(),
	},
	{ // docs: smuggling/clte-pipeline.md
		ID:          "SMUG-CLTE-PIPELINE",
		Category:    Smuggling,
		RFC:         "RFC 9112 §6.1",
		Level:       Must,
		Requirement: "MAY",
		Expected:    "400 or close preferred; 2xx acceptable",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 4\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"0\r\n" +
			"\r\n"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/clte-smuggled-get-cl-non-numeric.md
		ID:          "SMUG-CLTE-SMUGGLED-GET-CL-NON-NUMERIC",
		Category:    Smuggling,
		RFC:         "RFC 9112 §6.1",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400, or connection close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 45x\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"0\r\n" +
			"\r\n" +
			"GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: noSmuggledResponse(),
	},
	{ // docs: smuggling/clte-smuggled-get-cl-plus.md
		ID:          "SMUG-CLTE-SMUGGLED-GET-CL-PLUS",
		Category:    Smuggling,
		RFC:         "RFC 9112 §6.1",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400, or connection close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: +45\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"0\r\n" +
			"\r\n" +
			"GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: noSmuggledResponse(),
	},
	{ // docs: smuggling/clte-smuggled-get-te-case-mismatch.md
		ID:          "SMUG-CLTE-SMUGGLED-GET-TE-CASE-MISMATCH",
		Category:    Smuggling,
		RFC:         "RFC 9112 §6.1",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400, or connection close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 45\r\n" +
			"Transfer-Encoding: Chunked\r\n" +
			"\r\n" +
			"0\r\n" +
			"\r\n" +
			"GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: noSmuggledResponse(),
	},
	{ // docs: smuggling/clte-smuggled-get-te-leading-comma.md
		ID:          "SMUG-CLTE-SMUGGLED-GET-TE-LEADING-COMMA",
		Category:    Smuggling,
		RFC:         "RFC 9112 §6.1",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400, or connection close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 45\r\n" +
			"Transfer-Encoding: , chunked\r\n" +
			"\r\n" +
			"0\r\n" +
			"\r\n" +
			"GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: noSmuggledResponse(),
	},
	{ // docs: smuggling/clte-smuggled-get-te-obs-fold.md
		ID:          "SMUG-CLTE-SMUGGLED-GET-TE-OBS-FOLD",
		Category:    Smuggling,
		RFC:         "RFC 9112 §5.2, RFC 9112 §6.1",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400, or connection close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding:\r\n" +
			" chunked\r\n" +
			"Content-Length: 45\r\n" +
			"\r\n" +
			"0\r\n" +
			"\r\n" +
			"GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: noSmuggledResponse(),
	},
	{ // docs: smuggling/clte-smuggled-get-te-trailing-space.md
		ID:          "SMUG-CLTE-SMUGGLED-GET-TE-TRAILING-SPACE",
		Category:    Smuggling,
		RFC:         "RFC 9112 §6.1",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400, or connection close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 45\r\n" +
			"Transfer-Encoding: chunked \r\n" +
			"\r\n" +
			"0\r\n" +
			"\r\n" +
			"GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: noSmuggledResponse(),
	},
	{ // docs: smuggling/clte-smuggled-get.md
		ID:          "SMUG-CLTE-SMUGGLED-GET",
		Category:    Smuggling,
		RFC:         "RFC 9112 §6.1",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400, or connection close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 45\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"0\r\n" +
			"\r\n" +
			"GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: noSmuggledResponse(),
	},
	{ // docs: smuggling/clte-smuggled-head.md
		ID:          "SMUG-CLTE-SMUGGLED-HEAD",
		Category:    Smuggling,
		RFC:         "RFC 9112 §6.1",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400, or connection close",
		Scored:      true,
		Steps: []Step{{Methods: []string{"POST", "HEAD"}, Request: []byte("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 46\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"0\r\n" +
			"\r\n" +
			"HEAD / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n")}},
		Judge: noSmuggledResponse(),
	},
	{ // docs: smuggling/duplicate-cl-smuggled-get.md
		ID:          "SMUG-DUPLICATE-CL-SMUGGLED-GET",
		Category:    Smuggling,
		RFC:         "RFC 9110 §8.6",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400, or connection close",
		Scored:      true,
		Steps: send(withBody("POST / HTTP/1.1\r\n"+
			"Host: localhost:8080\r\n"+
			"Content-Length: 4\r\n"+
			"Content-Length: %d\r\n"+
			"\r\n",
			"PING"+smuggledGET)),
		Judge: noSmuggledResponse(),
	},
	{ // docs: smuggling/duplicate-cl.md
		ID:          "SMUG-DUPLICATE-CL",
		Category:    Smuggling,
		RFC:         "RFC 9110 Section 8.6",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 5\r\n" +
			"Content-Length: 10\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/expect-100-cl-desync.md
		ID:          "SMUG-EXPECT-100-CL-DESYNC",
		Category:    Smuggling,
		RFC:         "RFC 9110 §10.1.1",
		Level:       Unscored,
		Requirement: "Unscored",
		Expected:    "417/400/close preferred; poisoned follow-up = warn",
		Scored:      false,
		Steps: send(
			"POST / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"Content-Length: 5\r\n"+
				"Expect: 100-continue\r\n"+
				"\r\n"+
				"hello",
			"GET / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"\r\n",
		),
		Judge: poisonedFollowUp(417),
	},
	{ // docs: smuggling/expect-100-cl.md
		ID:          "SMUG-EXPECT-100-CL",
		Category:    Smuggling,
		RFC:         "RFC 9110 §10.1.1",
		Level:       Unscored,
		Requirement: "Unscored",
		Expected:    "400 or 2xx",
		Scored:      false,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 5\r\n" +
			"Expect: 100-continue\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/get-cl-body-desync.md
		ID:          "SMUG-GET-CL-BODY-DESYNC",
		Category:    Smuggling,
		RFC:         "RFC 9110 §9.3.1",
		Level:       Unscored,
		Requirement: "Unscored",
		Expected:    "400/close/pass-through; poisoned follow-up = warn",
		Scored:      false,
		Steps: send(
			"GET / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"Content-Length: 5\r\n"+
				"\r\n"+
				"hello",
			"GET / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"\r\n",
		),
		Judge: poisonedFollowUp(),
	},
	{ // docs: smuggling/get-cl-prefix-desync.md
		ID:          "SMUG-GET-CL-PREFIX-DESYNC",
		Category:    Smuggling,
		RFC:         "RFC 9110 §9.3.1",
		Level:       Unscored,
		Requirement: "MAY",
		Expected:    "400/close preferred; extra response on step 2 = warn",
		Scored:      false,
		Steps: send(withBody("GET / HTTP/1.1\r\n"+
			"Host: localhost:8080\r\n"+
			"Content-Length: %d\r\n"+
			"\r\n",
			"GET / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"),
			"\r\n"+smuggledGET),
		Judge: poisonedFollowUp(),
	},
	{ // docs: smuggling/head-cl-body.md
		ID:          "SMUG-HEAD-CL-BODY",
		Category:    Smuggling,
		RFC:         "RFC 9110 §9.3.2",
		Level:       Unscored,
		Requirement: "Unscored",
		Expected:    "400 or 2xx",
		Scored:      false,
		Steps: send("HEAD / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/multiple-host-comma.md
		ID:          "SMUG-MULTIPLE-HOST-COMMA",
		Category:    Smuggling,
		RFC:         "RFC 9110 §7.2",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("GET / HTTP/1.1\r\n" +
			"Host: localhost:8080, other.example.com\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/options-cl-body-desync.md
		ID:          "SMUG-OPTIONS-CL-BODY-DESYNC",
		Category:    Smuggling,
		RFC:         "RFC 9110 §9.3.7",
		Level:       Unscored,
		Requirement: "Unscored",
		Expected:    "400/close/pass-through; poisoned follow-up = warn",
		Scored:      false,
		Steps: send(
			"OPTIONS / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"Content-Length: 5\r\n"+
				"\r\n"+
				"hello",
			"GET / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"\r\n",
		),
		Judge: poisonedFollowUp(),
	},
	{ // docs: smuggling/options-cl-body.md
		ID:          "SMUG-OPTIONS-CL-BODY",
		Category:    Smuggling,
		RFC:         "RFC 9110 §9.3.7",
		Level:       Unscored,
		Requirement: "Unscored",
		Expected:    "400 or 2xx",
		Scored:      false,
		Steps: send("OPTIONS / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/options-te-obs-fold.md
		ID:          "SMUG-OPTIONS-TE-OBS-FOLD",
		Category:    Smuggling,
		RFC:         "RFC 9112 §5.2",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400 or 2xx + close",
		Scored:      true,
		Steps: send(
			"OPTIONS / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"Transfer-Encoding:\r\n"+
				" chunked\r\n"+
				"Content-Length: 5\r\n"+
				"\r\n"+
				"hello",
			"GET / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"\r\n",
		),
		Judge: mustCloseAfter(),
	},
	{ // docs: smuggling/pipeline-safe.md
		ID:          "SMUG-PIPELINE-SAFE",
		Category:    Smuggling,
		RFC:         "RFC 9112 §9.3",
		Level:       Unscored,
		Requirement: "SHOULD",
		Expected:    "2xx + 2xx",
		Scored:      false,
		Steps: send(
			"GET / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"\r\n",
			"GET / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"\r\n",
		),
		Judge: pipelineSafe(),
	},
	{ // docs: smuggling/te-case-mismatch.md
		ID:          "SMUG-TE-CASE-MISMATCH",
		Category:    Smuggling,
		RFC:         "RFC 9112 §6.1",
		Level:       Should,
		Requirement: "SHOULD",
		Expected:    "400 or 2xx",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: Chunked\r\n" +
			"Content-Length: 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/te-double-chunked.md
		ID:          "SMUG-TE-DOUBLE-CHUNKED",
		Category:    Smuggling,
		RFC:         "RFC 9112 §6.1",
		Level:       Should,
		Requirement: "SHOULD",
		Expected:    "400 or 2xx",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked, chunked\r\n" +
			"Content-Length: 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/te-duplicate-headers-smuggled-get.md
		ID:          "SMUG-TE-DUPLICATE-HEADERS-SMUGGLED-GET",
		Category:    Smuggling,
		RFC:         "RFC 9112 §6.1",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400, or connection close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"Transfer-Encoding: identity\r\n" +
			"Content-Length: 45\r\n" +
			"\r\n" +
			"0\r\n" +
			"\r\n" +
			"GET / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"\r\n"),
		Judge: noSmuggledResponse(),
	},
	{ // docs: smuggling/te-duplicate-headers.md
		ID:          "SMUG-TE-DUPLICATE-HEADERS",
		Category:    Smuggling,
		RFC:         "RFC 9112 Section 6.1",
		Level:       Must,
		Requirement: "MUST reject",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"Transfer-Encoding: identity\r\n" +
			"Content-Length: 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/te-empty-value.md
		ID:          "SMUG-TE-EMPTY-VALUE",
		Category:    Smuggling,
		RFC:         "RFC 9112 Section 6.1",
		Level:       Must,
		Requirement: "MUST reject",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: \r\n" +
			"Content-Length: 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/te-formfeed.md
		ID:          "SMUG-TE-FORMFEED",
		Category:    Smuggling,
		RFC:         "RFC 9110 §5.5, RFC 9112 §6.1",
		Level:       Must,
		Requirement: "MUST reject invalid transfer-coding token",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: \x0cchunked\r\n" +
			"Content-Length: 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/te-http10.md
		ID:          "SMUG-TE-HTTP10",
		Category:    Smuggling,
		RFC:         "RFC 9112 Section 6.1",
		Level:       Must,
		Requirement: "MUST reject",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.0\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"Content-Length: 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/te-identity.md
		ID:          "SMUG-TE-IDENTITY",
		Category:    Smuggling,
		RFC:         "RFC 9112 §6.1",
		Level:       Must,
		Requirement: "MUST reject",
		Expected:    "400/501 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: identity\r\n" +
			"Content-Length: 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|501|close", ""),
	},
	{ // docs: smuggling/te-leading-comma.md
		ID:          "SMUG-TE-LEADING-COMMA",
		Category:    Smuggling,
		RFC:         "RFC 9110 §5.6.1",
		Level:       Should,
		Requirement: "SHOULD",
		Expected:    "400 or 2xx",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: , chunked\r\n" +
			"Content-Length: 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/te-not-final-chunked.md
		ID:          "SMUG-TE-NOT-FINAL-CHUNKED",
		Category:    Smuggling,
		RFC:         "RFC 9112 §6.3",
		Level:       Must,
		Requirement: "MUST reject",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked, gzip\r\n" +
			"\r\n" +
			"0\r\n" +
			"\r\n"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/te-null.md
		ID:          "SMUG-TE-NULL",
		Category:    Smuggling,
		RFC:         "RFC 9110 §5.5, RFC 9112 §6.1",
		Level:       Must,
		Requirement: "MUST reject malformed field value",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\x00\r\n" +
			"Content-Length: 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/te-obs-fold.md
		ID:          "SMUG-TE-OBS-FOLD",
		Category:    Smuggling,
		RFC:         "RFC 9112 §5.2",
		Level:       Must,
		Requirement: "MUST reject or unfold obs-fold",
		Expected:    "400, or 2xx with connection close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding:\r\n" +
			" chunked\r\n" +
			"Content-Length: 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: rejectOrClosed2xx(Warn),
	},
	{ // docs: smuggling/te-sp-before-colon.md
		ID:          "SMUG-TE-SP-BEFORE-COLON",
		Category:    Smuggling,
		RFC:         "RFC 9112 §5.1",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding : chunked\r\n" +
			"Content-Length: 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/te-tab-before-value.md
		ID:          "SMUG-TE-TAB-BEFORE-VALUE",
		Category:    Smuggling,
		RFC:         "RFC 9110 §5.6.3",
		Level:       Unscored,
		Requirement: "Unscored",
		Expected:    "400 or 2xx",
		Scored:      false,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding:\tchunked\r\n" +
			"Content-Length: 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/te-trailing-comma.md
		ID:          "SMUG-TE-TRAILING-COMMA",
		Category:    Smuggling,
		RFC:         "RFC 9110 §5.6.1",
		Level:       Should,
		Requirement: "SHOULD",
		Expected:    "400 or 2xx",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked,\r\n" +
			"Content-Length: 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/te-trailing-space.md
		ID:          "SMUG-TE-TRAILING-SPACE",
		Category:    Smuggling,
		RFC:         "RFC 9110 §5.5, RFC 9112 §6.1",
		Level:       Must,
		Requirement: "MAY reject or process with TE; MUST close connection if CL+TE is processed",
		Expected:    "400/501, or 2xx with connection close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked \r\n" +
			"Content-Length: 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: rejectOrClosed2xx(Warn, 501),
	},
	{ // docs: smuggling/te-vtab.md
		ID:          "SMUG-TE-VTAB",
		Category:    Smuggling,
		RFC:         "RFC 9110 §5.5, RFC 9112 §6.1",
		Level:       Must,
		Requirement: "MUST reject invalid transfer-coding token",
		Expected:    "400 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: \x0bchunked\r\n" +
			"Content-Length: 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", ""),
	},
	{ // docs: smuggling/te-xchunked.md
		ID:          "SMUG-TE-XCHUNKED",
		Category:    Smuggling,
		RFC:         "RFC 9112 §6.1",
		Level:       Must,
		Requirement: "MUST reject",
		Expected:    "400/501 or close",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: xchunked\r\n" +
			"Content-Length: 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|501|close", ""),
	},
	{ // docs: smuggling/tecl-conn-close.md
		ID:          "SMUG-TECL-CONN-CLOSE",
		Category:    Smuggling,
		RFC:         "RFC 9112 §6.1",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400, or 2xx + connection close",
		Scored:      true,
		Steps: send(
			"POST / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"Transfer-Encoding: chunked\r\n"+
				"Content-Length: 5\r\n"+
				"\r\n"+
				"0\r\n"+
				"\r\n",
			"GET / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"\r\n",
		),
		Judge: mustCloseAfter(),
	},
	{ // docs: smuggling/tecl-desync.md
		ID:          "SMUG-TECL-DESYNC",
		Category:    Smuggling,
		RFC:         "RFC 9112 §6.1",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400, or connection close",
		Scored:      true,
		Steps: send(
			"POST / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"Transfer-Encoding: chunked\r\n"+
				"Content-Length: 30\r\n"+
				"\r\n"+
				"0\r\n"+
				"\r\n"+
				"X",
			"GET / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"\r\n",
		),
		Judge: mustCloseAfter(),
	},
	{ // docs: smuggling/tecl-pipeline.md
		ID:          "SMUG-TECL-PIPELINE",
		Category:    Smuggling,
		RFC:         "RFC 9112 §6.1",
		Level:       Must,
		Requirement: "MAY",
		Expected:    "400 or close preferred; 2xx acceptable",
		Scored:      true,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"Content-Length: 30\r\n" +
			"\r\n" +
			"0\r\n" +
			"\r\n"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/tecl-smuggled-get.md
		ID:          "SMUG-TECL-SMUGGLED-GET",
		Category:    Smuggling,
		RFC:         "RFC 9112 §6.1",
		Level:       Must,
		Requirement: "MUST",
		Expected:    "400, or connection close",
		Scored:      true,
		Steps:       send(teclSmuggledGET()),
		Judge:       noSmuggledResponse(),
	},
	{ // docs: smuggling/trailer-auth.md
		ID:          "SMUG-TRAILER-AUTH",
		Category:    Smuggling,
		RFC:         "RFC 9110 §6.5.1",
		Level:       Unscored,
		Requirement: "Unscored",
		Expected:    "400 or 2xx",
		Scored:      false,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"5\r\n" +
			"hello\r\n" +
			"0\r\n" +
			"Authorization: Bearer evil\r\n" +
			"\r\n"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/trailer-cl.md
		ID:          "SMUG-TRAILER-CL",
		Category:    Smuggling,
		RFC:         "RFC 9110 §6.5.1",
		Level:       Unscored,
		Requirement: "Unscored",
		Expected:    "400 or 2xx",
		Scored:      false,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"5\r\n" +
			"hello\r\n" +
			"0\r\n" +
			"Content-Length: 50\r\n" +
			"\r\n"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/trailer-content-type.md
		ID:          "SMUG-TRAILER-CONTENT-TYPE",
		Category:    Smuggling,
		RFC:         "RFC 9110 §6.5.1",
		Level:       Unscored,
		Requirement: "Unscored",
		Expected:    "400 or 2xx",
		Scored:      false,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"5\r\n" +
			"hello\r\n" +
			"0\r\n" +
			"Content-Type: text/evil\r\n" +
			"\r\n"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/trailer-host.md
		ID:          "SMUG-TRAILER-HOST",
		Category:    Smuggling,
		RFC:         "RFC 9110 §6.5.2",
		Level:       Unscored,
		Requirement: "Unscored",
		Expected:    "400 or 2xx",
		Scored:      false,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"5\r\n" +
			"hello\r\n" +
			"0\r\n" +
			"Host: evil.example.com\r\n" +
			"\r\n"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/trailer-te.md
		ID:          "SMUG-TRAILER-TE",
		Category:    Smuggling,
		RFC:         "RFC 9110 §6.5.1",
		Level:       Unscored,
		Requirement: "Unscored",
		Expected:    "400 or 2xx",
		Scored:      false,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n" +
			"5\r\n" +
			"hello\r\n" +
			"0\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"\r\n"),
		Judge: expect("400|close", "2xx"),
	},
	{ // docs: smuggling/transfer-encoding-underscore.md
		ID:          "SMUG-TRANSFER_ENCODING",
		Category:    Smuggling,
		RFC:         "RFC 9112 Section 6.1",
		Level:       Unscored,
		Requirement: "Unscored",
		Expected:    "400 or 2xx",
		Scored:      false,
		Steps: send("POST / HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Transfer_Encoding: chunked\r\n" +
			"Content-Length: 5\r\n" +
			"\r\n" +
			"hello"),
		Judge: expect("400|close", "2xx"),
	},
}
