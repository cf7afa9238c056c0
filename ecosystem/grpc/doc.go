// Package grpc is a test-only module: grpc-go clients against a grpc.Server
// mounted through riptide's compat door (riptide.FromHTTP over the server's
// ServeHTTP) on riptide's own HTTP/2 connection loop, over h2c and TLS.
// It is a separate module so that the core module does not depend on grpc.
package grpc
