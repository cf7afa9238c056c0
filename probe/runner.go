package probe

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"time"
)

// Default timeouts and concurrency of a Runner.
const (
	DefaultReadTimeout = 2 * time.Second
	DefaultCloseWait   = 300 * time.Millisecond
	DefaultConcurrency = 4
)

// Runner runs checks against one server over TCP. The zero value is not
// usable: Addr must be set. A Runner may be used by several goroutines.
type Runner struct {
	// Addr is the server's host:port.
	Addr string
	// ReadTimeout bounds the wait for a response after each write, and the
	// wait for a close after a response that announced "Connection: close".
	// Zero means DefaultReadTimeout.
	ReadTimeout time.Duration
	// CloseWait is how long the runner keeps reading after a final response
	// to see further responses or the server closing the connection; a
	// connection still silent after it is reported open. Zero means
	// DefaultCloseWait.
	CloseWait time.Duration
	// Concurrency bounds the number of checks run at once. Zero means
	// DefaultConcurrency.
	Concurrency int
}

// Result is the outcome of one check against one server.
type Result struct {
	ID          string        `json:"id"`
	Category    Category      `json:"category"`
	RFC         string        `json:"rfc,omitempty"`
	Level       Level         `json:"level"`
	Requirement string        `json:"requirement,omitempty"`
	Expected    string        `json:"expected"`
	Scored      bool          `json:"scored"`
	Verdict     Verdict       `json:"verdict"`
	Reason      string        `json:"reason"`
	Got         string        `json:"got"`
	Duration    time.Duration `json:"durationNs"`
	// Exchange is what happened on the wire; it is not serialised.
	Exchange *Exchange `json:"-"`
}

func (r *Runner) readTimeout() time.Duration {
	if r.ReadTimeout > 0 {
		return r.ReadTimeout
	}
	return DefaultReadTimeout
}

func (r *Runner) closeWait() time.Duration {
	if r.CloseWait > 0 {
		return r.CloseWait
	}
	return DefaultCloseWait
}

// CheckTimeout returns the hard deadline of one check: every step may wait
// for its write, its response and a close, and nothing more.
func (r *Runner) CheckTimeout(c *Check) time.Duration {
	n := time.Duration(len(c.Steps))
	return n*(2*r.readTimeout()+r.closeWait()) + r.readTimeout()
}

// Run runs checks with bounded concurrency and returns their results in the
// order of checks. It returns early, with Skip results, if ctx is done.
func (r *Runner) Run(ctx context.Context, checks []Check) []Result {
	n := r.Concurrency
	if n <= 0 {
		n = DefaultConcurrency
	}
	out := make([]Result, len(checks))
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i := range checks {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i] = r.RunCheck(ctx, &checks[i])
		}()
	}
	wg.Wait()
	return out
}

