package harness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
)

// Proc is a running server.
type Proc struct {
	Server Server
	// Addr is the host:port the server listens on.
	Addr string
	cmd  *exec.Cmd
	dir  string // scratch directory (nginx prefix), removed on Stop
	done chan struct{}
	err  error // Wait result, valid after done is closed

	stopOnce sync.Once
}

// StartOptions configure Start.
type StartOptions struct {
	// BinDir holds the binaries made by Build.
	BinDir string
	// Profile is "bench" or "probe".
	Profile string
	// Workload shapes the ceiling's canned response and, for HTTP/2
	// workloads, adds -h2c or -tls; nil means plaintext over HTTP/1.1.
	Workload *Workload
	// CPUs, when set, pins the server with `taskset -c CPUs` and sizes it
	// to the set: GOMAXPROCS for Go servers, worker threads or processes
	// for the ceiling, nginx, h2o and nghttpd (every CPU when unset).
	CPUs string
	// Log receives the server's standard error (and nginx's logs); nil
	// discards it.
	Log io.Writer
	// Args, when not nil, replace "-profile Profile" and the workload's
	// flags on a Go server's command line (after -addr): for servers with
	// their own flags, such as the event-store servers.
	Args []string
}

// live tracks started processes so that Cleanup can stop them on any exit.
var live = struct {
	sync.Mutex
	m map[*Proc]bool
}{m: map[*Proc]bool{}}

// Cleanup stops every server started by this process that is still running.
// Call it on every exit path, including signals.
func Cleanup() {
	live.Lock()
	ps := make([]*Proc, 0, len(live.m))
	for p := range live.m {
		ps = append(ps, p)
	}
	live.Unlock()
	for _, p := range ps {
		p.Stop()
	}
}

