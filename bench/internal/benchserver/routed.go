package benchserver

import (
	"crypto/rand"
	"encoding/hex"
	"regexp"
)

// ProfileRouted serves the app of the routed workload: RoutedRoutes behind
// three middleware, in this order: panic recovery, request ID (the
// request's X-Request-Id, or a generated one, in the response's
// X-Request-Id) and an access log whose level is disabled (the check per
// request is the cost). Every route answers 200 text/plain with its path
// values joined by '/'.
const ProfileRouted Profile = "routed"

// RoutedRoute is one route of the routed app; Path is in the "{name}"
// syntax that http.ServeMux, chi, fasthttp/router and riptide's router
// share.
type RoutedRoute struct{ Method, Path string }

// RoutedPath is the request of the routed workload (a three-parameter
// route among fifty) and RoutedBody its response body.
const (
	RoutedPath = "/repos/golang/go/issues/42"
	RoutedBody = "golang/go/42"
)

// RoutedRoutes are the fifty routes of the routed app: the first fifty of
// the GitHub API set of the Go HTTP routing benchmark, with the issue
// route the workload requests.
var RoutedRoutes = []RoutedRoute{
	{"GET", "/authorizations"}, {"GET", "/authorizations/{id}"}, {"POST", "/authorizations"},
	{"DELETE", "/authorizations/{id}"}, {"GET", "/applications/{client_id}/tokens/{access_token}"},
	{"DELETE", "/applications/{client_id}/tokens"}, {"DELETE", "/applications/{client_id}/tokens/{access_token}"},
	{"GET", "/events"}, {"GET", "/repos/{owner}/{repo}/events"}, {"GET", "/networks/{owner}/{repo}/events"},
	{"GET", "/orgs/{org}/events"}, {"GET", "/users/{user}/received_events"}, {"GET", "/users/{user}/received_events/public"},
	{"GET", "/users/{user}/events"}, {"GET", "/users/{user}/events/public"}, {"GET", "/users/{user}/events/orgs/{org}"},
	{"GET", "/feeds"}, {"GET", "/notifications"}, {"GET", "/repos/{owner}/{repo}/notifications"},
	{"PUT", "/notifications"}, {"PUT", "/repos/{owner}/{repo}/notifications"}, {"GET", "/notifications/threads/{id}"},
	{"GET", "/notifications/threads/{id}/subscription"}, {"PUT", "/notifications/threads/{id}/subscription"},
	{"DELETE", "/notifications/threads/{id}/subscription"}, {"GET", "/repos/{owner}/{repo}/stargazers"},
	{"GET", "/users/{user}/starred"}, {"GET", "/user/starred"}, {"GET", "/user/starred/{owner}/{repo}"},
	{"PUT", "/user/starred/{owner}/{repo}"}, {"DELETE", "/user/starred/{owner}/{repo}"},
	{"GET", "/repos/{owner}/{repo}/subscribers"}, {"GET", "/users/{user}/subscriptions"}, {"GET", "/user/subscriptions"},
	{"GET", "/repos/{owner}/{repo}/subscription"}, {"PUT", "/repos/{owner}/{repo}/subscription"},
	{"DELETE", "/repos/{owner}/{repo}/subscription"}, {"GET", "/user/subscriptions/{owner}/{repo}"},
	{"PUT", "/user/subscriptions/{owner}/{repo}"}, {"DELETE", "/user/subscriptions/{owner}/{repo}"},
	{"GET", "/users/{user}/gists"}, {"GET", "/gists"}, {"GET", "/gists/{id}"}, {"POST", "/gists"},
	{"PUT", "/gists/{id}/star"}, {"DELETE", "/gists/{id}/star"}, {"GET", "/gists/{id}/star"},
	{"POST", "/gists/{id}/forks"}, {"DELETE", "/gists/{id}"},
	{"GET", "/repos/{owner}/{repo}/issues/{number}"},
}

var wildcard = regexp.MustCompile(`\{([A-Za-z_]+)\}`)

// Names returns the wildcard names of the route's path, in order.
func (r RoutedRoute) Names() []string {
	var names []string
	for _, m := range wildcard.FindAllStringSubmatch(r.Path, -1) {
		names = append(names, m[1])
	}
	return names
}

// RequestIDHeader is the header of the routed app's request IDs.
const RequestIDHeader = "X-Request-Id"

// requestIDPrefix makes generated IDs the shape riptide's middleware
// gives them: 16 random hex digits, '-', 16 hex digits of a counter.
var requestIDPrefix = func() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:]) + "-"
}()

// AppendRequestID appends the request ID for counter value n, in the
// shape riptide's middleware.RequestID generates, so that every server of
// the routed workload sends responses of the same length.
func AppendRequestID(dst []byte, n uint64) []byte {
	dst = append(dst, requestIDPrefix...)
	for shift := 60; shift >= 0; shift -= 4 {
		dst = append(dst, "0123456789abcdef"[n>>uint(shift)&15])
	}
	return dst
}
