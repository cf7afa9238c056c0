package riptide

// Per-request values. A Ctx carries values that middleware hands on to the
// handler (the authenticated user, a trace span, a tenant) as typed
// locals: SetLocal stores one under a key, Local reads it, and Value (the
// context.Context method) reads the same, so code that takes the Ctx as a
// context.Context finds them as it would context.WithValue's. They live in
// a small array inside the Ctx, cleared before each request: a request
// that sets none pays nothing, and up to inlineLocals of them cost no
// allocation beyond boxing the value in an interface (none for pointers,
// zero-size types and small integers).

// inlineLocals is how many locals a Ctx holds without allocating.
const inlineLocals = 4

// local is one per-request value.
type local struct {
	key, val any
}

// locals are a request's per-request values.
type locals struct {
	n      int
	inline [inlineLocals]local
	more   []local // beyond inlineLocals, rare
}

// SetLocal stores v under key for the rest of this request, replacing an
// earlier value of that key; Local and Value return it. As with
// context.WithValue, key must be comparable, and should be of a type the
// package that sets it owns (an unexported struct type, say) so that
// packages do not collide. Locals are cleared before the next request on
// the connection: like everything a Ctx holds, they are not for keeping.
// SetLocal must not be called concurrently with Local or Value.
func (x *Ctx) SetLocal(key, v any) {
	l := &x.locals
	if i := l.find(key); i >= 0 {
		*l.at(i) = local{key, v}
		return
	}
	if l.n < inlineLocals {
		l.inline[l.n] = local{key, v}
	} else {
		l.more = append(l.more, local{key, v})
	}
	l.n++
}

// Local returns the value SetLocal stored under key for this request, or
// nil.
func (x *Ctx) Local(key any) any {
	l := &x.locals
	if i := l.find(key); i >= 0 {
		return l.at(i).val
	}
	return nil
}

// Value returns the value SetLocal stored under key for this request, or
// nil: with it a Ctx passed as a context.Context carries the request's
// locals, as a context.WithValue chain would.
func (x *Ctx) Value(key any) any {
	if x.locals.n == 0 {
		return nil
	}
	return x.Local(key)
}

// find returns the index of key's local, or -1.
func (l *locals) find(key any) int {
	for i := 0; i < l.n; i++ {
		if l.at(i).key == key {
			return i
		}
	}
	return -1
}

// at returns the i'th local.
func (l *locals) at(i int) *local {
	if i < inlineLocals {
		return &l.inline[i]
	}
	return &l.more[i-inlineLocals]
}

// reset drops the locals (so that they do not keep values alive across
// requests).
func (l *locals) reset() {
	if l.n == 0 {
		return
	}
	clear(l.inline[:])
	clear(l.more)
	l.more = l.more[:0]
	l.n = 0
}

// Pattern returns the pattern of the route that matched the request, as
// registered with the router (e.g. "GET /users/{id}"), like net/http's
// Request.Pattern; "" when no router set one (SetPattern). Use it as a
// metric label: it names the route, not the path.
func (x *Ctx) Pattern() string { return x.pattern }

// SetPattern records the pattern that matched the request, for Pattern;
// routers call it. It is cleared before each request.
func (x *Ctx) SetPattern(p string) { x.pattern = p }
