package benchserver

import (
	"crypto/tls"
	"time"

	"github.com/riptide-http/riptide/internal/testcert"
)

// SelfSignedTLS returns a TLS configuration holding a freshly generated
// self-signed ECDSA P-256 certificate for 127.0.0.1, ::1 and localhost,
// valid for a day (internal/testcert). NextProtos is left empty: each
// server's ServeTLS sets up ALPN (h2, http/1.1) itself. Load generators
// and tests do not verify the certificate.
func SelfSignedTLS() (*tls.Config, error) {
	cert, err := testcert.New(24 * time.Hour)
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}}, nil
}
