package probe

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// This file holds the verdict rules that do not fit expect's
// pass-set/warn-set shape. Each one cites the rule of the documentation page
// of the checks that use it.

// expectElseWarn passes the listed outcomes and warns on every other
// ("Warn — Server returns an unexpected status"; COMP-POST-UNSUPPORTED-CT,
// COMP-RANGE-INVALID).
func expectElseWarn(pass string) Judge {
	inner := expect(pass, "")
	return func(x *Exchange) (Verdict, string) {
		v, why := inner(x)
		if v == Fail {
			v = Warn
		}
		return v, why
	}
}

// upgradeRefused: a 101 is a failure, any other response passes. With
// prefer426 (COMP-UPGRADE-INVALID-VER), a 2xx from a server ignoring the
// upgrade "is acceptable but noted as a warning".
func upgradeRefused(prefer426 bool) Judge {
	return func(x *Exchange) (Verdict, string) {
		s := x.First()
		r := s.Final()
		switch {
		case r == nil && s.Closed:
			return Pass, "closed without switching protocols"
		case r == nil:
			return Fail, x.Outcome()
		case r.Status == 101:
			return Fail, "101: switched protocols"
		case prefer426 && r.Status/100 == 2:
			return Warn, x.Outcome() + " (upgrade ignored; 426 preferred)"
		}
		return Pass, x.Outcome()
	}
}

// mustCloseAfter is the rule of the CL+TE sequence checks
// (SMUG-CLTE-CONN-CLOSE, SMUG-TECL-CONN-CLOSE, SMUG-CLTE-DESYNC,
// SMUG-TECL-DESYNC, SMUG-OPTIONS-TE-OBS-FOLD): the first request is rejected
// with 400, or the server closes the connection after answering it so the
// follow-up never runs. A follow-up that gets any answer fails.
func mustCloseAfter() Judge {
	return func(x *Exchange) (Verdict, string) {
		s1 := x.First()
		switch {
		case s1.Status() == 400:
			return Pass, x.Outcome()
		case s1.Closed:
			return Pass, x.Outcome()
		case len(s1.Responses) > 1:
			return Fail, x.Outcome() + " (extra response: desync)"
		}
		s2 := x.Step(1)
		switch {
		case s2.Sent && s2.Final() != nil && s2.Status() == 400:
			return Fail, x.Outcome() + " (follow-up rejected: poisoned connection)"
		case s2.Sent && s2.Final() != nil:
			return Fail, x.Outcome() + " (connection left open after ambiguous framing)"
		case s1.TimedOut:
			return Fail, x.Outcome() + " (no response, connection left open)"
		}
		return Fail, x.Outcome() + " (connection left open)"
	}
}

// rejectOrClosed2xx is the rule of SMUG-TE-OBS-FOLD and
// SMUG-TE-TRAILING-SPACE: 400 (or one of codes) passes, a 2xx followed by a
// close gets closedVerdict, a 2xx on a connection left open fails.
func rejectOrClosed2xx(closedVerdict Verdict, codes ...int) Judge {
	return func(x *Exchange) (Verdict, string) {
		s := x.First()
		switch {
		case s.rejected(codes...):
			return Pass, x.Outcome()
		case s.is2xx() && s.Closed:
			return closedVerdict, x.Outcome()
		case s.is2xx():
			return Fail, x.Outcome() + " (2xx without closing the connection)"
		}
		return Fail, x.Outcome()
	}
}

// closedAfter2xx: a 2xx followed by the server closing the connection
// passes; a 2xx on a connection left open gets openVerdict
// (COMP-CONNECTION-CLOSE: Fail, COMP-HTTP10-DEFAULT-CLOSE: Warn).
func closedAfter2xx(openVerdict Verdict) Judge {
	return func(x *Exchange) (Verdict, string) {
		s := x.First()
		switch {
		case s.is2xx() && s.Closed:
			return Pass, x.Outcome()
		case s.is2xx():
			return openVerdict, x.Outcome() + " (connection not closed)"
		}
		return Fail, x.Outcome()
	}
}

// poisonedFollowUp is the rule of the unscored desync sequences
// (SMUG-CL0-BODY-POISON, SMUG-GET-CL-BODY-DESYNC,
// SMUG-OPTIONS-CL-BODY-DESYNC, SMUG-EXPECT-100-CL-DESYNC,
// SMUG-GET-CL-PREFIX-DESYNC): rejecting the first request (400, one of
// codes, or a close) passes, as does accepting it and answering the clean
// follow-up with a single 2xx ("pass-through"). A follow-up answered with
// anything else, or with more than one response, shows the connection was
// poisoned: Warn.
func poisonedFollowUp(codes ...int) Judge {
	return func(x *Exchange) (Verdict, string) {
		s1 := x.First()
		switch {
		case s1.rejected(codes...):
			return Pass, x.Outcome()
		case !s1.is2xx():
			return Fail, x.Outcome()
		case len(s1.Responses) > 1:
			return Warn, x.Outcome() + " (extra response to the first request)"
		case s1.Closed:
			return Pass, x.Outcome()
		}
		s2 := x.Step(1)
		switch {
		case len(s2.Responses) > 1:
			return Warn, x.Outcome() + " (follow-up got several responses: desync)"
		case s2.is2xx():
			return Pass, x.Outcome()
		}
		return Warn, x.Outcome() + " (follow-up poisoned)"
	}
}

