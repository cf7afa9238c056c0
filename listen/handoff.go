package listen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Environment variables of the restart protocol.
const (
	// EnvListeners names the listeners passed from descriptor 3 up, as
	// space-separated network:address keys (the arguments of the
	// Handoff.Listen call that made each).
	EnvListeners = "RIPTIDE_LISTENERS"
	// EnvReadyFD is the descriptor of the pipe the new process writes to
	// when it is ready.
	EnvReadyFD = "RIPTIDE_READY_FD"
)

// DefaultReadyTimeout is how long Restart waits for the new process when
// its context has no deadline.
const DefaultReadyTimeout = 30 * time.Second

// Handoff hands listening sockets from a running process to its
// replacement (see the package doc). Make one with NewHandoff, early in
// main. Its methods are safe for concurrent use.
type Handoff struct {
	// Path, Args and Env describe the process Restart starts; empty means
	// os.Executable(), os.Args[1:] and os.Environ().
	Path string
	Args []string
	Env  []string
	// ReusePort makes Listen open new sockets with SO_REUSEPORT.
	ReusePort bool

	mu        sync.Mutex
	inherited map[string]net.Listener // by key, not yet claimed
	owned     []owned                 // what Restart passes on
	readyFD   int                     // -1 when there is no parent
	readyOnce sync.Once
	readyErr  error
}

type owned struct {
	key string
	ln  net.Listener
}

// NewHandoff picks up the listeners passed by a parent process (Restart)
// or else by systemd socket activation (keyed by their
// LISTEN_FDNAMES name and by their address), and removes the protocol's
// environment variables so that they are not passed on by accident.
func NewHandoff() (*Handoff, error) {
	h := &Handoff{inherited: map[string]net.Listener{}, readyFD: -1}
	keys, ready := os.Getenv(EnvListeners), os.Getenv(EnvReadyFD)
	os.Unsetenv(EnvListeners)
	os.Unsetenv(EnvReadyFD)
	if ready != "" {
		fd, err := strconv.Atoi(ready)
		if err != nil || fd < 3 {
			return nil, fmt.Errorf("listen: bad %s %q", EnvReadyFD, ready)
		}
		if err := inheritFD(fd); err != nil {
			return nil, err
		}
		h.readyFD = fd
	}
	if keys != "" {
		names := strings.Fields(keys)
		lns, err := fileListeners(3, names)
		if err != nil {
			return nil, err
		}
		for i, ln := range lns {
			h.inherited[names[i]] = ln
		}
		return h, nil
	}
	lns, names, err := Systemd()
	if err != nil {
		return nil, err
	}
	for i, ln := range lns {
		if names[i] != "" {
			h.inherited["name:"+names[i]] = ln
		}
		h.inherited[ln.Addr().Network()+":"+ln.Addr().String()] = ln
	}
	return h, nil
}

// Inherited reports whether this process was started by Restart.
func (h *Handoff) Inherited() bool { return h.readyFD >= 0 }

// Listen returns the listener for network and addr: the one inherited
// from the previous process (which made it with the same arguments), or a
// systemd socket bound to that address, or named "name:NAME" with
// FileDescriptorName=NAME, or else a new one (network "tcp", "tcp4",
// "tcp6" or "unix"). Restart passes it on to the next process.
//
// Do not close a unix listener and expect its socket file to go: a
// listener passed between processes leaves the file in place.
func (h *Handoff) Listen(network, addr string) (net.Listener, error) {
	key := network + ":" + addr
	h.mu.Lock()
	defer h.mu.Unlock()
	ln, ok := h.inherited[key]
	if ok {
		h.forget(ln)
	} else {
		var err error
		if ln, err = h.listenNew(network, addr); err != nil {
			return nil, err
		}
	}
	if ul, ok := ln.(*net.UnixListener); ok {
		ul.SetUnlinkOnClose(false)
	}
	h.owned = append(h.owned, owned{key, ln})
	return ln, nil
}

// forget removes every inherited key of ln (a systemd socket has two).
func (h *Handoff) forget(ln net.Listener) {
	for k, l := range h.inherited {
		if l == ln {
			delete(h.inherited, k)
		}
	}
}

func (h *Handoff) listenNew(network, addr string) (net.Listener, error) {
	if h.ReusePort && strings.HasPrefix(network, "tcp") {
		return ReusePort(context.Background(), network, addr)
	}
	return net.Listen(network, addr)
}

// Ready tells the parent process, if any, that this one is serving: the
// parent's Restart returns and the parent stops accepting. Call it once
// every listener is being served (Serve may still be starting: connections
// wait in the accept queue). Later calls do nothing.
func (h *Handoff) Ready() error {
	h.readyOnce.Do(func() {
		if h.readyFD < 0 {
			return
		}
		f := os.NewFile(uintptr(h.readyFD), "ready")
		_, h.readyErr = f.Write([]byte{'R'})
		f.Close()
	})
	return h.readyErr
}

// ErrNotReady is returned by Restart when the new process exited, or did
// not call Ready in time.
var ErrNotReady = errors.New("listen: the new process did not become ready")
