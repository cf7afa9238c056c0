package probe

import (
	"fmt"
	"strconv"
	"strings"
)

// Verdict is the outcome of one check.
type Verdict string

// The verdicts, from best to worst. Skip means the check could not be run
// (for example the server refused the TCP connection); it says nothing about
// conformance.
const (
	Pass Verdict = "Pass"
	Warn Verdict = "Warn"
	Fail Verdict = "Fail"
	Skip Verdict = "Skip"
)

// Category groups checks the way Http11Probe does.
type Category string

// The Http11Probe suites.
const (
	Compliance     Category = "Compliance"
	Smuggling      Category = "Smuggling"
	MalformedInput Category = "Malformed Input"
	Normalization  Category = "Normalization"
	Capabilities   Category = "Capabilities"
	Cookies        Category = "Cookies"
)

// Categories lists the categories in report order.
var Categories = []Category{Compliance, Smuggling, MalformedInput, Normalization, Capabilities, Cookies}

// Level is the RFC 2119 requirement level of a check, as classified by the
// Http11Probe requirement dashboard.
type Level string

// The requirement levels. Unscored checks are informational: their verdict is
// reported but they never count against a server. NotApplicable marks
// best-practice checks with no single RFC keyword behind them.
const (
	Must          Level = "MUST"
	Should        Level = "SHOULD"
	May           Level = "MAY"
	OughtTo       Level = "ought to"
	Unscored      Level = "Unscored"
	NotApplicable Level = "N/A"
)

// Step is one write on the check's connection, followed by reading the
// response(s) it provokes.
type Step struct {
	// Request holds the raw bytes to send. It is ignored when Build is set.
	Request []byte
	// Build, when non-nil, computes the request from the previous step's
	// result (sequence checks that replay an ETag, for example). When it
	// returns ok == false the check ends with the given verdict and reason.
	Build func(prev *StepResult) (req []byte, v Verdict, reason string, ok bool)
	// Methods are the request methods of the requests in this write, in
	// order; they decide whether a response carries a body (HEAD responses
	// never do). When empty, the method is taken from the first request line
	// of Request and later responses are assumed to answer GET requests.
	Methods []string
}

// Judge decides the verdict of a check from what the server did, and says
// why in a short human-readable reason.
type Judge func(x *Exchange) (Verdict, string)

// Check is one Http11Probe test.
type Check struct {
	ID          string   // Http11Probe Test ID, e.g. "SMUG-CL-TE-BOTH"
	Category    Category // suite
	RFC         string   // RFC reference(s), e.g. "RFC 9112 §6.1"
	Level       Level    // requirement level (dashboard classification)
	Requirement string   // requirement as worded on the check's page
	Expected    string   // expected outcome as worded on the check's page
	Scored      bool     // false for informational checks
	Steps       []Step   // writes on one connection, in order
	Judge       Judge    // verdict rule
}

// RawRequest returns the bytes of the check's static steps joined in order;
// steps computed at run time (Step.Build) are left out.
func (c *Check) RawRequest() []byte {
	var b []byte
	for _, s := range c.Steps {
		if s.Build == nil {
			b = append(b, s.Request...)
		}
	}
	return b
}

// outcome tokens used by rule: a status ("400"), a class ("2xx"), "close"
// (the server closed the connection without a response), "timeout" (no
// response and no close before the deadline), or "!101" (any final response
// other than 101).
type rule struct {
	pass, warn []string
	text       string
}

// expect builds the common judge: the first step's outcome passes when it
// matches one of the '|'-separated tokens in pass, warns when it matches one
// in warn, and fails otherwise.
func expect(pass, warn string) Judge {
	r := rule{pass: splitTokens(pass), warn: splitTokens(warn)}
	r.text = "pass " + pass
	if warn != "" {
		r.text += ", warn " + warn
	}
	return func(x *Exchange) (Verdict, string) {
		o := x.Outcome()
		switch {
		case r.matches(r.pass, x):
			return Pass, o
		case r.matches(r.warn, x):
			return Warn, o
		}
		return Fail, o + " (want " + strings.ReplaceAll(pass, "|", " or ") + ")"
	}
}

func splitTokens(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "|")
}

func (r rule) matches(toks []string, x *Exchange) bool {
	for _, t := range toks {
		if matchToken(t, x) {
			return true
		}
	}
	return false
}

// matchToken reports whether the first step's outcome matches one token.
func matchToken(tok string, x *Exchange) bool {
	s := x.First()
	resp := s.Final()
	switch tok {
	case "close":
		return resp == nil && s.Closed
	case "timeout":
		return resp == nil && !s.Closed
	}
	if resp == nil {
		return false
	}
	if strings.HasPrefix(tok, "!") {
		n, _ := strconv.Atoi(tok[1:])
		return resp.Status != n
	}
	if len(tok) == 3 && strings.HasSuffix(tok, "xx") {
		return resp.Status/100 == int(tok[0]-'0')
	}
	n, err := strconv.Atoi(tok)
	if err != nil {
		panic(fmt.Sprintf("probe: bad outcome token %q", tok))
	}
	return resp.Status == n
}
