//go:build !go1.26 || go1.27

package riptide

import "net/http"

// headerMapInPlace is false on Go versions whose map header layout
// headerMapSpace does not copy: every header map is made with make.
const headerMapInPlace = false

func makeHeaderAt(*headerMapSpace, int) http.Header { panic("unreachable") }
