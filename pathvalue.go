package riptide

// MaxPathValues is how many named path values a Ctx holds for one request.
// Routers that set path values (see router.Router) refuse patterns with
// more wildcards than this at registration.
const MaxPathValues = 8

// pathValues are the request's named path values: a fixed array, so that
// setting and reading them never allocates. Reset per request.
type pathValues struct {
	n      int
	names  [MaxPathValues]string
	values [MaxPathValues][]byte
}

// PathValue returns the value of the path wildcard named name, as set by a
// router (or SetPathValue) for this request, or nil. The slice is valid only
// until the handler returns, like every slice a Ctx hands out.
func (x *Ctx) PathValue(name string) []byte {
	pv := &x.pv
	for i := 0; i < pv.n; i++ {
		if pv.names[i] == name {
			return pv.values[i]
		}
	}
	return nil
}

// SetPathValue sets the path value named name for the rest of this
// request, replacing an earlier value of that name. value is kept, not
// copied: it must stay valid until the handler returns (a slice of the
// request, or of a buffer the caller owns for that long). It panics when
// the request already holds MaxPathValues other names, a programming error
// of the router that sets them.
func (x *Ctx) SetPathValue(name string, value []byte) {
	pv := &x.pv
	for i := 0; i < pv.n; i++ {
		if pv.names[i] == name {
			pv.values[i] = value
			return
		}
	}
	if pv.n == MaxPathValues {
		panic("riptide: more than MaxPathValues path values")
	}
	pv.names[pv.n], pv.values[pv.n] = name, value
	pv.n++
}

// PathValues iterates over the request's path values in the order they
// were set.
func (x *Ctx) PathValues(yield func(name string, value []byte) bool) {
	pv := &x.pv
	for i := 0; i < pv.n; i++ {
		if !yield(pv.names[i], pv.values[i]) {
			return
		}
	}
}

// ClearPathValues removes the request's path values, for a router that
// dispatches the same Ctx again (a mounted sub-router, a benchmark loop).
func (x *Ctx) ClearPathValues() { x.pv.n = 0 }
