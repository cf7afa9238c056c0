module github.com/riptide-http/riptide/http3

go 1.26.0

replace github.com/riptide-http/riptide => ../

require (
	github.com/quic-go/qpack v0.6.0
	github.com/riptide-http/riptide v0.0.0
)

require golang.org/x/net v0.62.0 // indirect