// Start launches s on 127.0.0.1 with a free port and waits until it accepts
// connections.
func Start(ctx context.Context, s Server, o StartOptions) (*Proc, error) {
	if o.Profile == "" {
		o.Profile = "bench"
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Workload != nil {
		if why := s.Unsupported(*o.Workload); why != "" {
			return nil, fmt.Errorf("%s cannot run workload %s: %s", s.Name, o.Workload.Name, why)
		}
	}
	p := &Proc{Server: s, done: make(chan struct{})}
	threads := serverThreads(o.CPUs)
	var env []string
	var argv []string
	announce := true
	switch s.Kind {
	case KindGo:
		argv = []string{s.BinPath(o.BinDir), "-addr", "127.0.0.1:0"}
		if o.CPUs != "" {
			// Go reads the affinity mask too; set it so that the log
			// and the report say it, whatever the Go version does.
			env = []string{"GOMAXPROCS=" + strconv.Itoa(threads)}
		}
		switch {
		case o.Args != nil:
			argv = append(argv, o.Args...)
		default:
			argv = append(argv, "-profile", o.Profile)
			argv = append(argv, s.Args...)
			if o.Workload != nil {
				argv = append(argv, o.Workload.ServerFlags()...)
			}
		}
	case KindCeiling:
		if o.Profile != "bench" {
			return nil, fmt.Errorf("%s: only the bench profile is supported", s.Name)
		}
		argv = []string{s.BinPath(o.BinDir), "-addr", "127.0.0.1:0", "-profile", o.Profile,
			"-threads", strconv.Itoa(threads)}
		if o.Workload != nil {
			argv = append(argv, o.Workload.CeilingArgs...)
		}
	case KindNginx:
		if o.Profile != "bench" {
			return nil, fmt.Errorf("%s: only the bench profile is supported", s.Name)
		}
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		dir, err := os.MkdirTemp("", "riptide-bench-nginx-")
		if err != nil {
			return nil, err
		}
		p.dir = dir
		os.Chmod(dir, 0o755) // nginx workers may run as an unprivileged user
		conf, err := writeNginxConf(dir, port, threads, o.Workload != nil && o.Workload.TLS)
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		p.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		argv = []string{s.BinPath(o.BinDir), "-p", dir, "-c", conf, "-e", filepath.Join(dir, "error.log")}
		announce = false
	case KindH2O, KindNghttpd:
		if o.Workload == nil || o.Workload.HTTP2 == H2None {
			return nil, fmt.Errorf("%s: HTTP/2 workloads only", s.Name)
		}
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		dir, err := os.MkdirTemp("", "riptide-bench-"+s.Name+"-")
		if err != nil {
			return nil, err
		}
		p.dir = dir
		useTLS := o.Workload.HTTP2 == H2TLS
		args := h2oArgs
		if s.Kind == KindNghttpd {
			args = nghttpdArgs
		}
		a, err := args(dir, port, threads, useTLS)
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		p.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		argv = append([]string{s.BinPath(o.BinDir)}, a...)
		announce = false
	}
	if o.CPUs != "" {
		argv = append([]string{"taskset", "-c", o.CPUs}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	// Own process group, so Stop reaches nginx's workers too; killed if the
	// harness dies without running its cleanup.
	ownGroup(cmd)
	cmd.Stderr = o.Log
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		if p.dir != "" {
			os.RemoveAll(p.dir)
		}
		return nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	p.cmd = cmd
	live.Lock()
	live.m[p] = true
	live.Unlock()

	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if a, ok := strings.CutPrefix(line, "listening on "); ok && !sent {
				addrc <- strings.TrimSpace(a)
				sent = true
				continue
			}
			fmt.Fprintln(o.Log, line)
		}
	}()
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()

	fail := func(err error) (*Proc, error) {
		p.Stop()
		return nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	deadline := time.NewTimer(15 * time.Second)
	defer deadline.Stop()
	if announce {
		select {
		case a := <-addrc:
			p.Addr = a
		case <-p.done:
			return fail(fmt.Errorf("exited before listening: %v", p.err))
		case <-deadline.C:
			return fail(errors.New("no \"listening on\" line within 15s"))
		case <-ctx.Done():
			return fail(ctx.Err())
		}
	}
	if s.HTTP3 {
		// The UDP socket is bound before the line is printed: datagrams
		// sent now wait in its buffer. There is no TCP port to dial.
		return p, nil
	}
	for {
		c, err := net.DialTimeout("tcp", p.Addr, time.Second)
		if err == nil {
			c.Close()
			return p, nil
		}
		select {
		case <-p.done:
			return fail(fmt.Errorf("exited before accepting: %v", p.err))
		case <-deadline.C:
			return fail(fmt.Errorf("not accepting on %s within 15s: %v", p.Addr, err))
		case <-ctx.Done():
			return fail(ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Stop terminates the server's process group: SIGTERM, then SIGKILL after
// three seconds. It is safe to call more than once.
func (p *Proc) Stop() {
	p.stopOnce.Do(func() {
		signalGroup(p.cmd, false)
		select {
		case <-p.done:
		case <-time.After(3 * time.Second):
			signalGroup(p.cmd, true)
			<-p.done
		}
		// Take down anything left in the group (nginx workers).
		signalGroup(p.cmd, true)
		if p.dir != "" {
			os.RemoveAll(p.dir)
		}
		live.Lock()
		delete(live.m, p)
		live.Unlock()
	})
}

// PID is the server's process id.
func (p *Proc) PID() int { return p.cmd.Process.Pid }

// Exited reports whether the server process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// ClockTicks is the kernel's USER_HZ, the unit of utime and stime in
// /proc/<pid>/stat. It is 100 on every Linux architecture Go supports.
const ClockTicks = 100

// CPUSeconds returns the user+system CPU time consumed so far by the server
// and every process descended from it (nginx workers).
func (p *Proc) CPUSeconds() (float64, error) { return treeCPUSeconds(p.PID()) }

// treeCPUSeconds returns the user+system CPU time consumed so far by the
// process pid and every process descended from it.
func treeCPUSeconds(root int) (float64, error) {
	var total float64
	for _, pid := range tree(root) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue // exited meanwhile
		}
		t, err := parseStatCPU(string(b))
		if err != nil {
			return 0, err
		}
		total += t
	}
	return total, nil
}

// selfCPUSeconds returns the user+system CPU time of this process (the
// harness, with its in-process HTTP/3 client) so far.
func selfCPUSeconds() (float64, error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(b))
}

// parseStatCPU returns utime+stime in seconds from a /proc/<pid>/stat line.
func parseStatCPU(stat string) (float64, error) {
	// The command name (field 2) may contain spaces; fields resume after ')'.
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed stat line")
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("short stat line")
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	s, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("bad utime/stime in stat line")
	}
	return float64(u+s) / ClockTicks, nil
}

// PeakRSS returns the peak resident set size in bytes (VmHWM) of the server,
// summed over its process tree.
func (p *Proc) PeakRSS() (int64, error) { return p.treeStatus("VmHWM") }

// RSS returns the server's resident set size in bytes (VmRSS), summed over
// its process tree.
func (p *Proc) RSS() (int64, error) { return p.treeStatus("VmRSS") }

// treeStatus sums a kB field of /proc/<pid>/status over the server's
// process tree, in bytes.
func (p *Proc) treeStatus(field string) (int64, error) {
	var total int64
	for _, pid := range tree(p.PID()) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		kb, err := parseStatusKB(string(b), field)
		if err != nil {
			return 0, err
		}
		total += kb * 1024
	}
	return total, nil
}

// parseStatusKB returns the value, in KiB, of a field (VmHWM, VmRSS) of a
// /proc/<pid>/status file.
func parseStatusKB(status, field string) (int64, error) {
	for _, line := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			v = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB"))
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s line", field)
}

// tree returns pid and all its descendants.
func tree(pid int) []int {
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", out[i]))
		for _, t := range tasks {
			b, err := os.ReadFile(t)
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// nginxUser is the nginx "user" line for a run as root: nobody with its own
// primary group, named explicitly because nginx's compiled-in default group
// (nogroup) does not exist on every distribution (a packed nginx runs on
// machines it was not built for). "" when not root (nginx ignores the
// directive then) or when nobody is unknown.
func nginxUser() string {
	if os.Geteuid() != 0 {
		return ""
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return ""
	}
	g, err := user.LookupGroupId(u.Gid)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("user nobody %s;\n", g.Name)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// writeNginxConf writes an nginx configuration serving the bench routes that
// stock nginx can serve (no body echo), with workers worker processes, and
// returns its path. With useTLS it serves them over TLS (HTTP/1.1) with a
// fresh self-signed certificate written to dir (writeCertFiles), preferring
// TLS_AES_128_GCM_SHA256 as Go's crypto/tls does on machines with AES
// instructions (OpenSSL would otherwise take wrk's first choice,
// AES-256-GCM).
func writeNginxConf(dir string, port, workers int, useTLS bool) (string, error) {
	body := make([]byte, 64<<10)
	for i := range body {
		body[i] = "0123456789abcdef"[i%16]
	}
	if err := os.WriteFile(filepath.Join(dir, "64k"), body, 0o644); err != nil {
		return "", err
	}
	if _, err := benchserver.StaticDir(dir); err != nil { // dir/static/*.txt
		return "", err
	}
	listen := ""
	if useTLS {
		if err := writeCertFiles(dir); err != nil {
			return "", err
		}
		listen = fmt.Sprintf(` ssl;
    ssl_certificate %[1]s/cert.pem;
    ssl_certificate_key %[1]s/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_prefer_server_ciphers on;
    ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384`, dir)
	}
	conf := fmt.Sprintf(`daemon off;
%[4]smaster_process on;
worker_processes %[3]d;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 100000000;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  server {
    listen 127.0.0.1:%[2]d reuseport%[5]s;
    location = / { default_type "text/plain"; return 200 "Hello, World!"; }
    location = /json { default_type "application/json"; return 200 '{"message":"Hello, World!"}'; }
    location = /64k { default_type "application/octet-stream"; alias %[1]s/64k; }
    # The static workloads: sendfile and an open-file cache, as a tuned
    # nginx serves files (ETag and Last-Modified are on by default).
    location /static/ {
      root %[1]s;
      types { text/plain txt; }
      sendfile on;
      tcp_nopush on;
      open_file_cache max=1000 inactive=60s;
    }
  }
}
`, dir, port, workers, nginxUser(), listen)
	path := filepath.Join(dir, "nginx.conf")
	return path, os.WriteFile(path, []byte(conf), 0o644)
}
