# ratio.awk: per-round ns/op ratio nethttp-gzhttp / riptide (above 1:
# riptide faster) from run.sh's output, and the median per -cpu value.
/^# round/ { cpu = $5 }
/server=riptide/ { rip = $3 }
/server=nethttp-gzhttp/ {
	r = $3 / rip
	n[cpu]++
	v[cpu, n[cpu]] = r
	printf "cpu %s: riptide %d ns/op, nethttp+gzhttp %d ns/op, ratio %.2f\n", cpu, rip, $3, r
}
END {
	for (c in n) {
		k = n[c]
		for (i = 1; i <= k; i++) a[i] = v[c, i]
		for (i = 2; i <= k; i++) { # insertion sort
			x = a[i]
			for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]
			a[j + 1] = x
		}
		m = (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
		printf "cpu %s: median ratio %.2f over %d rounds (min %.2f, max %.2f)\n", c, m, k, a[1], a[k]
	}
}
