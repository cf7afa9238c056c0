//go:build !unix

package riptide_test

import "testing"

// raiseNoFile cannot change descriptor limits here; it assumes a modest one.
func raiseNoFile(t testing.TB, want uint64) uint64 { return 1024 }