// noSmuggledResponse is the rule of the single-send smuggled-request checks
// (SMUG-*-SMUGGLED-GET/HEAD): more than one response means the embedded
// request ran; otherwise a 400 or a closed connection passes and anything
// left open fails.
func noSmuggledResponse() Judge {
	return func(x *Exchange) (Verdict, string) {
		s := x.First()
		switch {
		case len(s.Responses) > 1:
			return Fail, x.Outcome() + " (multiple responses: embedded request executed)"
		case s.Status() == 400 || s.Closed:
			return Pass, x.Outcome()
		}
		return Fail, x.Outcome() + " (connection left open)"
	}
}

// anyResponseWarn: any response is reported as Warn (MAL-RANGE-OVERLAPPING);
// no response at all fails.
func anyResponseWarn() Judge {
	return func(x *Exchange) (Verdict, string) {
		if x.First().Final() != nil {
			return Warn, x.Outcome()
		}
		return Fail, x.Outcome()
	}
}

// notURITooLong: any status but 414 passes, 414 fails and a close without a
// response warns (COMP-LONG-URL-OK).
func notURITooLong() Judge {
	return func(x *Exchange) (Verdict, string) {
		s := x.First()
		switch {
		case s.Final() == nil && s.Closed:
			return Warn, x.Outcome()
		case s.Final() == nil, s.Status() == 414:
			return Fail, x.Outcome()
		}
		return Pass, x.Outcome()
	}
}

// imfFixdate is the RFC 9110 §5.6.7 preferred date format.
const imfFixdate = "Mon, 02 Jan 2006 15:04:05 GMT"

// dateIsIMFFixdate: a Date header in IMF-fixdate passes; missing or in
// another format warns (COMP-DATE-FORMAT).
func dateIsIMFFixdate() Judge {
	return func(x *Exchange) (Verdict, string) {
		r := x.First().Final()
		if r == nil {
			return Fail, x.Outcome()
		}
		d, ok := r.Get("Date")
		if !ok {
			return Warn, "no Date header"
		}
		if _, err := time.Parse(imfFixdate, d); err != nil {
			return Warn, fmt.Sprintf("Date %q is not IMF-fixdate", d)
		}
		return Pass, "Date: " + d
	}
}

// noInterimForHTTP10: a 1xx sent to an HTTP/1.0 client fails; a final
// response with no interim one passes (COMP-NO-1XX-HTTP10).
func noInterimForHTTP10() Judge {
	return func(x *Exchange) (Verdict, string) {
		s := x.First()
		switch {
		case len(s.Interim) > 0:
			return Fail, x.Outcome() + " (1xx sent to an HTTP/1.0 client)"
		case s.Final() == nil:
			return Fail, x.Outcome()
		}
		return Pass, x.Outcome()
	}
}

// traceHidesSecret: a response echoing the secret warns; anything else the
// server answers passes (COMP-TRACE-SENSITIVE).
func traceHidesSecret(secret string) Judge {
	return func(x *Exchange) (Verdict, string) {
		s := x.First()
		r := s.Final()
		switch {
		case r == nil && s.Closed:
			return Pass, x.Outcome()
		case r == nil:
			return Fail, x.Outcome()
		case bodyContains(r, secret):
			return Warn, x.Outcome() + " (Authorization echoed)"
		}
		return Pass, x.Outcome()
	}
}

// noContentLengthIn204: a 204 must not carry Content-Length; another status
// cannot show the rule and warns (COMP-NO-CL-IN-204).
func noContentLengthIn204() Judge { return statusHeaderRule(204, "Content-Length", false) }

// statusHeaderRule judges a rule of the form "a response with this status
// must (want) or must not (!want) carry this header". A different status
// cannot show the rule and warns; no response fails.
func statusHeaderRule(status int, header string, want bool) Judge {
	code := strconv.Itoa(status)
	return func(x *Exchange) (Verdict, string) {
		r := x.First().Final()
		switch {
		case r == nil:
			return Fail, x.Outcome()
		case r.Status != status:
			return Warn, x.Outcome() + " (not a " + code + "; rule not exercised)"
		}
		_, has := r.Get(header)
		what := code + " without " + header
		if has {
			what = code + " with " + header
		}
		if has != want {
			return Fail, what
		}
		return Pass, what
	}
}

