package harness

// The multi-core mode: CPU lists for the servers and the load generator,
// the machine's topology (which logical CPUs share a physical core), and
// what the sets' sizes give each side (GOMAXPROCS, worker threads, load
// threads and connections).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// CPUSet is a sorted list of distinct logical CPU numbers, as given to
// `taskset -c`.
type CPUSet []int

// ParseCPUList parses a taskset/cpuset list such as "0-3,8,10-11". The
// empty string is the empty set (no pinning). Ranges must be ascending and
// CPUs may not repeat.
func ParseCPUList(s string) (CPUSet, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var set CPUSet
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := parseCPU(lo)
		if err != nil {
			return nil, fmt.Errorf("CPU list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = parseCPU(hi); err != nil {
				return nil, fmt.Errorf("CPU list %q: %w", s, err)
			}
			if b < a {
				return nil, fmt.Errorf("CPU list %q: descending range %q", s, part)
			}
		}
		for c := a; c <= b; c++ {
			if slices.Contains(set, c) {
				return nil, fmt.Errorf("CPU list %q: CPU %d listed twice", s, c)
			}
			set = append(set, c)
		}
	}
	slices.Sort(set)
	return set, nil
}

func parseCPU(s string) (int, error) {
	s = strings.TrimSpace(s)
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 1<<16 {
		return 0, fmt.Errorf("bad CPU number %q", s)
	}
	return n, nil
}

// String is the set in taskset's compact list form ("0-3,8,10-11").
func (c CPUSet) String() string {
	var b strings.Builder
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] == c[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(c[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(c[j]))
		}
		i = j + 1
	}
	return b.String()
}

// CPUInfo is one logical CPU's place in the machine: lscpu -e's CPU, CORE,
// SOCKET and NODE columns (Node is -1 when the machine reports none).
type CPUInfo struct {
	CPU    int `json:"cpu"`
	Core   int `json:"core"`
	Socket int `json:"socket"`
	Node   int `json:"node"`
}

// Topology is the machine's online logical CPUs, and the text it was read
// from (recorded with every multi-core run).
type Topology struct {
	CPUs []CPUInfo `json:"cpus"`
	// Source says where it came from: "lscpu -e=CPU,CORE,SOCKET,NODE" or
	// "sysfs".
	Source string `json:"source"`
	// Raw is lscpu's output, or the same four columns built from sysfs.
	Raw string `json:"raw"`
	// Allowed is the CPUs this container's cgroup cpuset lets processes
	// use, nil when no cpuset file was found (all online CPUs).
	Allowed CPUSet `json:"allowed,omitempty"`
}

// ParseLscpu parses the output of `lscpu -e=CPU,CORE,SOCKET,NODE`: a
// header naming the columns (in any order), then one line per CPU. Offline
// CPUs ("-" in CORE) are left out; a "-" NODE is -1.
func ParseLscpu(out string) (Topology, error) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 {
		return Topology{}, errors.New("lscpu: no CPU lines")
	}
	col := map[string]int{}
	for i, h := range strings.Fields(lines[0]) {
		col[strings.ToUpper(h)] = i
	}
	for _, need := range []string{"CPU", "CORE", "SOCKET"} {
		if _, ok := col[need]; !ok {
			return Topology{}, fmt.Errorf("lscpu: no %s column in %q", need, lines[0])
		}
	}
	t := Topology{Source: "lscpu -e=CPU,CORE,SOCKET,NODE", Raw: strings.TrimSpace(out) + "\n"}
	for _, line := range lines[1:] {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < len(col) {
			return Topology{}, fmt.Errorf("lscpu: short line %q", line)
		}
		get := func(name string) (int, bool, error) {
			i, ok := col[name]
			if !ok || f[i] == "-" {
				return -1, false, nil
			}
			n, err := strconv.Atoi(f[i])
			if err != nil {
				return 0, false, fmt.Errorf("lscpu: bad %s %q in %q", name, f[i], line)
			}
			return n, true, nil
		}
		var ci CPUInfo
		var ok bool
		var err error
		if ci.CPU, ok, err = get("CPU"); err != nil || !ok {
			return Topology{}, fmt.Errorf("lscpu: bad line %q", line)
		}
		if ci.Core, ok, err = get("CORE"); err != nil {
			return Topology{}, err
		} else if !ok {
			continue // offline
		}
		if ci.Socket, _, err = get("SOCKET"); err != nil {
			return Topology{}, err
		}
		if ci.Node, _, err = get("NODE"); err != nil {
			return Topology{}, err
		}
		t.CPUs = append(t.CPUs, ci)
	}
	if len(t.CPUs) == 0 {
		return Topology{}, errors.New("lscpu: no online CPU")
	}
	return t, nil
}

