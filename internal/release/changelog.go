package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// checkChangelog returns an error unless the first entry ("## " heading)
// of CHANGELOG.md is version: a release says what changed in it.
func checkChangelog(root, version string) error {
	data, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		return err
	}
	for _, l := range strings.Split(string(data), "\n") {
		if h, ok := strings.CutPrefix(l, "## "); ok {
			if f := strings.Fields(h); len(f) == 0 || f[0] != version {
				return fmt.Errorf("CHANGELOG.md: first entry %q, want one for %s (Version in version.go)", l, version)
			}
			return nil
		}
	}
	return fmt.Errorf("CHANGELOG.md: no entry (## %s)", version)
}
