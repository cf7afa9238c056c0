package h1

// Building a Request from fields decoded by another protocol (an HTTP/2
// HEADERS frame), so that it reads exactly like one Parse filled.

// SetRequestLine sets the method and target, checked and split as Parse
// does for a request line of version 1.minor.
func (r *Request) SetRequestLine(method, target []byte, minor int) error {
	r.Method, r.Target = method, target
	r.Major, r.Minor = 1, minor
	if !IsToken(method) {
		return ErrBadMethod
	}
	if len(target) == 0 {
		return ErrBadTarget
	}
	return r.parseTarget()
}

// AddHeader appends a header field, classified as Parse classifies it. The
// caller checks names, values and limits.
func (r *Request) AddHeader(name, value []byte) {
	k := Lookup(name)
	r.Headers = append(r.Headers, Header{Name: name, Value: value, Key: k})
	if k != Unknown && r.known[k] == 0 && len(r.Headers) < 256 {
		r.known[k] = uint8(len(r.Headers))
	}
}
