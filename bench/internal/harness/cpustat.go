package harness

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// cpuTimes are the summed /proc/stat counters (USER_HZ ticks) of a set of
// CPUs: all time, the time not idle, and the part of it spent in hard and
// soft interrupts. On loopback, a datagram the server sends is delivered
// to the client's socket (GSO segmentation included) in softirq on the
// server's CPU, mostly inside its sendmsg: /proc/stat counts that as
// softirq, and a kernel with tick-based accounting and no
// CONFIG_IRQ_TIME_ACCOUNTING also charges it to the server's system time.
type cpuTimes struct {
	total, busy, irq uint64
}

// readCPUTimes returns the counters of the CPUs in set, read now.
func readCPUTimes(set CPUSet) (cpuTimes, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}, err
	}
	return parseProcStat(string(b), set)
}

// parseProcStat sums the "cpuN" lines of the /proc/stat text stat for the
// CPUs in set; every CPU of set must have a line.
func parseProcStat(stat string, set CPUSet) (cpuTimes, error) {
	var t cpuTimes
	found := 0
	for line := range strings.SplitSeq(stat, "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		n, err := strconv.Atoi(f[0][3:])
		if err != nil || !slices.Contains(set, n) {
			continue
		}
		// user nice system idle iowait irq softirq [steal ...]; guest
		// time is already in user.
		var v [8]uint64
		for i := 0; i < 8 && i+1 < len(f); i++ {
			if v[i], err = strconv.ParseUint(f[i+1], 10, 64); err != nil {
				return cpuTimes{}, fmt.Errorf("/proc/stat %s: %v", f[0], err)
			}
		}
		var all uint64
		for _, x := range v {
			all += x
		}
		t.total += all
		t.busy += all - v[3] - v[4]
		t.irq += v[5] + v[6]
		found++
	}
	if found != len(set) {
		return cpuTimes{}, fmt.Errorf("/proc/stat has %d of the %d CPUs %s", found, len(set), set)
	}
	return t, nil
}

// pcts returns the busy and interrupt shares of the time from t0 to t1,
// in percent of the set's CPU time (0, 0 when none passed).
func (t1 cpuTimes) pcts(t0 cpuTimes) (busy, irq float64) {
	d := float64(t1.total - t0.total)
	if d <= 0 {
		return 0, 0
	}
	return 100 * float64(t1.busy-t0.busy) / d, 100 * float64(t1.irq-t0.irq) / d
}
