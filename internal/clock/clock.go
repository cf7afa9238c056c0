// Package clock is the server clock: one goroutine per process (while any
// user holds it) stores the current Unix second once a second. Connections
// compare it with the second of their own formatted Date header and
// reformat only when it moved, so no request formats a date or reads the
// real clock where a second's precision will do, and no buffer is shared
// between goroutines.
package clock

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/riptide-http/riptide/h1"
)

var (
	sec   atomic.Int64
	mu    sync.Mutex
	users int
	stop  chan struct{}
)

// Sec returns the clock's current Unix second, or 0 when no user holds the
// clock.
func Sec() int64 { return sec.Load() }

// Counter is the clock's second itself, for packages that take an
// *atomic.Int64 (the event loop's Config.Clock). Only the clock stores it.
func Counter() *atomic.Int64 { return &sec }

// Acquire starts the clock goroutine for the first user; each Acquire is
// paired with a Release.
func Acquire() {
	mu.Lock()
	defer mu.Unlock()
	users++
	if users > 1 {
		return
	}
	sec.Store(time.Now().Unix())
	done := make(chan struct{})
	stop = done
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
			case <-done:
				return
			case n := <-t.C:
				sec.Store(n.Unix())
				t.Reset(untilNext())
			}
		}
	}()
}

// Release stops the clock goroutine after its last user. The second it
// stored last stays readable.
func Release() {
	mu.Lock()
	defer mu.Unlock()
	users--
	if users == 0 {
		close(stop)
	}
}

// Date is one goroutine's formatted "Date: ...\r\n" line (a connection's);
// the zero value is ready.
type Date struct {
	sec  int64
	line []byte
}

// Get returns the Date line for the clock's current second.
func (d *Date) Get() []byte { return d.At(sec.Load()) }

// At returns the Date line for Unix second s, formatting it only when s
// differs from the cached one. s == 0 (no clock running: a Ctx driven
// outside Serve, in tests) reads the real clock.
func (d *Date) At(s int64) []byte {
	if s != d.sec || len(d.line) == 0 {
		if s == 0 {
			s = time.Now().Unix()
		}
		d.sec = s
		d.line = h1.AppendDate(d.line[:0], time.Unix(s, 0))
	}
	return d.line
}

// value is the Date field value of one second, shared by every goroutine.
type value struct {
	sec int64
	s   string
}

var shared atomic.Pointer[value]

// Value returns the Date field value (no name, no CRLF) for the clock's
// current second, made once a second and shared by every goroutine: for
// protocols that carry it as a string field (HTTP/2's "date"). With no
// clock running it reads the real clock each call.
func Value() string {
	s := sec.Load()
	if v := shared.Load(); v != nil && v.sec == s && s != 0 {
		return v.s
	}
	var d Date
	line := d.At(s)
	v := &value{sec: s, s: string(line[len("Date: ") : len(line)-2])}
	shared.Store(v)
	return v.s
}
