package probe

// capabilityChecks are the caching-capability checks, in the order of the Http11Probe documentation.
var capabilityChecks = []Check{
	{ // docs: caching/etag-304.md
		ID:          "CAP-ETAG-304",
		Category:    Capabilities,
		RFC:         "RFC 9110 §13.1.2",
		Level:       Unscored,
		Requirement: "SHOULD",
		Expected:    "304",
		Scored:      false,
		Steps: []Step{
			{Request: []byte("GET / HTTP/1.1\r\n" +
				"Host: localhost:8080\r\n" +
				"Connection: keep-alive\r\n" +
				"\r\n")},
			{Build: replayETag("")},
		},
		Judge: conditional(304),
	},
	{ // docs: caching/etag-in-304.md
		ID:          "CAP-ETAG-IN-304",
		Category:    Capabilities,
		RFC:         "RFC 9110 §15.4.5",
		Level:       Unscored,
		Requirement: "SHOULD",
		Expected:    "304 with ETag",
		Scored:      false,
		Steps: []Step{
			{Request: []byte("GET / HTTP/1.1\r\n" +
				"Host: localhost:8080\r\n" +
				"Connection: keep-alive\r\n" +
				"\r\n")},
			{Build: replayETag("")},
		},
		Judge: etagIn304(),
	},
	{ // docs: caching/etag-weak.md
		ID:          "CAP-ETAG-WEAK",
		Category:    Capabilities,
		RFC:         "RFC 9110 §13.1.2",
		Level:       Unscored,
		Requirement: "SHOULD",
		Expected:    "304",
		Scored:      false,
		Steps: []Step{
			{Request: []byte("GET / HTTP/1.1\r\n" +
				"Host: localhost:8080\r\n" +
				"Connection: keep-alive\r\n" +
				"\r\n")},
			{Build: replayETag("weak")},
		},
		Judge: conditional(304),
	},
	{ // docs: caching/ims-future.md
		ID:          "CAP-IMS-FUTURE",
		Category:    Capabilities,
		RFC:         "RFC 9110 §13.1.3",
		Level:       Unscored,
		Requirement: "SHOULD",
		Expected:    "200",
		Scored:      false,
		Steps: send(
			"GET / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"Connection: keep-alive\r\n"+
				"\r\n",
			"GET / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"If-Modified-Since: Thu, 01 Jan 2099 00:00:00 GMT\r\n"+
				"\r\n",
		),
		Judge: conditional(200),
	},
	{ // docs: caching/ims-invalid.md
		ID:          "CAP-IMS-INVALID",
		Category:    Capabilities,
		RFC:         "RFC 9110 §13.1.3",
		Level:       Unscored,
		Requirement: "SHOULD",
		Expected:    "200",
		Scored:      false,
		Steps: send(
			"GET / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"Connection: keep-alive\r\n"+
				"\r\n",
			"GET / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"If-Modified-Since: not-a-date\r\n"+
				"\r\n",
		),
		Judge: conditional(200),
	},
	{ // docs: caching/inm-precedence.md
		ID:          "CAP-INM-PRECEDENCE",
		Category:    Capabilities,
		RFC:         "RFC 9110 §13.1.2",
		Level:       Unscored,
		Requirement: "SHOULD",
		Expected:    "304",
		Scored:      false,
		Steps: []Step{
			{Request: []byte("GET / HTTP/1.1\r\n" +
				"Host: localhost:8080\r\n" +
				"Connection: keep-alive\r\n" +
				"\r\n")},
			{Build: replayETag("precedence")},
		},
		Judge: conditional(304),
	},
	{ // docs: caching/inm-unquoted.md
		ID:          "CAP-INM-UNQUOTED",
		Category:    Capabilities,
		RFC:         "RFC 9110 §8.8.3",
		Level:       Unscored,
		Requirement: "SHOULD",
		Expected:    "200",
		Scored:      false,
		Steps: []Step{
			{Request: []byte("GET / HTTP/1.1\r\n" +
				"Host: localhost:8080\r\n" +
				"Connection: keep-alive\r\n" +
				"\r\n")},
			{Build: replayETag("unquoted")},
		},
		Judge: conditional(200),
	},
	{ // docs: caching/inm-wildcard.md
		ID:          "CAP-INM-WILDCARD",
		Category:    Capabilities,
		RFC:         "RFC 9110 §13.1.2",
		Level:       Unscored,
		Requirement: "SHOULD",
		Expected:    "304",
		Scored:      false,
		Steps: send(
			"GET / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"Connection: keep-alive\r\n"+
				"\r\n",
			"GET / HTTP/1.1\r\n"+
				"Host: localhost:8080\r\n"+
				"If-None-Match: *\r\n"+
				"\r\n",
		),
		Judge: conditional(304),
	},
	{ // docs: caching/last-modified-304.md
		ID:          "CAP-LAST-MODIFIED-304",
		Category:    Capabilities,
		RFC:         "RFC 9110 §13.1.3",
		Level:       Unscored,
		Requirement: "SHOULD",
		Expected:    "304",
		Scored:      false,
		Steps: []Step{
			{Request: []byte("GET / HTTP/1.1\r\n" +
				"Host: localhost:8080\r\n" +
				"Connection: keep-alive\r\n" +
				"\r\n")},
			{Build: replayLastModified()},
		},
		Judge: conditional(304),
	},
}
