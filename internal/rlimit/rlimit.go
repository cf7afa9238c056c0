// Package rlimit raises the open-file limit for the tests and the benchmark
// harness, which open thousands of connections, on every system that has
// one.
package rlimit

// Fallback is the descriptor limit callers should assume when RaiseNoFile
// fails: a modest one that every supported system allows.
const Fallback = 1024
