// Package grpc is a test-only module: grpc-go clients against a grpc.Server
// mounted through riptide's compat door (riptide.FromHTTP over the server's
// ServeHTTP) on riptide's own HTTP/2 connection loop, over h2c and TLS.
// It also runs Connect's Go client (connectrpc.com/connect) over riptide's
// client (client.Client as the http.Client's Transport) against a Connect
// service on HTTP/2. It is a separate module so that the core module does
// not depend on grpc or Connect.
package grpc
