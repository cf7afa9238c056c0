// Package memprof reads the runtime's heap profile for the tests that
// measure what a connection keeps (the root's idle TLS costs, the
// WebSocket package's idle wss peers).
package memprof

import "runtime"

// Records returns every record of the heap profile, those whose objects
// were all freed included (their AllocBytes and FreeBytes cancel out).
// The profile is exact for what was allocated while
// runtime.MemProfileRate was 1.
func Records() []runtime.MemProfileRecord {
	var recs []runtime.MemProfileRecord
	for {
		n, ok := runtime.MemProfile(recs, true)
		if ok {
			return recs[:n]
		}
		recs = make([]runtime.MemProfileRecord, n+100)
	}
}
