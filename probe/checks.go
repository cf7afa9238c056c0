package probe

import (
	"fmt"
	"strings"
)

// Checks returns every check of the suite, grouped by category in the order
// of Categories. The slice is new on every call; the checks' request bytes
// are shared and must not be modified.
func Checks() []Check {
	var all []Check
	for _, cs := range [][]Check{complianceChecks, smugglingChecks, malformedChecks,
		normalizationChecks, capabilityChecks, cookieChecks} {
		all = append(all, cs...)
	}
	return all
}

// Filter returns the checks whose category matches category (case
// insensitively; empty matches all) and whose ID is in ids (empty matches
// all).
func Filter(checks []Check, category string, ids ...string) []Check {
	want := map[string]bool{}
	for _, id := range ids {
		want[strings.ToUpper(strings.TrimSpace(id))] = true
	}
	var out []Check
	for _, c := range checks {
		if category != "" && !strings.EqualFold(string(c.Category), category) &&
			!strings.EqualFold(strings.ReplaceAll(string(c.Category), " ", ""), category) {
			continue
		}
		if len(want) > 0 && !want[c.ID] {
			continue
		}
		out = append(out, c)
	}
	return out
}

// send makes the steps of a check from raw requests, one write each.
func send(reqs ...string) []Step {
	steps := make([]Step, len(reqs))
	for i, r := range reqs {
		steps[i].Request = []byte(r)
	}
	return steps
}

// numbered repeats format (a fmt format taking the index 0..n-1 zero or more
// times) n times, separated by sep.
func numbered(format, sep string, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(sep)
		}
		if strings.Contains(format, "%") {
			fmt.Fprintf(&b, format, i)
		} else {
			b.WriteString(format)
		}
	}
	return b.String()
}

// withBody fills the one %d of head with len(body) and appends body: the
// documentation's "Content-Length is computed to match the body bytes".
func withBody(head, body string) string {
	return fmt.Sprintf(head, len(body)) + body
}

// smuggledGET is the request the smuggling checks hide in a body.
const smuggledGET = "GET / HTTP/1.1\r\n" +
	"Host: localhost:8080\r\n" +
	"\r\n"

// teclSmuggledGET builds SMUG-TECL-SMUGGLED-GET: the chunk data is a GET
// whose own Content-Length: 7 swallows the chunked tail ("\r\n0\r\n\r\n"),
// and the outer Content-Length covers only the chunk-size line, both
// computed as the documentation says.
func teclSmuggledGET() string {
	data := "GET / HTTP/1.1\r\n" +
		"Host: localhost:8080\r\n" +
		"Content-Length: 7\r\n" +
		"\r\n"
	sizeLine := fmt.Sprintf("%x\r\n", len(data))
	return "POST / HTTP/1.1\r\n" +
		"Host: localhost:8080\r\n" +
		"Transfer-Encoding: chunked\r\n" +
		fmt.Sprintf("Content-Length: %d\r\n", len(sizeLine)) +
		"\r\n" +
		sizeLine + data + "\r\n" +
		"0\r\n" +
		"\r\n"
}

// binaryGarbage returns n deterministic pseudo-random bytes from seed (a
// 64-bit xorshift generator): MAL-BINARY-GARBAGE's "256 bytes of
// pseudorandom binary data, seeded RNG(42)". The bytes differ from the
// original project's, whose generator is .NET's.
func binaryGarbage(n int, seed uint64) string {
	b := make([]byte, n)
	x := seed*0x9E3779B97F4A7C15 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x >> 32)
	}
	return string(b)
}

// conditionalRequest is step 2 of the CAP-* sequences.
func conditionalRequest(headers ...string) []byte {
	var b strings.Builder
	b.WriteString("GET / HTTP/1.1\r\nHost: localhost:8080\r\n")
	for _, h := range headers {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("\r\n")
	return []byte(b.String())
}

// replayETag builds step 2 of the ETag sequences from step 1's ETag: as is
// (mode ""), with a W/ prefix ("weak"), without its quotes ("unquoted"), or
// together with a stale If-Modified-Since ("precedence"). A missing ETag
// ends the check with Warn, as the documentation says.
func replayETag(mode string) func(*StepResult) ([]byte, Verdict, string, bool) {
	return func(prev *StepResult) ([]byte, Verdict, string, bool) {
		if !prev.is2xx() {
			return nil, Fail, "step 1: " + prev.Got(), false
		}
		etag, ok := prev.Final().Get("ETag")
		if !ok {
			return nil, Warn, "no ETag in step 1", false
		}
		switch mode {
		case "weak":
			if !strings.HasPrefix(etag, "W/") {
				etag = "W/" + etag
			}
		case "unquoted":
			etag = strings.TrimPrefix(etag, "W/")
			etag = strings.Trim(etag, `"`)
		case "precedence":
			return conditionalRequest("If-None-Match: "+etag,
				"If-Modified-Since: Thu, 01 Jan 1970 00:00:00 GMT"), "", "", true
		}
		return conditionalRequest("If-None-Match: " + etag), "", "", true
	}
}

// replayLastModified builds step 2 of CAP-LAST-MODIFIED-304.
func replayLastModified() func(*StepResult) ([]byte, Verdict, string, bool) {
	return func(prev *StepResult) ([]byte, Verdict, string, bool) {
		if !prev.is2xx() {
			return nil, Fail, "step 1: " + prev.Got(), false
		}
		lm, ok := prev.Final().Get("Last-Modified")
		if !ok {
			return nil, Warn, "no Last-Modified in step 1", false
		}
		return conditionalRequest("If-Modified-Since: " + lm), "", "", true
	}
}
