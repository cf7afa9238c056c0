// Command release keeps riptide's modules releasable and checks that they
// install (see README.md, "Versions and compatibility", and
// CHANGELOG.md). Run it from anywhere in the repository:
//
//	go run ./internal/release version     # the version of every module (version.go)
//	go run ./internal/release check       # the release rules (below); exit 1 on a breach
//	go run ./internal/release sync        # rewrite go.mod files and go.work to follow them
//	go run ./internal/release api [-w]    # print (or write to api/next.txt) the exported API
//	go run ./internal/release api -freeze # write it to api/VERSION.txt, at a release
//	go run ./internal/release apidiff     # the API diff against the previous release
//	go run ./internal/release tidy [DIR]  # go mod tidy in every module (or DIR) as for a consumer
//	go run ./internal/release proxy DIR   # a file module proxy (GOPROXY=file://DIR) of the tree
//	go run ./internal/release install [-v] # the install test (under a minute with a warm cache)
//
// The rules: every module's zip is valid (golang.org/x/mod/zip); every
// go.mod requires its sibling modules at the Version of version.go and
// replaces none of them; go.work uses every module and replaces each at
// Version with its directory; CHANGELOG.md's first entry is Version;
// api/next.txt lists the tree's exported API; against the previous
// release (api/vX.Y.Z.txt), API is removed only in a new minor version
// (v0) or major version (v1 on). The tests of this module check the same
// (TestModuleZips, TestModFiles, TestChangelog, TestAPI, TestAPICompat).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./internal/release version|check|sync|api [-w|-freeze]|apidiff|tidy [DIR...]|proxy DIR|install [-v]")
	}
	flag.Parse()
	if err := run(flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		flag.Usage()
		os.Exit(2)
	}
	root, err := findRoot(".")
	if err != nil {
		return err
	}
	version, err := readVersion(root)
	if err != nil {
		return err
	}
	mods, err := findModules(root)
	if err != nil {
		return err
	}
	switch args[0] {
	case "version":
		fmt.Println(version)
		return nil
	case "check":
		return errors.Join(checkAll(root, version, mods)...)
	case "sync":
		changed, err := syncModFiles(root, version, mods)
		for _, c := range changed {
			fmt.Println("wrote", c)
		}
		return err
	case "api":
		lines, err := apiListing(root, mods)
		if err != nil {
			return err
		}
		if len(args) > 1 && args[1] == "-w" {
			return writeAPI(filepath.Join(root, apiFile), lines)
		}
		if len(args) > 1 && args[1] == "-freeze" {
			return writeAPI(filepath.Join(root, "api", version+".txt"), lines)
		}
		fmt.Println(strings.Join(lines, "\n"))
		return nil
	case "apidiff":
		report, err := apiDiff(root, version, mods)
		fmt.Print(report)
		return err
	case "tidy":
		dirs := args[1:]
		return tidy(context.Background(), root, version, dirs, os.Stdout)
	case "proxy":
		if len(args) != 2 {
			return errors.New("usage: proxy DIR")
		}
		dir, err := filepath.Abs(args[1])
		if err != nil {
			return err
		}
		if _, err := writeProxy(root, dir, version); err != nil {
			return err
		}
		fmt.Printf("GOPROXY=file://%s GONOSUMDB=%s GOWORK=off\n", filepath.ToSlash(dir), corePath)
		return nil
	case "install":
		// The steps' output only when one fails (or with -v).
		var log bytes.Buffer
		w := io.Writer(&log)
		if len(args) > 1 && args[1] == "-v" {
			w = os.Stdout
		}
		if err := installTest(context.Background(), root, version, w); err != nil {
			os.Stderr.Write(log.Bytes())
			return err
		}
		for _, l := range strings.SplitAfter(log.String(), "\n") {
			if strings.HasPrefix(l, "ok ") {
				fmt.Print("install: ", l)
			}
		}
		fmt.Printf("install: ok: %d modules at %s installed from a module proxy\n", len(installCases), version)
		return nil
	}
	flag.Usage()
	os.Exit(2)
	return nil
}

// checkAll returns every breach of the release rules but the API listing
// (its own command: it type-checks every package).
func checkAll(root, version string, mods []Module) []error {
	files, err := repoFiles(root)
	if err != nil {
		return []error{err}
	}
	var errs []error
	for _, m := range mods {
		if err := checkZip(root, m, mods, files); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, checkModFiles(root, version, mods)...)
	if err := checkChangelog(root, version); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// apiDiff returns the report of the tree's exported API against the
// previous release's frozen listing, and an error when the change breaks
// the compatibility policy.
//
// When version itself has a frozen listing (it is released: its
// tag exists or is about to), the tree must match it exactly; changes
// after a release go with a new Version.
func apiDiff(root, version string, mods []Module) (string, error) {
	cur, err := apiListing(root, mods)
	if err != nil {
		return "", err
	}
	return apiReport(root, version, cur)
}

// apiReport is apiDiff on the listing cur.
func apiReport(root, version string, cur []string) (string, error) {
	frozen, err := readAPI(filepath.Join(root, "api", version+".txt"))
	if err == nil {
		if removed, added := diffAPI(frozen, cur); len(removed)+len(added) > 0 {
			return "", fmt.Errorf("the API differs from api/%s.txt (%d lines gone or changed, %d new), the listing of a released version: "+
				"set Version to the next release (version.go, go run ./internal/release sync, a CHANGELOG.md entry)", version, len(removed), len(added))
		}
	} else if !os.IsNotExist(err) {
		return "", err
	}
	prev, err := previousRelease(root, version)
	if err != nil {
		return "", err
	}
	if prev == "" {
		return fmt.Sprintf("apidiff: no release before %s (no api/vX.Y.Z.txt): nothing to compare\n", version), nil
	}
	old, err := readAPI(filepath.Join(root, "api", prev+".txt"))
	if err != nil {
		return "", err
	}
	removed, added := diffAPI(old, cur)
	var b strings.Builder
	fmt.Fprintf(&b, "apidiff %s..%s: %d removed or changed, %d added\n", prev, version, len(removed), len(added))
	for _, l := range removed {
		fmt.Fprintf(&b, "- %s\n", l)
	}
	for _, l := range added {
		fmt.Fprintf(&b, "+ %s\n", l)
	}
	return b.String(), compatible(prev, version, removed)
}
