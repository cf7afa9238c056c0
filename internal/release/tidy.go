package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// tidy runs `go mod tidy` in the modules (all when dirs is empty) as it
// runs for a consumer: without the workspace, the sibling modules at
// version served from a module proxy made from the working tree (go mod
// tidy ignores go.work, and the version is not published before its
// release). It then drops the go.sum lines of riptide's modules: they
// hash the working tree, not the release, and workspace builds never read
// them.
func tidy(ctx context.Context, root, version string, dirs []string, log io.Writer) error {
	tmp, err := os.MkdirTemp("", "riptide-tidy-")
	if err != nil {
		return err
	}
	env, err := installEnv(tmp, filepath.Join(tmp, "modcache"))
	if err != nil {
		return err
	}
	defer cleanTemp(tmp, env)
	mods, err := writeProxy(root, filepath.Join(tmp, "proxy"), version)
	if err != nil {
		return err
	}
	for _, m := range mods {
		if len(dirs) > 0 && !contains(dirs, m.Dir) {
			continue
		}
		dir := filepath.Join(root, m.Dir)
		if _, err := runIn(ctx, dir, env, log, "go", "mod", "tidy"); err != nil {
			return fmt.Errorf("%s: %w", m.Dir, err)
		}
		sum := filepath.Join(dir, "go.sum")
		data, err := os.ReadFile(sum)
		if os.IsNotExist(err) {
			continue
		} else if err != nil {
			return err
		}
		var keep []string
		for _, l := range strings.SplitAfter(string(data), "\n") {
			if f := strings.Fields(l); len(f) > 0 && isRiptide(f[0]) {
				continue
			}
			keep = append(keep, l)
		}
		if err := os.WriteFile(sum, []byte(strings.Join(keep, "")), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if filepath.Clean(x) == filepath.Clean(s) {
			return true
		}
	}
	return false
}
