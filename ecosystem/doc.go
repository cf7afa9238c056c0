// Package ecosystem holds tests that run popular net/http libraries unchanged
// on riptide's compat door (riptide.FromHTTP). It is its own module so that
// the core module never depends on them.
package ecosystem
