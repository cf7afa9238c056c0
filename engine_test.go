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
	// RIPTIDE_TLS_ENGINE=eventloop or goroutine serves every TLS test
	// server that leaves Server.TLSEngine at EngineAuto on that engine
	// (by default EngineAuto follows Engine).
	switch os.Getenv("RIPTIDE_TLS_ENGINE") {
	case "eventloop":
		autoTLSEngine = EngineEventLoop
	case "goroutine":
		autoTLSEngine = EngineGoroutine
	}
}
