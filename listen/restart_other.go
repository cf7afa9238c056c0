//go:build !unix

package listen

import (
	"context"
	"errors"
	"os"
)

// Restart is not supported on this system.
func (h *Handoff) Restart(ctx context.Context) (*os.Process, error) {
	return nil, errors.New("listen: Restart is not supported on this system")
}
