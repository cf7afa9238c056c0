module github.com/riptide-http/riptide/ecosystem/grpc

go 1.26.0

require (
	connectrpc.com/connect v1.19.1
	github.com/riptide-http/riptide v0.1.0
	google.golang.org/grpc v1.85.0
)

require (
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
