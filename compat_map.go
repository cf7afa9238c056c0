package riptide

import (
	"net/http"
	"unsafe"
)

// headerMapSpace is room for the runtime's header of a map (Go 1.24's
// internal/runtime/maps.Map: the same field types in the same order, so the
// same layout and the same pointer bitmap), so that a request's
// http.Header maps can live inside the request's own allocation
// (newHeaderIn). Unused when the runtime does not take it (headerMapInPlace
// false): then each map is made with make.
type headerMapSpace struct {
	used              uint64
	seed              uintptr
	dirPtr            unsafe.Pointer
	dirLen            int
	globalDepth       uint8
	globalShift       uint8
	writing           uint8
	tombstonePossible bool
	clearSeq          uint64
}

// newHeaderIn returns a new, empty http.Header with room for hint keys. Its
// map header lives in sp, which must be zero, inside an allocation made for
// this request only (it is as fresh as one make would give: nothing reuses
// it), and must not be used for anything else; the map keeps sp's
// allocation alive. This saves the allocation of the map header, one of the
// four a map with more than 8 keys costs (two for a smaller one, the first
// key's group included). Where the runtime's map layout is not the one
// known (other Go versions, or the start-up check failed), it is make.
func newHeaderIn(sp *headerMapSpace, hint int) http.Header {
	if !headerMapInPlace {
		return make(http.Header, hint)
	}
	return makeHeaderAt(sp, hint)
}