// ReadSysfsTopology reads the online CPUs' topology from a sysfs tree
// (sys is "/sys" on a live machine, a testdata directory in tests):
// devices/system/cpu/cpuN/topology/{core_id,physical_package_id} and the
// cpuN/nodeM link. core_id is unique only within a package, which is why
// cores are compared as (socket, core) pairs.
func ReadSysfsTopology(sys string) (Topology, error) {
	base := filepath.Join(sys, "devices", "system", "cpu")
	dirs, err := filepath.Glob(filepath.Join(base, "cpu[0-9]*"))
	if err != nil || len(dirs) == 0 {
		return Topology{}, fmt.Errorf("sysfs: no CPUs under %s", base)
	}
	online := CPUSet(nil)
	if b, err := os.ReadFile(filepath.Join(base, "online")); err == nil {
		if online, err = ParseCPUList(string(b)); err != nil {
			return Topology{}, fmt.Errorf("sysfs: online: %w", err)
		}
	}
	t := Topology{Source: "sysfs"}
	for _, d := range dirs {
		n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), "cpu"))
		if err != nil {
			continue
		}
		if online != nil && !slices.Contains(online, n) {
			continue
		}
		core, err1 := readInt(filepath.Join(d, "topology", "core_id"))
		pkg, err2 := readInt(filepath.Join(d, "topology", "physical_package_id"))
		if err1 != nil || err2 != nil {
			return Topology{}, fmt.Errorf("sysfs: cpu%d: no topology (%v, %v)", n, err1, err2)
		}
		node := -1
		if m, _ := filepath.Glob(filepath.Join(d, "node[0-9]*")); len(m) > 0 {
			node, _ = strconv.Atoi(strings.TrimPrefix(filepath.Base(m[0]), "node"))
		}
		t.CPUs = append(t.CPUs, CPUInfo{CPU: n, Core: core, Socket: pkg, Node: node})
	}
	if len(t.CPUs) == 0 {
		return Topology{}, errors.New("sysfs: no online CPU")
	}
	slices.SortFunc(t.CPUs, func(a, b CPUInfo) int { return a.CPU - b.CPU })
	var b strings.Builder
	b.WriteString("CPU CORE SOCKET NODE (sysfs core_id is per socket)\n")
	for _, c := range t.CPUs {
		node := "-"
		if c.Node >= 0 {
			node = strconv.Itoa(c.Node)
		}
		fmt.Fprintf(&b, "%3d %4d %6d %4s\n", c.CPU, c.Core, c.Socket, node)
	}
	t.Raw = b.String()
	return t, nil
}

