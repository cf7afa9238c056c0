// Package israce reports whether the race detector is compiled in. Its
// instrumentation allocates and inflates memory, so allocation and memory
// tests skip under it (and race-only tests skip without it).
package israce
