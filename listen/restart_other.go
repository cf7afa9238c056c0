//go:build !unix

package listen

import (
	"context"
	"errors"
	"os"
	"runtime"
)

// errRestartUnsupported is returned by Restart where it cannot hand
// descriptors to a new process (every system but Unix).
var errRestartUnsupported = errors.New("listen: Restart is not supported on " + runtime.GOOS)

// Restart is not supported on this system: it returns an error saying so.
func (h *Handoff) Restart(ctx context.Context) (*os.Process, error) {
	return nil, errRestartUnsupported
}