// RunCheck runs one check on a fresh connection. It never takes longer than
// CheckTimeout(c).
func (r *Runner) RunCheck(ctx context.Context, c *Check) Result {
	start := time.Now()
	res := Result{
		ID: c.ID, Category: c.Category, RFC: c.RFC, Level: c.Level,
		Requirement: c.Requirement, Expected: c.Expected, Scored: c.Scored,
	}
	ctx, cancel := context.WithTimeout(ctx, r.CheckTimeout(c))
	defer cancel()
	hard, _ := ctx.Deadline()
	d := net.Dialer{}
	conn, err := d.DialContext(ctx, "tcp", r.Addr)
	if err != nil {
		res.Verdict, res.Reason, res.Got = Skip, "dial: "+err.Error(), "no connection"
		res.Duration = time.Since(start)
		return res
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	defer conn.Close()

	x := &Exchange{}
	cr := &connReader{conn: conn}
	var prev *StepResult
	verdict, reason := Verdict(""), ""
	for i := range c.Steps {
		st := &c.Steps[i]
		s := &StepResult{}
		x.Steps = append(x.Steps, s)
		if prev != nil && (prev.Closed || cr.eof) {
			break // the connection is gone; later steps never run
		}
		req := st.Request
		if st.Build != nil {
			b, v, why, ok := st.Build(prev)
			if !ok {
				verdict, reason = v, why
				break
			}
			req = b
		}
		s.Sent, s.Request = true, req
		if len(req) > 0 {
			conn.SetWriteDeadline(earliest(time.Now().Add(r.readTimeout()), hard))
			if _, err := conn.Write(req); err != nil {
				s.WriteErr = err.Error()
			}
		}
		r.readStep(cr, s, methodsOf(st, req), hard)
		prev = s
	}
	// Drop trailing unsent placeholders so Outcome only shows what ran.
	for len(x.Steps) > 0 && !x.Steps[len(x.Steps)-1].Sent {
		x.Steps = x.Steps[:len(x.Steps)-1]
	}
	if verdict == "" {
		verdict, reason = c.Judge(x)
	}
	res.Verdict, res.Reason, res.Got = verdict, reason, x.Outcome()
	res.Exchange = x
	res.Duration = time.Since(start)
	return res
}

// methodsOf returns the methods of the requests a step sends.
func methodsOf(st *Step, req []byte) []string {
	if len(st.Methods) > 0 {
		return st.Methods
	}
	m, _, _ := bytes.Cut(req, []byte(" "))
	return []string{strings.ToUpper(string(m))}
}

func earliest(a, b time.Time) time.Time {
	if !b.IsZero() && b.Before(a) {
		return b
	}
	return a
}

// connReader buffers what the server sent; bytes left over from one step
// (an extra response) stay for the next.
type connReader struct {
	conn net.Conn
	buf  []byte
	eof  bool // EOF, reset or another fatal read error was seen
}

var errTimeout = errors.New("probe: read deadline")

// fill reads once, waiting at most until deadline.
func (cr *connReader) fill(deadline time.Time) error {
	if cr.eof {
		return nil
	}
	cr.conn.SetReadDeadline(deadline)
	var tmp [32 << 10]byte
	n, err := cr.conn.Read(tmp[:])
	cr.buf = append(cr.buf, tmp[:n]...)
	if err != nil {
		if n > 0 {
			// Deliver the bytes first; the error recurs on the next read.
			return nil
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return errTimeout
		}
		cr.eof = true
	}
	return nil
}

// readStep reads the responses provoked by one write: the first final
// response within ReadTimeout, then further responses or a close within
// CloseWait of the last one (ReadTimeout when the server announced
// "Connection: close").
func (r *Runner) readStep(cr *connReader, s *StepResult, methods []string, hard time.Time) {
	deadline := earliest(time.Now().Add(r.readTimeout()), hard)
	for {
		resp, n, err := parseHead(cr.buf)
		switch {
		case err == errNeedMore:
			if cr.eof {
				s.Closed = true
				if len(cr.buf) > 0 {
					s.Garbage = append(s.Garbage, cr.buf...)
					cr.buf = nil
				}
				return
			}
			if cr.fill(deadline) == errTimeout {
				if len(s.Responses) == 0 {
					s.TimedOut = true
				}
				if len(cr.buf) > 0 {
					// Bytes that never became a response (content after a
					// HEAD response head, for example).
					s.Garbage = append(s.Garbage, cr.buf...)
					cr.buf = nil
				}
				return
			}
			continue
		case err != nil:
			// Not HTTP: keep the bytes, then see whether the server closes.
			s.Garbage = append(s.Garbage, cr.buf...)
			cr.buf = nil
			for !cr.eof {
				if cr.fill(earliest(time.Now().Add(r.closeWait()), hard)) == errTimeout {
					return
				}
				s.Garbage = append(s.Garbage, cr.buf...)
				cr.buf = nil
			}
			s.Closed = true
			return
		}
		cr.buf = cr.buf[n:]
		method := "GET"
		if k := len(s.Responses); k < len(methods) {
			method = methods[k]
		}
		r.readBody(cr, resp, method, earliest(time.Now().Add(r.readTimeout()), hard))
		if resp.Status/100 == 1 && resp.Status != 101 {
			s.Interim = append(s.Interim, resp)
			continue
		}
		s.Responses = append(s.Responses, resp)
		if resp.Status == 101 {
			return // the connection now speaks another protocol
		}
		wait := r.closeWait()
		if resp.hasToken("Connection", "close") {
			wait = r.readTimeout()
		}
		deadline = earliest(time.Now().Add(wait), hard)
	}
}

// readBody reads resp's body according to its framing, waiting at most
// until deadline.
func (r *Runner) readBody(cr *connReader, resp *Response, method string, deadline time.Time) {
	mode, n, err := resp.framing(method)
	if err != nil {
		resp.Incomplete = true
		return
	}
	for {
		switch mode {
		case bodyNone:
			return
		case bodyLength:
			if int64(len(cr.buf)) >= n {
				resp.Body = append([]byte(nil), cr.buf[:n]...)
				cr.buf = cr.buf[n:]
				return
			}
		case bodyChunked:
			body, used, err := parseChunked(cr.buf)
			if err == nil {
				resp.Body = body
				cr.buf = cr.buf[used:]
				return
			}
			if err != errNeedMore {
				mode = bodyUntilClose // unparseable: keep the raw bytes
			}
		}
		if len(cr.buf) > maxResponseBody || cr.eof || cr.fill(deadline) == errTimeout {
			// Whatever arrived is the body; it is complete only when the
			// body runs to the close and the close came.
			resp.Body = append([]byte(nil), cr.buf...)
			cr.buf = nil
			resp.Incomplete = !(mode == bodyUntilClose && cr.eof)
			return
		}
	}
}
