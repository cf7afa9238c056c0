//go:build unix

package rlimit

import (
	"syscall"
	"testing"
)

// RaiseNoFile lifts a soft limit below want up to want (within the hard
// limit) and never lowers one above it.
func TestRaiseNoFile(t *testing.T) {
	var orig syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &orig); err != nil {
		t.Fatal(err)
	}
	if uint64(orig.Max) < 300 {
		t.Skipf("hard RLIMIT_NOFILE %d", orig.Max)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &orig) })
	low := orig
	set(&low.Cur, 200)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	if got, err := RaiseNoFile(250); got != 250 || err != nil {
		t.Errorf("RaiseNoFile(250) from 200 = %d, %v; want 250", got, err)
	}
	if got, err := RaiseNoFile(220); got != 250 || err != nil {
		t.Errorf("RaiseNoFile(220) at 250 = %d, %v; want 250 kept", got, err)
	}
	if hard := uint64(orig.Max); hard < 1<<20 { // not "unlimited"
		if got, _ := RaiseNoFile(hard + 1000); got != hard {
			t.Errorf("RaiseNoFile(hard+1000) = %d, want the hard limit %d", got, hard)
		}
	}
}
