#!/bin/bash
# usage: cat.sh perf.data requests: per-request µs by where the sample's own function lives
perf report -i $1 --no-children --sort symbol --stdio -g none 2>/dev/null > ./cat.tmp
tot=$(grep "Event count" ./cat.tmp | awk '{print $NF}')
grep "%" ./cat.tmp | grep -v "^#" | awk -v tot=$tot -v n=$2 '{p=$1; sub("%","",p); s=$0; if (s ~ /riptide-http/) k="riptide"; else if (s ~ /quic-go/) k="quic-go"; else if (s ~ /\[k\]/) k="kernel"; else if (s ~ /runtime\.|internal\/runtime/) k="runtime"; else if (s ~ /crypto|aes|gcm/) k="crypto"; else k="other"; t[k]+=p} END {printf "total %.2f us/req:", tot/1e3/n; for (k in t) printf " %s %.2f", k, t[k]/100*tot/1e3/n; print ""}'
