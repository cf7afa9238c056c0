//go:build go1.26 && !go1.27

package riptide

import (
	"net/http"
	"unsafe"
)

// runtimeMakemap is the runtime's make(map) for a map whose header the
// caller provides: runtime.makemap, which the runtime exports for linkname
// ("Do not remove or change the type signature", go.dev/issue/67401). It
// uses m as the map header when m is not nil.
//
//go:linkname runtimeMakemap runtime.makemap
func runtimeMakemap(t unsafe.Pointer, hint int, m unsafe.Pointer) unsafe.Pointer

// headerMapType is the runtime type descriptor of http.Header (an empty
// interface's first word), which runtime.makemap takes.
var headerMapType = func() unsafe.Pointer {
	var i any = http.Header(nil)
	return (*[2]unsafe.Pointer)(unsafe.Pointer(&i))[0]
}()

// makeHeaderAt is newHeaderIn through runtime.makemap.
func makeHeaderAt(sp *headerMapSpace, hint int) http.Header {
	p := runtimeMakemap(headerMapType, hint, unsafe.Pointer(sp))
	return *(*http.Header)(unsafe.Pointer(&p))
}

// headerMapInPlace reports that runtime.makemap keeps a map's header in a
// headerMapSpace: checked once, at start-up, on the Go versions whose map
// header headerMapSpace copies (this file's build constraint). The check
// makes maps of both kinds (small, and with a table directory) in spaces
// inside larger blocks, fills them and reads back what headerMapSpace's
// fields must then hold; a runtime that wrote anything outside the space,
// or elsewhere in it, fails it.
var headerMapInPlace = func() bool {
	for _, hint := range []int{0, 9} {
		var blk struct {
			before [4]uint64
			sp     headerMapSpace
			after  [4]uint64
		}
		blk.before = [4]uint64{1, 2, 3, 4}
		blk.after = [4]uint64{5, 6, 7, 8}
		h := makeHeaderAt(&blk.sp, hint)
		if *(*unsafe.Pointer)(unsafe.Pointer(&h)) != unsafe.Pointer(&blk.sp) || blk.sp.used != 0 {
			return false
		}
		if hint > 8 && (blk.sp.dirLen != 1 || blk.sp.dirPtr == nil) {
			return false
		}
		keys := []string{"A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K"}
		for i, k := range keys {
			h[k] = []string{k}
			if blk.sp.used != uint64(i+1) || len(h) != i+1 {
				return false
			}
		}
		if blk.sp.dirPtr == nil || blk.sp.dirLen == 0 {
			return false
		}
		for _, k := range keys {
			if v := h[k]; len(v) != 1 || v[0] != k {
				return false
			}
		}
		delete(h, "A")
		if blk.sp.used != uint64(len(keys)-1) || len(h) != len(keys)-1 {
			return false
		}
		if blk.before != [4]uint64{1, 2, 3, 4} || blk.after != [4]uint64{5, 6, 7, 8} {
			return false
		}
	}
	return true
}()
