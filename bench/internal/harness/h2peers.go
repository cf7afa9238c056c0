package harness

// The HTTP/2 reference peers that are not Go: h2o and nghttpd (Debian
// packages h2o and nghttp2-server), each serving the 13-byte
// "Hello, World!" of GET / as a static file, over h2c (prior knowledge) or
// TLS (ALPN h2) with a self-signed certificate, with as many threads as the
// Go servers may use CPUs.

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
)

func h2oPath() (string, error) {
	if p, err := exec.LookPath("h2o"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("h2o not installed (apt-get install -y h2o)")
}

func nghttpdPath() (string, error) {
	if p, err := exec.LookPath("nghttpd"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/sbin/nghttpd"); err == nil {
		return "/usr/sbin/nghttpd", nil
	}
	return "", fmt.Errorf("nghttpd not installed (apt-get install -y nghttp2-server)")
}

// writePeerFiles writes dir/htdocs/index.html and dir/htdocs/hello.txt
// (both the 13-byte body of GET /) and, for TLS, a fresh self-signed
// certificate and key as dir/cert.pem and dir/key.pem.
func writePeerFiles(dir string, useTLS bool) error {
	// h2o started as root serves as nobody: the files must be readable.
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	docs := filepath.Join(dir, "htdocs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		return err
	}
	for _, name := range []string{"index.html", "hello.txt"} {
		if err := os.WriteFile(filepath.Join(docs, name), []byte(benchserver.Hello), 0o644); err != nil {
			return err
		}
	}
	if !useTLS {
		return nil
	}
	return writeCertFiles(dir)
}

// writeCertFiles writes a fresh self-signed certificate for 127.0.0.1 and
// localhost (benchserver.SelfSignedTLS) and its key as dir/cert.pem and
// dir/key.pem, for the servers that read them from files.
func writeCertFiles(dir string) error {
	cfg, err := benchserver.SelfSignedTLS()
	if err != nil {
		return err
	}
	cert := cfg.Certificates[0]
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		return err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key})
	if err := os.WriteFile(filepath.Join(dir, "cert.pem"), certPEM, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "key.pem"), keyPEM, 0o600)
}

// h2oArgs writes an h2o configuration for port in dir and returns h2o's
// argument vector (without the binary).
func h2oArgs(dir string, port, threads int, useTLS bool) ([]string, error) {
	if err := writePeerFiles(dir, useTLS); err != nil {
		return nil, err
	}
	ssl := ""
	if useTLS {
		// No OCSP stapling: the self-signed certificate names no
		// responder, and h2o would run its perl fetcher (absent from a
		// packed kit) during the measured runs.
		ssl = fmt.Sprintf("\n  ssl:\n    certificate-file: %s/cert.pem\n    key-file: %s/key.pem\n    ocsp-update-interval: 0", dir, dir)
	}
	// hello.txt as the index: text/plain, as the Go servers answer.
	// max-connections: h2o's default, 1024, would refuse the idle
	// workloads' thousands.
	conf := fmt.Sprintf(`num-threads: %d
max-connections: 65536
error-log: %[2]s/error.log
listen:
  host: 127.0.0.1
  port: %[3]d%[4]s
hosts:
  default:
    paths:
      /:
        file.dir: %[2]s/htdocs
        file.index: ["hello.txt"]
`, threads, dir, port, ssl)
	path := filepath.Join(dir, "h2o.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	return []string{"-c", path}, nil
}

// nghttpdArgs prepares dir for nghttpd and returns its argument vector
// (without the binary): -n threads, htdocs as the document root, and
// --no-tls for h2c.
func nghttpdArgs(dir string, port, threads int, useTLS bool) ([]string, error) {
	if err := writePeerFiles(dir, useTLS); err != nil {
		return nil, err
	}
	// GET / is htdocs/index.html: served as text/plain, like the others.
	mime := filepath.Join(dir, "mime.types")
	if err := os.WriteFile(mime, []byte("text/plain html\n"), 0o644); err != nil {
		return nil, err
	}
	a := []string{"-n" + strconv.Itoa(threads), "-a", "127.0.0.1", "-d", filepath.Join(dir, "htdocs"), "--mime-types-file=" + mime}
	if !useTLS {
		return append(a, "--no-tls", strconv.Itoa(port)), nil
	}
	return append(a, strconv.Itoa(port), filepath.Join(dir, "key.pem"), filepath.Join(dir, "cert.pem")), nil
}
