// Package routerbench compares riptide's router with httprouter, chi and
// http.ServeMux on lookups over the GitHub API route set of the Go HTTP
// routing benchmark (testdata/github_api.txt), in one process and run:
//
//	go test -run '^$' -bench . -benchmem ./routerbench
//
// Every router is called directly (no network): riptide's with one Ctx
// whose method and path are set per request (the server keeps one Ctx per
// connection and parses each request into it), the others with one
// prebuilt *http.Request per route, as the original benchmark does, and a
// ResponseWriter that discards. TestRoutersAgree first checks that each
// router sends every route's request to that route's handler.
// TestGitHubInterleaved (ROUTERBENCH_INTERLEAVE=1) alternates the routers
// round by round, for a fair comparison on a busy machine.
package routerbench
