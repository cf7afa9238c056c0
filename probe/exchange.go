package probe

import (
	"bytes"
	"strconv"
	"strings"
)

// Exchange is everything that happened on a check's connection: one
// StepResult per step that was attempted. Judges read it; they must not
// modify it.
type Exchange struct {
	Steps []*StepResult
}

// StepResult records one step: what was sent and what came back.
type StepResult struct {
	// Sent is false when the step never ran because the server had already
	// closed the connection (or an earlier step ended the check).
	Sent bool
	// Request is what was written.
	Request []byte
	// WriteErr is the write error, if any (a server may close or reset the
	// connection before reading a large request; its response is still read).
	WriteErr string
	// Responses are the final (non-1xx) responses read after the write, in
	// order. More than one means the server answered requests the client
	// never sent as separate requests (a desync), or pipelined ones.
	Responses []*Response
	// Interim are 1xx responses other than 101 seen before a final response.
	Interim []*Response
	// Closed is set when the server closed (or reset) the connection,
	// whether before or after responding.
	Closed bool
	// TimedOut is set when no final response arrived before the read
	// deadline and the connection was still open.
	TimedOut bool
	// Garbage holds bytes the server sent that are not an HTTP response.
	Garbage []byte
}

// Final returns the first final response of the step, or nil.
func (s *StepResult) Final() *Response {
	if s == nil || len(s.Responses) == 0 {
		return nil
	}
	return s.Responses[0]
}

// Status returns the status of the first final response, or 0.
func (s *StepResult) Status() int {
	if r := s.Final(); r != nil {
		return r.Status
	}
	return 0
}

// Got summarises the step: the status code(s) received and the connection
// state afterwards, e.g. "400 closed", "200 open", "200,200 open", "closed"
// (no response) or "timeout".
func (s *StepResult) Got() string {
	if s == nil || !s.Sent {
		return "not sent"
	}
	var b strings.Builder
	for _, r := range s.Interim {
		b.WriteString(strconv.Itoa(r.Status))
		b.WriteString(",")
	}
	for i, r := range s.Responses {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(strconv.Itoa(r.Status))
	}
	if len(s.Garbage) > 0 {
		if b.Len() > 0 {
			b.WriteString(",")
		}
		b.WriteString("garbage")
	}
	switch {
	case b.Len() == 0 && s.Closed:
		return "closed"
	case b.Len() == 0:
		return "timeout"
	case s.Closed:
		b.WriteString(" closed")
	case s.TimedOut:
		b.WriteString(" timeout")
	default:
		b.WriteString(" open")
	}
	return b.String()
}

var notSent = &StepResult{}

// First returns the first step's result; it is never nil.
func (x *Exchange) First() *StepResult {
	return x.Step(0)
}

// Step returns step i's result, or an unsent empty result when step i did
// not run; it is never nil.
func (x *Exchange) Step(i int) *StepResult {
	if i < len(x.Steps) && x.Steps[i] != nil {
		return x.Steps[i]
	}
	return notSent
}

// Outcome summarises the whole exchange, step by step ("200 open | 400
// closed").
func (x *Exchange) Outcome() string {
	var parts []string
	for _, s := range x.Steps {
		if s.Sent {
			parts = append(parts, s.Got())
		}
	}
	if len(parts) == 0 {
		return "not sent"
	}
	return strings.Join(parts, " | ")
}

// rejected reports whether the step's outcome is a rejection: a 400 (or
// one of the extra codes) or a close with no response.
func (s *StepResult) rejected(codes ...int) bool {
	r := s.Final()
	if r == nil {
		return s.Closed && s.Sent
	}
	if r.Status == 400 {
		return true
	}
	for _, c := range codes {
		if r.Status == c {
			return true
		}
	}
	return false
}

// is2xx reports whether the step's first final response is a 2xx.
func (s *StepResult) is2xx() bool {
	return s.Final() != nil && s.Final().Status/100 == 2
}

// bodyLines splits a response body into lines with CR removed.
func bodyLines(r *Response) []string {
	if r == nil {
		return nil
	}
	return strings.Split(strings.ReplaceAll(string(r.Body), "\r", ""), "\n")
}

// echoHas reports whether the echo body has a "Name: Value" line whose name
// matches name exactly (case-sensitive when exact is true) and whose value
// satisfies valueOK.
func echoHas(r *Response, name string, exact bool, valueOK func(string) bool) bool {
	for _, l := range bodyLines(r) {
		n, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		if (exact && n == name) || (!exact && strings.EqualFold(n, name)) {
			if valueOK == nil || valueOK(strings.TrimSpace(v)) {
				return true
			}
		}
	}
	return false
}

// bodyContains reports whether r's body contains s.
func bodyContains(r *Response, s string) bool {
	return r != nil && bytes.Contains(r.Body, []byte(s))
}
