//go:build !unix

package listen

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
)

// Where descriptors cannot be handed over, Handoff still listens, and
// Restart, an inherited ready pipe and systemd sockets fail with an error
// naming the system instead of failing to build.
func TestHandoffUnsupported(t *testing.T) {
	h, err := NewHandoff()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := h.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, err := h.Restart(context.Background()); err == nil || !strings.Contains(err.Error(), "not supported on "+runtime.GOOS) {
		t.Errorf("Restart: %v, want not supported on %s", err, runtime.GOOS)
	}

	t.Setenv(EnvReadyFD, "3")
	if _, err := NewHandoff(); !errors.Is(err, errInheritUnsupported) {
		t.Errorf("NewHandoff with %s: %v, want %v", EnvReadyFD, err, errInheritUnsupported)
	}
	t.Setenv(EnvReadyFD, "")
	t.Setenv(EnvListeners, "tcp:127.0.0.1:1")
	if _, err := NewHandoff(); !errors.Is(err, errInheritUnsupported) {
		t.Errorf("NewHandoff with %s: %v, want %v", EnvListeners, err, errInheritUnsupported)
	}
}
