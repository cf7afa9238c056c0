//go:build !unix

package riptide

import "time"

// processCPU is unknown here: 0.
func processCPU() time.Duration { return 0 }
