package memprof

import (
	"runtime"
	"testing"
)

var sink [][]byte

// The records include an allocation made at rate 1: one of them has this
// test in its stack and at least the bytes it allocated.
func TestRecordsHoldAnAllocation(t *testing.T) {
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = old }()
	sink = append(sink, make([]byte, 12345))
	runtime.GC() // the profile is published at a collection
	runtime.GC()
	for _, r := range Records() {
		frames := runtime.CallersFrames(r.Stack())
		for {
			f, more := frames.Next()
			if f.Function == "github.com/riptide-http/riptide/internal/memprof.TestRecordsHoldAnAllocation" && r.AllocBytes >= 12345 {
				return
			}
			if !more {
				break
			}
		}
	}
	t.Error("no record of the test's 12345-byte allocation")
}
