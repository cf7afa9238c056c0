package clock

import (
	"net/http"
	"testing"
	"time"
)

// The Date line is formatted once per clock second, not per request: the
// same second returns the cached bytes without touching them.
func TestDateCachedPerSecond(t *testing.T) {
	var d Date
	sec := time.Date(2026, 11, 22, 8, 49, 37, 0, time.UTC).Unix()
	first := d.At(sec)
	if string(first) != "Date: Sun, 22 Nov 2026 08:49:37 GMT\r\n" {
		t.Fatalf("got %q", first)
	}
	again := d.At(sec)
	if &again[0] != &first[0] || len(again) != len(first) {
		t.Fatal("same second formatted again")
	}
	if allocs := testing.AllocsPerRun(100, func() { d.At(sec) }); allocs != 0 {
		t.Fatalf("%v allocs", allocs)
	}
	next := d.At(sec + 1)
	if string(next) != "Date: Sun, 22 Nov 2026 08:49:38 GMT\r\n" {
		t.Fatalf("next second: %q", next)
	}
	if _, err := http.ParseTime(string(next[6 : len(next)-2])); err != nil {
		t.Fatal(err)
	}
}

// The clock runs between the first Acquire and the last Release; while it
// runs, Get and Value agree with it and allocate nothing.
func TestAcquireRelease(t *testing.T) {
	before := time.Now().Unix()
	Acquire()
	Acquire()
	s := Sec()
	if s < before || s > time.Now().Unix() {
		t.Fatalf("Sec() = %d, want about %d", s, before)
	}
	if Counter().Load() != s {
		t.Fatal("Counter disagrees with Sec")
	}
	Release()
	// One user left: the clock still runs, and Get formats its second.
	var d Date
	line := d.Get()
	got, err := http.ParseTime(string(line[len("Date: ") : len(line)-2]))
	if err != nil {
		t.Fatal(err)
	}
	if got.Unix() < s {
		t.Fatalf("Get = %q, clock second %d", line, s)
	}
	if v := Value(); "Date: "+v+"\r\n" != string(d.At(Sec())) {
		t.Fatalf("Value = %q, Date line %q", v, d.At(Sec()))
	}
	if allocs := testing.AllocsPerRun(100, func() { d.Get(); Value() }); allocs != 0 {
		t.Fatalf("%v allocs per Get+Value", allocs)
	}
	Release()
}