// rangeIgnoredOnPost: a 2xx other than 206 passes (COMP-RANGE-POST).
func rangeIgnoredOnPost() Judge {
	return func(x *Exchange) (Verdict, string) {
		s := x.First()
		if s.is2xx() && s.Status() != 206 {
			return Pass, x.Outcome()
		}
		return Fail, x.Outcome()
	}
}

// pipelineSafe: two clean GETs on one connection both answered 2xx pass; a
// close after the first warns (SMUG-PIPELINE-SAFE).
func pipelineSafe() Judge {
	return func(x *Exchange) (Verdict, string) {
		s1, s2 := x.First(), x.Step(1)
		switch {
		case !s1.is2xx():
			return Fail, x.Outcome()
		case !s2.Sent:
			return Warn, x.Outcome() + " (closed before the second request)"
		case s2.is2xx():
			return Pass, x.Outcome()
		}
		return Fail, x.Outcome()
	}
}

// okWithHeader: a 2xx carrying the header passes, a 2xx without it gets
// missing (COMP-DATE-HEADER: Fail; COMP-OPTIONS-ALLOW: Warn).
func okWithHeader(name string, missing Verdict) Judge {
	return func(x *Exchange) (Verdict, string) {
		s := x.First()
		if !s.is2xx() {
			return Fail, x.Outcome()
		}
		if _, ok := s.Final().Get(name); !ok {
			return missing, x.Outcome() + " (no " + name + " header)"
		}
		return Pass, x.Outcome()
	}
}

// contentTypePresent: a 2xx with content carries Content-Type
// (COMP-CONTENT-TYPE, SHOULD: missing warns).
func contentTypePresent() Judge {
	return func(x *Exchange) (Verdict, string) {
		s := x.First()
		if !s.is2xx() {
			return Fail, x.Outcome()
		}
		r := s.Final()
		if _, ok := r.Get("Content-Type"); !ok && len(r.Body) > 0 {
			return Warn, x.Outcome() + " (content without Content-Type)"
		}
		return Pass, x.Outcome()
	}
}

// headHasNoBody: a 2xx to HEAD followed by no content bytes
// (COMP-HEAD-NO-BODY).
func headHasNoBody() Judge {
	return func(x *Exchange) (Verdict, string) {
		s := x.First()
		switch {
		case !s.is2xx():
			return Fail, x.Outcome()
		case len(s.Garbage) > 0 || len(s.Responses) > 1:
			return Fail, x.Outcome() + " (bytes after the HEAD response head)"
		}
		return Pass, x.Outcome()
	}
}

// methodNotAllowedHasAllow: a 405 must carry Allow; another status cannot
// show the rule and warns (COMP-405-ALLOW).
func methodNotAllowedHasAllow() Judge { return statusHeaderRule(405, "Allow", true) }

// survives: the listed outcomes pass, a 5xx or no answer at all fails (the
// parser crashed or hung), anything else warns (COOK-EMPTY, COOK-MALFORMED,
// COOK-MANY-PAIRS, COOK-OVERSIZED).
func survives(pass string) Judge {
	inner := expect(pass, "")
	return func(x *Exchange) (Verdict, string) {
		v, why := inner(x)
		s := x.First()
		if v == Fail && s.Final() != nil && s.Status()/100 != 5 {
			v = Warn
		}
		return v, why
	}
}

// cookieEcho: /echo shows the Cookie header (COOK-ECHO).
func cookieEcho() Judge {
	return func(x *Exchange) (Verdict, string) {
		s := x.First()
		if s.is2xx() && echoHas(s.Final(), "Cookie", false, nil) {
			return Pass, x.Outcome()
		}
		return Fail, x.Outcome() + " (no Cookie line echoed)"
	}
}

// cookieStripped: rejecting passes; a 2xx echo still containing one of the
// bytes fails (COOK-NUL, COOK-CONTROL-CHARS).
func cookieStripped(bad ...string) Judge {
	return func(x *Exchange) (Verdict, string) {
		s := x.First()
		r := s.Final()
		switch {
		case s.rejected():
			return Pass, x.Outcome()
		case r == nil, r.Status/100 == 5:
			return Fail, x.Outcome()
		case !s.is2xx():
			return Warn, x.Outcome()
		}
		for _, b := range bad {
			if bodyContains(r, b) {
				return Fail, x.Outcome() + fmt.Sprintf(" (%q preserved in echo)", b)
			}
		}
		return Pass, x.Outcome()
	}
}