func readInt(p string) (int, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// LoadTopology reads this machine's topology with lscpu, falling back to
// /sys when lscpu is missing or fails, and the CPUs the cgroup allows.
func LoadTopology(ctx context.Context) (Topology, error) {
	t, err := loadTopology(ctx)
	if err == nil {
		t.Allowed = readAllowed("/sys")
	}
	return t, err
}

// readAllowed reads the cgroup cpuset of this process's container (v2,
// then v1), or nil when there is none.
func readAllowed(sys string) CPUSet {
	for _, f := range []string{"fs/cgroup/cpuset.cpus.effective", "fs/cgroup/cpuset/cpuset.effective_cpus", "fs/cgroup/cpuset/cpuset.cpus"} {
		b, err := os.ReadFile(filepath.Join(sys, f))
		if err != nil {
			continue
		}
		if set, err := ParseCPUList(string(b)); err == nil && len(set) > 0 {
			return set
		}
	}
	return nil
}

func loadTopology(ctx context.Context) (Topology, error) {
	var lerr error
	if p, err := exec.LookPath("lscpu"); err == nil {
		out, err := exec.CommandContext(ctx, p, "-e=CPU,CORE,SOCKET,NODE").Output()
		if err == nil {
			t, err := ParseLscpu(string(out))
			if err == nil {
				return t, nil
			}
			lerr = err
		} else {
			lerr = fmt.Errorf("lscpu: %w", err)
		}
	}
	t, err := ReadSysfsTopology("/sys")
	if err != nil && lerr != nil {
		return Topology{}, fmt.Errorf("%v; %v", lerr, err)
	}
	return t, err
}

// CheckSets refuses a server set and a load set that cannot give a fair
// multi-core run on topology t: a CPU that is not online, sets that
// overlap, or a physical core (same socket and core) with logical CPUs in
// both sets (SMT siblings share execution units and caches, so the load
// generator would eat into the server's core). An empty set is not pinned
// and not checked against the other.
func CheckSets(server, load CPUSet, t Topology) error {
	byCPU := map[int]CPUInfo{}
	for _, c := range t.CPUs {
		byCPU[c.CPU] = c
	}
	for _, s := range []struct {
		name string
		set  CPUSet
	}{{"-server-cpus", server}, {"-wrk-cpus", load}} {
		for _, c := range s.set {
			if _, ok := byCPU[c]; !ok {
				return fmt.Errorf("%s %s: CPU %d is not online (online: %s)", s.name, s.set, c, t.Online())
			}
			if t.Allowed != nil && !slices.Contains(t.Allowed, c) {
				return fmt.Errorf("%s %s: CPU %d is outside this container's cpuset %s", s.name, s.set, c, t.Allowed)
			}
		}
	}
	if len(server) == 0 || len(load) == 0 {
		return nil
	}
	type core struct{ socket, core int }
	owner := map[core]int{}
	for _, c := range server {
		ci := byCPU[c]
		owner[core{ci.Socket, ci.Core}] = c
	}
	for _, c := range load {
		if slices.Contains(server, c) {
			return fmt.Errorf("-server-cpus %s and -wrk-cpus %s overlap: CPU %d is in both", server, load, c)
		}
		ci := byCPU[c]
		if s, ok := owner[core{ci.Socket, ci.Core}]; ok {
			return fmt.Errorf("-server-cpus %s and -wrk-cpus %s share a physical core: CPUs %d and %d are both socket %d core %d (SMT siblings); put whole cores on each side",
				server, load, s, c, ci.Socket, ci.Core)
		}
	}
	return nil
}

// Online is the topology's CPUs as a list.
func (t Topology) Online() CPUSet {
	s := make(CPUSet, 0, len(t.CPUs))
	for _, c := range t.CPUs {
		s = append(s, c.CPU)
	}
	return s
}

// cores groups the usable CPUs (online and allowed) by physical core, in
// the order of each core's lowest CPU; a core with a CPU the cpuset does
// not allow is left out whole.
func (t Topology) cores() []CPUSet {
	type key struct{ socket, core int }
	idx := map[key]int{}
	var out []CPUSet
	bad := map[key]bool{}
	for _, c := range t.CPUs { // sorted by CPU
		k := key{c.Socket, c.Core}
		if t.Allowed != nil && !slices.Contains(t.Allowed, c.CPU) {
			bad[k] = true
		}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], c.CPU)
	}
	var usable []CPUSet
	for k, i := range idx {
		if !bad[k] {
			usable = append(usable, out[i])
		}
	}
	slices.SortFunc(usable, func(a, b CPUSet) int { return a[0] - b[0] })
	return usable
}

