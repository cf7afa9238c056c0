package middleware

import (
	"hash/maphash"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/riptide-http/riptide"
)

// RateLimitOptions configures RateLimit.
type RateLimitOptions struct {
	// Burst is how many requests a key may make at once (the bucket's
	// size); at least 1.
	Burst int
	// Refill is the time in which one token comes back: a key sustains one
	// request per Refill. time.Minute/100 is 100 requests a minute.
	// Required (> 0).
	Refill time.Duration

	// Header, when set, keys requests by this request header's value (an
	// API key, say) instead of the client address; a request without it
	// is keyed by its address.
	Header string
	// RealIP, when set, finds the client address behind trusted proxies;
	// without it the address is Ctx.RemoteAddr's (which follows
	// Server.Forwarded and Server.ProxyProtocol).
	RealIP *RealIP
	// Key, when set, returns the key itself (valid until the handler
	// returns: request bytes will do) and overrides Header and the client
	// address; an empty key falls back to them.
	Key func(c *riptide.Ctx) []byte

	// MaxKeys bounds the keys tracked at once (default 65536; rounded up
	// to a multiple of 8). The table is allocated whole by RateLimit,
	// 16 bytes a key, and never grows; see RateLimiter for what happens
	// when more keys come.
	MaxKeys int
	// Now is the clock (default time.Now); tests inject their own.
	Now func() time.Time
	// Limited answers a request over its limit, after Retry-After is set
	// (default: 429 Too Many Requests through Ctx.Error).
	Limited riptide.Handler
}

// RateLimit returns middleware that limits each key (the client address
// by default) to opts.Burst requests at once and one more per
// opts.Refill, answering the rest with 429 and Retry-After: the seconds
// until a request would be let through. It panics on Burst < 1 or
// Refill <= 0. See RateLimiter for the algorithm and its memory bound.
func RateLimit(opts RateLimitOptions) func(riptide.Handler) riptide.Handler {
	return NewRateLimiter(opts).Middleware
}

// RateLimiter is a token bucket per key in a table of fixed size. A bucket
// is kept as the time it will be full again (GCRA, equivalent to a token
// bucket): one int64 and the key's 64-bit hash (maphash, seeded per
// limiter, so clients cannot aim at collisions), 16 bytes a key. Keys
// hash to sets of 8 slots, one mutex each. A new key takes a slot whose
// bucket is already full again (nothing lost: a full bucket is what an
// untracked key gets), else the slot of the set's bucket closest to full:
// a flood of new keys, each with one request spent, can only push out
// keys that spent as little, never a key that used its burst up. Allow
// and the middleware allocate nothing (TestRateLimitZeroAllocs).
type RateLimiter struct {
	opts  RateLimitOptions
	burst int64 // Burst*Refill in nanoseconds: how far ahead a bucket may run
	every int64 // Refill in nanoseconds
	seed  maphash.Seed
	base  time.Time // the clock's zero
	sets  []rateSet
	mask  uint64
}

// rateSet is one set of slots; full holds the time (nanoseconds since
// base) each slot's bucket is full again, 0 for an empty slot.
type rateSet struct {
	mu   sync.Mutex
	hash [8]uint64
	full [8]int64
}

// NewRateLimiter returns a limiter with opts, for its Allow method or its
// Middleware. It panics as RateLimit does.
func NewRateLimiter(opts RateLimitOptions) *RateLimiter {
	if opts.Burst < 1 || opts.Refill <= 0 {
		panic("middleware: RateLimit needs Burst >= 1 and Refill > 0")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxKeys <= 0 {
		opts.MaxKeys = 1 << 16
	}
	n := 1
	for n*8 < opts.MaxKeys {
		n <<= 1
	}
	return &RateLimiter{
		opts:  opts,
		burst: int64(opts.Burst) * int64(opts.Refill),
		every: int64(opts.Refill),
		seed:  maphash.MakeSeed(),
		base:  opts.Now(),
		sets:  make([]rateSet, n),
		mask:  uint64(n - 1),
	}
}

// Allow takes a token from key's bucket, or reports how long until one
// is there.
func (l *RateLimiter) Allow(key []byte) (ok bool, retryAfter time.Duration) {
	return l.allow(maphash.Bytes(l.seed, key))
}

func (l *RateLimiter) allow(h uint64) (bool, time.Duration) {
	if h == 0 {
		h = 1 // 0 marks an empty slot
	}
	now := int64(l.opts.Now().Sub(l.base)) + l.burst // > 0 and > every past full time
	s := &l.sets[(h>>32^h)&l.mask]
	s.mu.Lock()
	defer s.mu.Unlock()
	i, victim := -1, 0
	for j := range s.hash {
		if s.hash[j] == h {
			i = j
			break
		}
		if s.full[j] < s.full[victim] {
			victim = j
		}
	}
	if i < 0 {
		i = victim // empty (0), full again (<= now), or closest to full
		s.hash[i], s.full[i] = h, 0
	}
	full := max(s.full[i], now) + l.every
	if wait := full - now - l.burst; wait > 0 {
		return false, time.Duration(wait)
	}
	s.full[i] = full
	return true, 0
}

// tracked counts the slots of buckets not yet full again: the keys whose
// state the table holds (tests).
func (l *RateLimiter) tracked() int {
	now := int64(l.opts.Now().Sub(l.base)) + l.burst
	n := 0
	for i := range l.sets {
		s := &l.sets[i]
		s.mu.Lock()
		for _, f := range s.full {
			if f > now {
				n++
			}
		}
		s.mu.Unlock()
	}
	return n
}

// Middleware limits next's requests by key as RateLimit describes.
func (l *RateLimiter) Middleware(next riptide.Handler) riptide.Handler {
	return riptide.HandlerFunc(func(c *riptide.Ctx) {
		ok, wait := l.allow(l.keyHash(c))
		if ok {
			next.ServeCtx(c)
			return
		}
		var b [20]byte
		c.SetHeaderBytes("Retry-After", strconv.AppendInt(b[:0], int64((wait+time.Second-1)/time.Second), 10))
		if l.opts.Limited != nil {
			l.opts.Limited.ServeCtx(c)
			return
		}
		c.Error(429, "Too Many Requests")
	})
}

// keyHash hashes the request's key: Key's, the Header's value, or the
// client address's 16 bytes (IPv4 mapped, so the two forms of an IPv4
// address are one key).
func (l *RateLimiter) keyHash(c *riptide.Ctx) uint64 {
	if l.opts.Key != nil {
		if k := l.opts.Key(c); len(k) > 0 {
			return maphash.Bytes(l.seed, k)
		}
	}
	if l.opts.Header != "" {
		if k := c.Header(l.opts.Header); len(k) > 0 {
			return maphash.Bytes(l.seed, k)
		}
	}
	var a netip.Addr
	if l.opts.RealIP != nil {
		a = l.opts.RealIP.ClientIP(c)
	} else {
		a = peerAddr(c)
	}
	// An address hashes as its 16 bytes and a mark, apart from a header
	// value of 16 bytes.
	var k [17]byte
	a16 := a.As16()
	copy(k[:], a16[:])
	k[16] = 'a'
	return maphash.Bytes(l.seed, k[:])
}
