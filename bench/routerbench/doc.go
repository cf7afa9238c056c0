// Package routerbench compares riptide's router with httprouter, chi and
// http.ServeMux on lookups over the GitHub API route set of the Go HTTP
// routing benchmark (testdata/github_api.txt), in one process and run:
//
//	go test -run '^$' -bench . -benchmem ./routerbench
//
// Every router is called directly (no network): riptide's with a reused
// Ctx, the others with a reused *http.Request and a ResponseWriter that
// discards. TestRoutersAgree first checks that each router sends every
// route's request to that route's handler.
package routerbench