// ResolveSets turns the -server-cpus and -wrk-cpus arguments into sets on
// topology t. Besides a CPU list, -server-cpus takes "auto:N": at least N
// CPUs as whole physical cores (with their SMT siblings), lowest first;
// -wrk-cpus takes "rest": every usable CPU on a core the servers do not
// use. So "auto:4" and "rest" give 0-3 and 4-15 on 16 cores without SMT,
// and 0-1,8-9 and the rest where CPU n and n+8 are siblings.
func ResolveSets(serverArg, loadArg string, t Topology) (server, load CPUSet, err error) {
	cores := t.cores()
	if n, ok := strings.CutPrefix(serverArg, "auto:"); ok {
		want, err := strconv.Atoi(n)
		if err != nil || want < 1 {
			return nil, nil, fmt.Errorf("-server-cpus %q: want auto:N with N ≥ 1", serverArg)
		}
		for _, c := range cores {
			if len(server) >= want {
				break
			}
			server = append(server, c...)
		}
		if len(server) < want {
			return nil, nil, fmt.Errorf("-server-cpus %s: only %d usable CPUs", serverArg, len(server))
		}
		slices.Sort(server)
	} else if server, err = ParseCPUList(serverArg); err != nil {
		return nil, nil, fmt.Errorf("-server-cpus: %w", err)
	}
	if loadArg == "rest" {
		byCPU := map[int]CPUInfo{}
		for _, c := range t.CPUs {
			byCPU[c.CPU] = c
		}
		for _, c := range cores {
			ci := byCPU[c[0]]
			taken := slices.ContainsFunc(server, func(s int) bool {
				si := byCPU[s]
				return si.Socket == ci.Socket && si.Core == ci.Core
			})
			if !taken {
				load = append(load, c...)
			}
		}
		if len(load) == 0 {
			return nil, nil, fmt.Errorf("-wrk-cpus rest: no usable core left beside the servers' %s", server)
		}
		slices.Sort(load)
	} else if load, err = ParseCPUList(loadArg); err != nil {
		return nil, nil, fmt.Errorf("-wrk-cpus: %w", err)
	}
	return server, load, nil
}

// DefaultConnsPerThread is the load generator's connections per thread in
// the multi-core mode (-conns-per-thread).
const DefaultConnsPerThread = 32

// Scale is what the CPU sets give each side of a run.
type Scale struct {
	// ServerThreads is the size of the server set (every CPU when the
	// servers are not pinned): the Go servers' GOMAXPROCS and the worker
	// threads of the ceiling, nginx, h2o and nghttpd.
	ServerThreads int `json:"server_threads"`
	// LoadThreads is the size of the load set (1 when the load generator
	// is not pinned): wrk's and h2load's -t.
	LoadThreads int `json:"load_threads"`
	// Connections is the load generator's -c for workloads that do not fix
	// their own.
	Connections int `json:"connections"`
}

// ScaleFor derives the Scale from the sets. connections > 0 is an explicit
// -connections and wins; otherwise it is connsPerThread × LoadThreads, and
// never fewer than base (the 50 of the 2-vCPU default), so a one-CPU load
// set runs as before. numCPU is what an unpinned server sees.
func ScaleFor(server, load CPUSet, connections, connsPerThread, base, numCPU int) Scale {
	sc := Scale{ServerThreads: max(numCPU, 1), LoadThreads: 1}
	if len(server) > 0 {
		sc.ServerThreads = len(server)
	}
	if len(load) > 0 {
		sc.LoadThreads = len(load)
	}
	switch {
	case connections > 0:
		sc.Connections = connections
	case len(load) > 0:
		sc.Connections = max(connsPerThread*sc.LoadThreads, base)
	default:
		sc.Connections = base
	}
	return sc
}

// loadThreads is the load generator's -t for conns connections: the load
// set's size, but never more threads than connections (wrk and h2load
// refuse that).
func (sc Scale) loadThreads(conns int) int {
	return max(min(sc.LoadThreads, conns), 1)
}

// serverThreads is the worker count of a server pinned to cpus (a taskset
// list): the Go servers' GOMAXPROCS, the threads of the ceiling, nginx, h2o
// and nghttpd. It is every CPU when cpus is empty (what GOMAXPROCS gives an
// unpinned Go server) or unparsable (Run refuses those before any start).
func serverThreads(cpus string) int {
	set, err := ParseCPUList(cpus)
	if err != nil || len(set) == 0 {
		return runtime.NumCPU()
	}
	return len(set)
}
