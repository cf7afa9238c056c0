package probe

// normalizationChecks are the header-normalisation checks, in the order of the Http11Probe documentation.
var normalizationChecks = []Check{
	{ // docs: normalization/case-te.md
		ID:       "NORM-CASE-TE",
		Category: Normalization,
		Level:    Unscored,
		Expected: "Reject/drop (pass), normalize casing (fail), preserve (warn)",
		Scored:   false,
		Steps: send("POST /echo HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 11\r\n" +
			"TRANSFER-ENCODING: chunked\r\n" +
			"\r\n" +
			"hello world"),
		Judge: caseNormalized("TRANSFER-ENCODING", "chunked"),
	},
	{ // docs: normalization/sp-before-colon-cl.md
		ID:          "NORM-SP-BEFORE-COLON-CL",
		Category:    Normalization,
		RFC:         "RFC 9112 §5",
		Level:       Must,
		Requirement: "MUST reject",
		Expected:    "Reject/drop (pass), normalize (fail), preserve (warn)",
		Scored:      true,
		Steps: send("POST /echo HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 11\r\n" +
			"Content-Length : 5\r\n" +
			"\r\n" +
			"hello world"),
		Judge: normalized("Content-Length ", "Content-Length", "5"),
	},
	{ // docs: normalization/tab-in-name.md
		ID:          "NORM-TAB-IN-NAME",
		Category:    Normalization,
		Level:       Must,
		Requirement: "MUST reject (invalid token character)",
		Expected:    "Reject/drop (pass), normalize (fail), preserve (warn)",
		Scored:      true,
		Steps: send("POST /echo HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 11\r\n" +
			"Content\tLength: 99\r\n" +
			"\r\n" +
			"hello world"),
		Judge: normalized("Content\tLength", "Content-Length", "99"),
	},
	{ // docs: normalization/underscore-cl.md
		ID:          "NORM-UNDERSCORE-CL",
		Category:    Normalization,
		Level:       NotApplicable,
		Requirement: "Drop or reject",
		Expected:    "Reject/drop (pass), normalize (fail), preserve (warn)",
		Scored:      true,
		Steps: send("POST /echo HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 11\r\n" +
			"Content_Length: 99\r\n" +
			"\r\n" +
			"hello world"),
		Judge: normalized("Content_Length", "Content-Length", "99"),
	},
	{ // docs: normalization/underscore-te.md
		ID:          "NORM-UNDERSCORE-TE",
		Category:    Normalization,
		Level:       NotApplicable,
		Requirement: "Drop or reject",
		Expected:    "Reject/drop (pass), normalize (fail), preserve (warn)",
		Scored:      true,
		Steps: send("POST /echo HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Length: 11\r\n" +
			"Transfer_Encoding: chunked\r\n" +
			"\r\n" +
			"hello world"),
		Judge: normalized("Transfer_Encoding", "Transfer-Encoding", "chunked"),
	},
}
