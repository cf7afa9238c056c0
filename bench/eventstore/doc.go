// Package eventstore is the event-store application of the application
// benchmark (bench/README.md, "Event-store benchmark"): an ordinary
// http.Handler written the way a Go team writes one today — ServeMux
// routing, encoding/json, log/slog, database/sql over modernc.org/sqlite —
// so that the same code can be served by net/http, riptide's compat door and
// fasthttp's adaptor, and compared with native ports of its RPC endpoint.
//
// The service:
//
//   - POST /rpc: JSON-RPC-style calls with a bearer token: append (with
//     optimistic concurrency on the expected version), read_stream,
//     read_category and last_version.
//   - GET /subscribe?stream=S&from=V or ?category=C&from=P: Server-Sent
//     Events, history from the resume point and then every event appended
//     afterwards.
//   - GET /debug/metrics: the process's allocation counters from
//     runtime/metrics, for the load generator's bytes-per-operation figure.
//
// Middleware: request ID, access log (slog JSON), panic recovery, bearer
// authentication (token → namespace) and gzip for large responses.
package eventstore
