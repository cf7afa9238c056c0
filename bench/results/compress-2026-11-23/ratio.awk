# ratio.awk: per-round ns/op ratio nethttp-gzhttp / riptide (above 1:
# riptide faster) from run.sh's output, and the median per -cpu value.
/^# round/ { cpu = $5 }
/server=riptide/ { rip = $3 }
/server=nethttp-gzhttp/ { r = $3 / rip; ratios[cpu] = ratios[cpu] " " r; printf "cpu %s: riptide %d ns/op, nethttp+gzhttp %d ns/op, ratio %.2f\n", cpu, rip, $3, r }
END {
	for (c in ratios) {
		n = split(ratios[c], a, " ")
		asort(a)
		m = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		printf "cpu %s: median ratio %.2f over %d rounds\n", c, m, n
	}
}
