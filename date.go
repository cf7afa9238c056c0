package riptide

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/riptide-http/riptide/h1"
)

// The server clock: one goroutine per process (while any Serve runs) stores
// the current Unix second once a second. Connections compare it with the
// second of their own formatted Date header and reformat only when it moved,
// so no request formats a date and no buffer is shared between goroutines.
var (
	clockSec   atomic.Int64
	clockMu    sync.Mutex
	clockUsers int
	clockStop  chan struct{}
)

// clockAcquire starts the clock goroutine for the first user.
func clockAcquire() {
	clockMu.Lock()
	defer clockMu.Unlock()
	clockUsers++
	if clockUsers > 1 {
		return
	}
	clockSec.Store(time.Now().Unix())
	stop := make(chan struct{})
	clockStop = stop
	go func() {
		// Wake just past each second boundary so the cached Date is never
		// more than a tick late. One timer, reset: the clock allocates
		// nothing while it runs.
		untilNext := func() time.Duration {
			now := time.Now()
			return now.Truncate(time.Second).Add(time.Second + time.Millisecond).Sub(now)
		}
		t := time.NewTimer(untilNext())
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case n := <-t.C:
				clockSec.Store(n.Unix())
				t.Reset(untilNext())
			}
		}
	}()
}

// clockRelease stops the clock goroutine after its last user.
func clockRelease() {
	clockMu.Lock()
	defer clockMu.Unlock()
	clockUsers--
	if clockUsers == 0 {
		close(clockStop)
	}
}

// dateCache is a connection's formatted "Date: ...\r\n" line.
type dateCache struct {
	sec  int64
	line []byte
}

// get returns the Date line for the clock's current second.
func (d *dateCache) get() []byte { return d.at(clockSec.Load()) }

// at returns the Date line for Unix second sec, formatting it only when sec
// differs from the cached one.
func (d *dateCache) at(sec int64) []byte {
	if sec != d.sec || len(d.line) == 0 {
		if sec == 0 {
			// No clock running (a Ctx driven outside Serve, in tests).
			sec = time.Now().Unix()
		}
		d.sec = sec
		d.line = h1.AppendDate(d.line[:0], time.Unix(sec, 0))
	}
	return d.line
}
