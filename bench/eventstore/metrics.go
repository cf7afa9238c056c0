package eventstore

import (
	"encoding/json"
	"runtime/metrics"
)

// Metrics are the process's cumulative allocation counters, read from
// runtime/metrics. The load generator reads them before and after a run to
// report bytes and objects allocated per operation.
type Metrics struct {
	AllocBytes   uint64 `json:"alloc_bytes"`
	AllocObjects uint64 `json:"alloc_objects"`
	GCCycles     uint64 `json:"gc_cycles"`
}

// MetricsPath is the unauthenticated route serving Metrics as JSON.
const MetricsPath = "/debug/metrics"

// ReadMetrics samples the counters.
func ReadMetrics() Metrics {
	s := []metrics.Sample{
		{Name: "/gc/heap/allocs:bytes"},
		{Name: "/gc/heap/allocs:objects"},
		{Name: "/gc/cycles/total:gc-cycles"},
	}
	metrics.Read(s)
	return Metrics{AllocBytes: s[0].Value.Uint64(), AllocObjects: s[1].Value.Uint64(), GCCycles: s[2].Value.Uint64()}
}

// MetricsJSON returns ReadMetrics encoded as JSON.
func MetricsJSON() []byte {
	b, _ := json.Marshal(ReadMetrics())
	return b
}
