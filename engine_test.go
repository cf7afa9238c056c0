package riptide

import "os"

// RIPTIDE_ENGINE=eventloop|onloop|goroutine runs the whole suite on that engine:
// every test server that leaves Server.Engine at EngineAuto gets it.
func init() {
	switch os.Getenv("RIPTIDE_ENGINE") {
	case "eventloop":
		autoEngine = EngineEventLoop
	case "onloop":
		autoEngine = EngineOnLoop
	case "goroutine":
		autoEngine = EngineGoroutine
	}
	// RIPTIDE_TLS_ENGINE=eventloop serves every TLS test server that
	// leaves Server.TLSEngine at EngineAuto on the event loop.
	if os.Getenv("RIPTIDE_TLS_ENGINE") == "eventloop" {
		autoTLSEngine = EngineEventLoop
	}
}
