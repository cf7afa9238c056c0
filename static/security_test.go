package static

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const secret = "TOP SECRET outside the root"

// secretTree makes parent/{secret.txt, root/...} and returns root: a
// secret next to the served directory, a symbolic link from the root to
// it, one to a directory outside, and one that stays inside.
func secretTree(t *testing.T) (root string) {
	parent := t.TempDir()
	root = filepath.Join(parent, "root")
	for _, d := range []string{root, filepath.Join(root, "sub"), filepath.Join(parent, "outdir")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(parent, "secret.txt"), secret)
	write(filepath.Join(parent, "outdir", "f.txt"), secret)
	write(filepath.Join(root, "ok.txt"), "public")
	write(filepath.Join(root, "sub", "inner.txt"), "inner")
	write(filepath.Join(root, ".env"), secret)
	for link, target := range map[string]string{
		"out.txt":    "../secret.txt",
		"abs.txt":    filepath.Join(parent, "secret.txt"),
		"outdir":     "../outdir",
		"inside":     "sub/inner.txt",
		"sub/up.txt": "../ok.txt",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Skipf("symlinks: %v", err)
		}
	}
	return root
}

// traversal are request targets that try to leave the root or reach a
// hidden file; none may be answered with a file's bytes.
var traversal = []string{
	"/../secret.txt",
	"/..%2fsecret.txt",
	"/%2e%2e/secret.txt",
	"/%2E%2E%2Fsecret.txt",
	"/sub/../../secret.txt",
	"/sub/%2e%2e/%2e%2e/secret.txt",
	"/sub%2f..%2f..%2fsecret.txt",
	"/..\\secret.txt",
	"/..%5csecret.txt",
	"/sub%5c..%5c..%5csecret.txt",
	"/ok.txt%00.html",
	"/ok.txt%00",
	"//etc/passwd",
	"/%2fetc/passwd",
	"/./ok.txt",
	"/sub/./inner.txt",
	"/sub//inner.txt",
	"/.env",
	"/%2eenv",
	"/out.txt",
	"/abs.txt",
	"/outdir/f.txt",
	"/ok.txt%",
	"/ok.txt%zz",
	"/\x7fok.txt",
}

// No request path reaches outside the root: "..", encoded slashes and
// backslashes, NUL, empty and dot segments, hidden files and symbolic
// links out of the root are 404 (the response carries none of the
// secret), while links that stay inside the root work.
func TestTraversal(t *testing.T) {
	root := secretTree(t)
	for _, e := range engines {
		t.Run(e.String(), func(t *testing.T) { traverse(t, serveDirOn(t, e, root, Options{})) })
	}
}

func traverse(t *testing.T, addr string) {
	for _, target := range traversal {
		// Written raw: no client normalises the target first.
		res, body := get(t, addr, "GET", target)
		if res.StatusCode == 200 || strings.Contains(body, "SECRET") || strings.Contains(body, "public") {
			t.Errorf("%q: %d %q", target, res.StatusCode, body)
		}
	}
	for target, want := range map[string]string{"/ok.txt": "public", "/inside": "inner", "/sub/up.txt": "public"} {
		if res, body := get(t, addr, "GET", target); res.StatusCode != 200 || body != want {
			t.Errorf("%q: %d %q, want %q", target, res.StatusCode, body, want)
		}
	}
}

// Options.FollowSymlinks lets links leave the root; the path rules still
// hold (".." is still refused).
func TestFollowSymlinks(t *testing.T) {
	root := secretTree(t)
	addr := serveDir(t, root, Options{FollowSymlinks: true})
	for _, target := range []string{"/out.txt", "/abs.txt", "/outdir/f.txt"} {
		if res, body := get(t, addr, "GET", target); res.StatusCode != 200 || body != secret {
			t.Errorf("%q: %d %q", target, res.StatusCode, body)
		}
	}
	for _, target := range []string{"/../secret.txt", "/sub/../../secret.txt", "/..%2fsecret.txt", "/.env"} {
		if res, _ := get(t, addr, "GET", target); res.StatusCode != 404 {
			t.Errorf("%q: %d, want 404", target, res.StatusCode)
		}
	}
}

// resolved checks what resolve promises: a clean relative path that stays
// under the root when joined to it.
func resolved(t *testing.T, raw string, dotFiles bool) {
	var buf [pathBuf]byte
	rel, _, ok := resolve(buf[:0:maxPath], []byte(raw), dotFiles)
	if !ok {
		return
	}
	r := string(rel)
	if r == "" {
		return
	}
	if !filepath.IsLocal(r) || filepath.Clean(r) != r || strings.ContainsAny(r, "\\\x00") ||
		strings.HasPrefix(r, "/") || strings.HasSuffix(r, "/") {
		t.Fatalf("resolve(%q) = %q: not a clean local path", raw, r)
	}
	for _, seg := range strings.Split(r, "/") {
		if seg == "" || seg == "." || seg == ".." || !dotFiles && seg[0] == '.' {
			t.Fatalf("resolve(%q) = %q: segment %q", raw, r, seg)
		}
	}
	const root = "/srv/root"
	if j := filepath.Join(root, r); !strings.HasPrefix(j, root+"/") {
		t.Fatalf("resolve(%q) = %q: joined %q leaves the root", raw, r, j)
	}
}

// FuzzResolve: whatever the request path, a path resolve accepts never
// escapes the root (seed corpus in testdata/fuzz/FuzzResolve).
func FuzzResolve(f *testing.F) {
	for _, s := range traversal {
		f.Add(s, false)
	}
	f.Add("/a/b/c.txt", true)
	f.Add("/", false)
	f.Fuzz(func(t *testing.T, raw string, dotFiles bool) {
		resolved(t, raw, dotFiles)
	})
}

func TestResolve(t *testing.T) {
	for _, tc := range []struct {
		raw, rel string
		dir, ok  bool
	}{
		{"/", "", true, true},
		{"/a", "a", false, true},
		{"/a/", "a", true, true},
		{"/a/b%20c.txt", "a/b c.txt", false, true},
		{"/a%3Ab", "a:b", false, colonOK},
		{"/a//b", "", false, false},
		{"/a/../b", "", false, false},
		{"/a/%2e%2e/b", "", false, false},
		{"/a%2Fb", "", false, false},
		{"a", "", false, false},
		{"", "", false, false},
		{"/" + strings.Repeat("a", maxPath+1), "", false, false},
	} {
		var buf [pathBuf]byte
		rel, dir, ok := resolve(buf[:0:maxPath], []byte(tc.raw), false)
		if ok != tc.ok || ok && (string(rel) != tc.rel || dir != tc.dir) {
			t.Errorf("resolve(%q) = %q, %v, %v; want %q, %v, %v", tc.raw, rel, dir, ok, tc.rel, tc.dir, tc.ok)
		}
	}
}
