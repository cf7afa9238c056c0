package http3

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestChromiumRecipe: docs/http3.md's local-browser recipe names both
// Chromium flags, and its openssl pipeline computes the same SPKI hash as
// the one Chromium is given by the interop tests (and h3example logs):
// base64 of SHA-256 over the key's SubjectPublicKeyInfo.
func TestChromiumRecipe(t *testing.T) {
	doc, err := os.ReadFile("../docs/http3.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--origin-to-force-quic-on=", "--ignore-certificate-errors-spki-list=", "--user-data-dir="} {
		if !strings.Contains(string(doc), flag) {
			t.Errorf("docs/http3.md: no %s in the local-browser recipe", flag)
		}
	}
	m := regexp.MustCompile(`(?s)SPKI=\$\((openssl x509 -in cert\.pem .*?base64)\)`).FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/http3.md: no SPKI=$(openssl ...) pipeline for cert.pem")
	}
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed")
	}
	p := newInteropPKI(t)
	cmd := exec.Command("/bin/sh", "-c", strings.ReplaceAll(string(m[1]), "cert.pem", p.certFile))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the recipe's pipeline: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != p.spki {
		t.Fatalf("the recipe's pipeline gives %q, Chromium's pin is %q", got, p.spki)
	}
}
