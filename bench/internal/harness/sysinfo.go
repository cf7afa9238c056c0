package harness

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// SysInfo describes the machine and software a run used.
type SysInfo struct {
	Date      time.Time `json:"date"`
	Hostname  string    `json:"hostname"`
	Machine   string    `json:"machine"`
	CPUModel  string    `json:"cpu_model"`
	NProc     int       `json:"nproc"`
	Kernel    string    `json:"kernel"`
	GoVersion string    `json:"go_version"`
	Commit    string    `json:"commit"`
	Wrk       string    `json:"wrk"`
	H2load    string    `json:"h2load,omitempty"`
	// H3rs describes the Rust HTTP/3 client (its crates and rustc) when
	// a workload used it.
	H3rs    string   `json:"h3rs,omitempty"`
	Nginx   string   `json:"nginx,omitempty"`
	CC      string   `json:"cc"`
	Modules []string `json:"modules"` // peer library versions from go.mod
}

// CollectSysInfo gathers SysInfo; fields it cannot learn read "unknown".
// wrk and h2load are the load generators' paths, "" when unused.
func CollectSysInfo(ctx context.Context, root, wrk, h2load string) SysInfo {
	si := SysInfo{Date: time.Now().UTC(), NProc: runtime.NumCPU()}
	si.Hostname, _ = os.Hostname()
	si.Machine = orUnknown(strings.TrimSpace(readFile("/sys/class/dmi/id/sys_vendor") + " " +
		readFile("/sys/class/dmi/id/product_name")))
	si.CPUModel = "unknown"
	for _, line := range strings.Split(readFile("/proc/cpuinfo"), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			si.CPUModel = strings.TrimSpace(v)
			break
		}
	}
	si.Kernel = orUnknown(readFile("/proc/sys/kernel/osrelease"))
	si.GoVersion = orUnknown(firstLine(cmdOut(ctx, root, "go", "version")))
	si.Commit = orUnknown(gitOut(ctx, root, "rev-parse", "--short=12", "HEAD"))
	if si.Commit != "unknown" && gitOut(ctx, filepath.Dir(root), "status", "--porcelain", "--untracked-files=no") != "" {
		si.Commit += "-dirty"
	}
	si.Wrk = "not used"
	if wrk != "" {
		si.Wrk = orUnknown(firstLine(cmdOut(ctx, root, wrk, "-v")))
	}
	if h2load != "" {
		si.H2load = orUnknown(firstLine(cmdOut(ctx, root, h2load, "--version")))
	}
	if p, err := nginxPath(); err == nil {
		si.Nginx = firstLine(cmdOut(ctx, root, p, "-v"))
	}
	si.CC = orUnknown(firstLine(cmdOut(ctx, root, "cc", "--version")))
	if f, err := os.Open(filepath.Join(root, "go.mod")); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			for _, m := range []string{"github.com/valyala/fasthttp ", "github.com/go-chi/chi/v5 ", "github.com/quic-go/quic-go ", "github.com/lesismal/nbio ", "github.com/gorilla/websocket ", "github.com/coder/websocket ", "github.com/gobwas/ws ", "github.com/fasthttp/websocket "} {
				if strings.HasPrefix(line, m) {
					si.Modules = append(si.Modules, strings.Fields(line)[0]+" "+strings.Fields(line)[1])
				}
			}
		}
		f.Close()
	}
	return si
}

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return strings.TrimSpace(string(b))
}

// cmdOut runs a command and returns its combined output, even on a non-zero
// exit (wrk -v exits 1).
func cmdOut(ctx context.Context, dir, name string, args ...string) string {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, _ := cmd.CombinedOutput()
	return strings.TrimSpace(string(out))
}

// gitOut returns git's trimmed standard output, or "" if git fails (no
// repository, no commits yet).
func gitOut(ctx context.Context, dir string, args ...string) string {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
