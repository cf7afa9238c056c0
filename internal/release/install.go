package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// installCase is one fresh consumer module of the install test: it runs
// `go get Module@VERSION` alone and builds Module's package, then tidies,
// builds and runs Program
// (testdata/install/Program/main.go), which serves and fetches from
// itself and prints lines starting with "ok".
type installCase struct {
	Module  string
	Program string
	OKLines int // lines starting with "ok" the program must print
}

var installCases = []installCase{
	{corePath, "core", 1},
	{corePath + "/compress", "compress", 1},
	{corePath + "/http3", "http3", 2}, // HTTP/1.1 and HTTP/3
}

// installTest publishes every module of the working tree at version into a
// file-based module proxy and installs them from it as a consumer would:
// in a fresh module outside the repository (no go.work, no replace), with
// a module cache of its own (a cached copy of VERSION from an earlier run
// would hide the tree's changes, and the developer's cache must not keep
// the unreleased version), third-party modules from the developer's
// module cache (as a file proxy) or else the configured GOPROXY, checked
// against the checksum database as usual; only riptide's modules, made
// here, are exempt (GONOSUMDB). log gets each step.
func installTest(ctx context.Context, root, version string, log io.Writer) error {
	tmp, err := os.MkdirTemp("", "riptide-install-")
	if err != nil {
		return err
	}
	modcache := filepath.Join(tmp, "modcache")
	env, err := installEnv(tmp, modcache)
	if err != nil {
		return err
	}
	defer cleanTemp(tmp, env)
	proxy := filepath.Join(tmp, "proxy")
	mods, err := writeProxy(root, proxy, version)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "install: proxy %s holds %d modules at %s\n", proxy, len(mods), version)

	for _, c := range installCases {
		dir := filepath.Join(tmp, c.Program)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		src, err := os.ReadFile(filepath.Join(root, "internal", "release", "testdata", "install", c.Program, "main.go"))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "main.go"), src, 0o644); err != nil {
			return err
		}
		steps := [][]string{
			{"go", "mod", "init", "example.com/consumer/" + c.Program},
			// The module alone, at the version: its go.mod must bring
			// everything its package needs (with -mod=readonly, the
			// build fails on a missing requirement or checksum).
			{"go", "get", c.Module + "@" + version},
			{"go", "build", c.Module},
			// The program's own imports (quic-go's HTTP/3 client).
			{"go", "mod", "tidy"},
			{"go", "build", "-o", "consumer", "."},
		}
		for _, s := range steps {
			if _, err := runIn(ctx, dir, env, log, s...); err != nil {
				return fmt.Errorf("%s: %w", c.Module, err)
			}
		}
		// The riptide modules came from the proxy at version, not from
		// the repository.
		out, err := runIn(ctx, dir, env, io.Discard, "go", "list", "-m", "-f", "{{.Path}} {{.Version}} {{.Dir}}", "all")
		if err != nil {
			return fmt.Errorf("%s: %w", c.Module, err)
		}
		seen := false
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			f := strings.Fields(l)
			if len(f) != 3 || !isRiptide(f[0]) {
				continue
			}
			if f[1] != version || !strings.HasPrefix(f[2], modcache+string(filepath.Separator)) {
				return fmt.Errorf("%s: the consumer builds %s %s from %s, want %s from the module cache", c.Module, f[0], f[1], f[2], version)
			}
			seen = seen || f[0] == c.Module
		}
		if !seen {
			return fmt.Errorf("%s: not in the consumer's build list:\n%s", c.Module, out)
		}
		out, err = runIn(ctx, dir, env, log, filepath.Join(dir, "consumer"))
		if err != nil {
			return fmt.Errorf("%s: %w", c.Module, err)
		}
		if n := strings.Count("\n"+out, "\nok "); n != c.OKLines {
			return fmt.Errorf("%s: the program printed %d ok lines, want %d:\n%s", c.Module, n, c.OKLines, out)
		}
	}
	return nil
}

// installEnv is the environment of the consumer modules.
func installEnv(tmp, modcache string) ([]string, error) {
	out, err := exec.Command("go", "env", "GOPROXY", "GOMODCACHE").Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	f := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(f) != 2 {
		return nil, fmt.Errorf("go env GOPROXY GOMODCACHE: %q", out)
	}
	upstream, devcache := f[0], f[1]
	proxies := []string{"file://" + filepath.ToSlash(filepath.Join(tmp, "proxy"))}
	if devcache != "" {
		proxies = append(proxies, "file://"+filepath.ToSlash(filepath.Join(devcache, "cache", "download")))
	}
	if upstream != "" && upstream != "off" {
		proxies = append(proxies, upstream)
	}
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "GOWORK", "GOPROXY", "GOMODCACHE", "GOFLAGS", "GONOSUMDB", "GOPRIVATE", "GONOPROXY", "GOINSECURE", "PWD":
		default:
			env = append(env, kv)
		}
	}
	return append(env,
		"GOWORK=off", // a consumer has no workspace
		"GOPROXY="+strings.Join(proxies, ","),
		"GOMODCACHE="+modcache,
		"GONOSUMDB="+corePath, // made here: not in the checksum database
		"GOFLAGS=-mod=readonly",
		"GOTOOLCHAIN=local",
	), nil
}

// runIn runs a command in dir with env, copies its output to log, and
// returns the output.
func runIn(ctx context.Context, dir string, env []string, log io.Writer, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	fmt.Fprintf(log, "install: %s$ %s\n", filepath.Base(dir), strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = io.MultiWriter(&out, log)
	cmd.Stderr = io.MultiWriter(&out, log)
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("%s: %w", strings.Join(args, " "), err)
	}
	return out.String(), err
}

// cleanTemp removes tmp and the module cache of env in it, which is
// read-only: the go command removes it.
func cleanTemp(tmp string, env []string) {
	clean := exec.Command("go", "clean", "-modcache")
	clean.Env = env
	clean.Dir = tmp
	clean.Run()
	os.RemoveAll(tmp)
}
