package eventstore

import (
	"bytes"
	"compress/gzip"
	"io"
	"testing"
)

func TestAcceptsGzip(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   bool
	}{
		{"", false},
		{"gzip", true},
		{"deflate, gzip;q=0.5", true},
		{"GZIP", true},
		{"gzip;q=0", false},
		{"gzip; q=0", false},
		{"br, deflate", false},
		{"x-gzip", false},
	} {
		if got := AcceptsGzip(tc.header); got != tc.want {
			t.Errorf("AcceptsGzip(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
}

func TestGzipRoundTrip(t *testing.T) {
	body := bytes.Repeat([]byte(`{"event":1}`), 1000)
	for range 2 { // the second use takes the pooled writer
		var buf bytes.Buffer
		if err := Gzip(&buf, body); err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("round trip: %d bytes, err %v", len(got), err)
		}
	}
}

func TestCategory(t *testing.T) {
	for stream, want := range map[string]string{"account-42": "account", "account-42-x": "account", "solo": "solo"} {
		if got := Category(stream); got != want {
			t.Errorf("Category(%q) = %q, want %q", stream, got, want)
		}
	}
}