// cookieMultiHeader: both cookies of two Cookie lines are echoed
// (COOK-MULTI-HEADER); one only, or a 400, warns; a 5xx fails.
func cookieMultiHeader() Judge {
	return func(x *Exchange) (Verdict, string) {
		s := x.First()
		r := s.Final()
		switch {
		case r == nil, r.Status/100 == 5:
			return Fail, x.Outcome()
		case !s.is2xx():
			return Warn, x.Outcome()
		case bodyContains(r, "a=1") && bodyContains(r, "b=2"):
			return Pass, x.Outcome()
		}
		return Warn, x.Outcome() + " (only one cookie echoed)"
	}
}

// cookieParsed is the rule of the /cookie checks: 404 (no endpoint) warns, a
// 5xx fails. With pairs (COOK-PARSED-BASIC, COOK-PARSED-MULTI) a 2xx must
// list every pair as a line; without (COOK-PARSED-EMPTY-VAL,
// COOK-PARSED-SPECIAL) a 2xx or 400 passes.
func cookieParsed(wantPairs bool, pairs ...string) Judge {
	return func(x *Exchange) (Verdict, string) {
		s := x.First()
		r := s.Final()
		switch {
		case r == nil, r.Status/100 == 5:
			return Fail, x.Outcome()
		case r.Status == 404:
			return Warn, x.Outcome() + " (no /cookie endpoint)"
		case !wantPairs && (s.is2xx() || r.Status == 400):
			return Pass, x.Outcome()
		case !s.is2xx():
			return Warn, x.Outcome()
		}
		lines := bodyLines(r)
		for _, p := range pairs {
			if !containsLine(lines, p) {
				return Fail, x.Outcome() + fmt.Sprintf(" (%q missing from parsed cookies)", p)
			}
		}
		return Pass, x.Outcome()
	}
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if strings.TrimSpace(l) == want {
			return true
		}
	}
	return false
}

// normalized is the rule of the NORM-* echo checks: rejecting (400 or close)
// or dropping the malformed header passes; echoing it under the canonical
// name with its value fails (the server normalised it into a framing
// header); echoing it under its own name warns.
func normalized(malformed, canonical, value string) Judge {
	return func(x *Exchange) (Verdict, string) {
		s := x.First()
		switch {
		case s.rejected():
			return Pass, x.Outcome()
		case !s.is2xx():
			return Fail, x.Outcome()
		}
		r := s.Final()
		switch {
		case echoHas(r, canonical, false, func(v string) bool { return v == value }):
			return Fail, x.Outcome() + fmt.Sprintf(" (normalised to %s: %s)", canonical, value)
		case echoHas(r, malformed, false, nil):
			return Warn, x.Outcome() + fmt.Sprintf(" (%q preserved)", malformed)
		}
		return Pass, x.Outcome() + " (header dropped)"
	}
}

// caseNormalized is NORM-CASE-TE: rejecting or dropping passes, echoing the
// name with its original casing warns, echoing it re-cased fails.
func caseNormalized(name, value string) Judge {
	return func(x *Exchange) (Verdict, string) {
		s := x.First()
		switch {
		case s.rejected():
			return Pass, x.Outcome()
		case !s.is2xx():
			return Fail, x.Outcome()
		}
		r := s.Final()
		switch {
		case echoHas(r, name, true, nil):
			return Warn, x.Outcome() + " (original casing preserved)"
		case echoHas(r, name, false, func(v string) bool { return strings.EqualFold(v, value) }):
			return Fail, x.Outcome() + " (casing normalised)"
		}
		return Pass, x.Outcome() + " (header dropped)"
	}
}

// conditional is the rule of the CAP-* sequences: step 1 must be a 2xx; a
// step 2 answered with want passes, with the other of 200/304 warns, and
// with anything else fails.
func conditional(want int) Judge {
	return func(x *Exchange) (Verdict, string) {
		s1, s2 := x.First(), x.Step(1)
		switch {
		case !s1.is2xx():
			return Fail, x.Outcome()
		case !s2.Sent:
			return Warn, x.Outcome() + " (connection closed after step 1)"
		case s2.Status() == want:
			return Pass, x.Outcome()
		case s2.Status() == 200 || s2.Status() == 304:
			return Warn, x.Outcome()
		}
		return Fail, x.Outcome()
	}
}

// etagIn304 is CAP-ETAG-IN-304: the 304 of step 2 carries ETag.
func etagIn304() Judge {
	cond := conditional(304)
	return func(x *Exchange) (Verdict, string) {
		v, why := cond(x)
		if v != Pass {
			return v, why
		}
		if _, ok := x.Step(1).Final().Get("ETag"); !ok {
			return Warn, why + " (304 without ETag)"
		}
		return Pass, why + " (304 with ETag)"
	}
}
