//go:build unix

package listen

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Restart starts the replacement process with every listener of Listen
// (and every inherited one not claimed) and waits until it calls Ready.
// It then returns the process: the caller should stop accepting and drain
// (riptide.Server.Shutdown) and exit. On error, the new process has been
// killed, and the caller should go on serving. ctx bounds the wait
// (DefaultReadyTimeout if it has no deadline).
func (h *Handoff) Restart(ctx context.Context) (*os.Process, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fds, keys, err := h.dupListeners()
	defer closeFDs(fds)
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	proc, err := h.start(fds, keys, w)
	w.Close() // the child has its copy; EOF on r now means it is gone
	if err != nil {
		return nil, err
	}
	if err := waitReady(ctx, r); err != nil {
		proc.Kill()
		proc.Wait()
		return nil, err
	}
	return proc, nil
}

// start starts the new process with fds at 3 and up and the ready pipe
// after them. It uses syscall.StartProcess, which takes raw descriptors:
// os.StartProcess would call File.Fd, which puts the shared socket in
// blocking mode, and a blocking accept in this process could then take a
// connection after Shutdown.
func (h *Handoff) start(fds []int, keys []string, ready *os.File) (*os.Process, error) {
	path := h.Path
	if path == "" {
		var err error
		if path, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	args := h.Args
	if args == nil {
		args = os.Args[1:]
	}
	env := h.Env
	if env == nil {
		env = os.Environ()
	}
	env = append(withoutProtocolEnv(env),
		EnvListeners+"="+strings.Join(keys, " "),
		EnvReadyFD+"="+strconv.Itoa(3+len(fds)))
	files := []uintptr{0, 1, 2}
	for _, fd := range fds {
		files = append(files, uintptr(fd))
	}
	files = append(files, ready.Fd())
	pid, err := syscall.ForkExec(path, append([]string{path}, args...), &syscall.ProcAttr{Env: env, Files: files})
	if err != nil {
		return nil, err
	}
	return os.FindProcess(pid)
}

// dupListeners duplicates the descriptor of every listener to pass on.
func (h *Handoff) dupListeners() (fds []int, keys []string, err error) {
	all := h.owned
	for k, ln := range h.inherited {
		all = append(all, owned{k, ln})
	}
	seen := map[any]bool{}
	for _, o := range all {
		if seen[o.ln] {
			continue
		}
		seen[o.ln] = true
		sc, ok := o.ln.(syscall.Conn)
		if !ok {
			return fds, nil, fmt.Errorf("listen: %s: listener %T has no file descriptor", o.key, o.ln)
		}
		rc, err := sc.SyscallConn()
		if err != nil {
			return fds, nil, err
		}
		var dfd int
		var derr error
		if err := rc.Control(func(fd uintptr) { dfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
			return fds, nil, err
		}
		if derr != nil {
			return fds, nil, derr
		}
		fds = append(fds, dfd)
		keys = append(keys, o.key)
	}
	return fds, keys, nil
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

func withoutProtocolEnv(env []string) []string {
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case EnvListeners, EnvReadyFD, "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// waitReady waits for the new process's ready byte on r.
func waitReady(ctx context.Context, r *os.File) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(DefaultReadyTimeout)
	}
	r.SetReadDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { r.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	var b [1]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %v", ErrNotReady, ctx.Err())
		}
		return fmt.Errorf("%w: %v", ErrNotReady, err)
	}
	return nil
}
