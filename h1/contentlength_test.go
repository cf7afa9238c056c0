package h1

import "testing"

// RFC 9110 §8.6: a Content-Length too large to represent is invalid. The
// digit parser once wrapped past 2^63, so "18446744073709551617" framed a
// 1-byte body (a smuggling vector: a hop reading it as 2^64+1 disagrees)
// and "10000000000000000000" a negative length.
func TestContentLengthOverflow(t *testing.T) {
	for _, cl := range []string{"18446744073709551617", "18446744073709551616", "10000000000000000000", "20000000000000000000", "4611686018427387905"} {
		var r Request
		_, err := r.Parse([]byte("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: "+cl+"\r\n\r\nx"), nil)
		if err != ErrBadContentLength {
			t.Errorf("Content-Length: %s: err %v, ContentLength %d; want ErrBadContentLength", cl, err, r.ContentLength)
		}
	}
	var r Request
	if _, err := r.Parse([]byte("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4611686018427387904\r\n\r\n"), nil); err != nil || r.ContentLength != 1<<62 {
		t.Errorf("Content-Length 2^62: %d, %v", r.ContentLength, err)
	}
}
