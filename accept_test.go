package riptide

import (
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Accept-error lines are at least acceptLogEvery apart, and each says how
// many errors went unlogged since the last one.
func TestAcceptLogRateLimit(t *testing.T) {
	t.Parallel()
	var l acceptLog
	sec := int64(time.Second)
	steps := []struct {
		now        int64
		ok         bool
		suppressed uint64
	}{
		{5, true, 0}, // the first error is logged
		{6, false, 0},
		{sec / 2, false, 0},
		{sec + 4, false, 0}, // under a second after the first line
		{sec + 5, true, 3},  // a second after it: logged, three unlogged since
		{sec + 6, false, 0},
		{10 * sec, true, 1},
		{10*sec + 1, false, 0},
	}
	for i, s := range steps {
		n, ok := l.allow(s.now)
		if ok != s.ok || n != s.suppressed {
			t.Errorf("step %d (at %v): logged %v, suppressed %d; want %v, %d", i, time.Duration(s.now), ok, n, s.ok, s.suppressed)
		}
	}
}

// acceptError sorts errors into Stats.AcceptErrors by cause and logs the
// first one with its back-off.
func TestAcceptErrorCounts(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	srv := &Server{Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	for _, err := range []error{
		os.NewSyscallError("accept4", syscall.EMFILE),
		&net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept", syscall.ENFILE)},
		os.NewSyscallError("accept4", syscall.ENOBUFS),
		os.NewSyscallError("accept4", syscall.ENOMEM),
		os.NewSyscallError("accept4", syscall.EPERM),
		errors.New("listener wrapper failed"),
	} {
		srv.acceptError(err, 5*time.Millisecond)
	}
	var st Stats
	srv.Stats(&st)
	if want := (AcceptErrors{FDLimit: 2, Memory: 2, Other: 2}); st.AcceptErrors != want {
		t.Errorf("accept errors %+v, want %+v", st.AcceptErrors, want)
	}
	if got, want := logs.String(), `level=ERROR msg="riptide: accept error; retrying" err="accept4: too many open files" delay=5ms suppressed=0`+"\n"; !strings.HasSuffix(got, want) || strings.Count(got, "\n") != 1 {
		t.Errorf("log %q, want one line ending %q", got, want)
	}
	m := string(AppendMetrics(nil, &st))
	for _, want := range []string{
		"# TYPE riptide_accept_errors_total counter\n",
		`riptide_accept_errors_total{cause="fd_limit"} 2` + "\n",
		`riptide_accept_errors_total{cause="memory"} 2` + "\n",
		`riptide_accept_errors_total{cause="other"} 2` + "\n",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q:\n%s", want, m)
		}
	}
}

// The goroutine engine retries the accept errors that leave a listener
// usable and gives up on the rest, as the event loop does.
func TestAcceptRetryable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EMFILE)}, true},
		{&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.ENFILE)}, true},
		{&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.ENOBUFS)}, true},
		{&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.ENOMEM)}, true},
		{&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EPERM)}, true},
		{&net.OpError{Op: "accept", Err: os.ErrDeadlineExceeded}, true},
		{&net.OpError{Op: "accept", Err: net.ErrClosed}, false},
		{errors.New("listener wrapper failed"), false},
	} {
		if got := acceptRetryable(c.err); got != c.want {
			t.Errorf("acceptRetryable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
	for i, want := range []time.Duration{5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000} {
		var d time.Duration
		for range i + 1 {
			d = acceptBackoff(d)
		}
		if d != want*time.Millisecond {
			t.Errorf("back-off after %d failures: %v, want %v", i+1, d, want*time.Millisecond)
		}
	}
}
