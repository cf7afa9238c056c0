module github.com/riptide-http/riptide/examples/service

go 1.26.0

require (
	github.com/klauspost/compress v1.20.3
	github.com/riptide-http/riptide v0.1.0
	github.com/riptide-http/riptide/compress v0.1.0
)

require (
	github.com/andybalholm/brotli v1.2.8 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
