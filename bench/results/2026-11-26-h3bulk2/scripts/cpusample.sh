#!/bin/bash
# cpusample.sh INTERVAL: every INTERVAL s, per-CPU busy% split (usr sys softirq) from /proc/stat deltas, with a timestamp
iv=${1:-1}
prev=$(grep '^cpu[0-9]' /proc/stat)
while sleep $iv; do
  cur=$(grep '^cpu[0-9]' /proc/stat)
  paste <(echo "$prev") <(echo "$cur") | awk -v t=$(date -u +%H:%M:%S) '{
    # fields: cpuN user nice system idle iowait irq softirq steal ... (11 cols), then cur
    n=NF/2; u=$(n+2)-$2+$(n+3)-$3; s=$(n+4)-$4; id=$(n+5)-$5+$(n+6)-$6; irq=$(n+7)-$7; si=$(n+8)-$8; st=$(n+9)-$9
    tot=u+s+id+irq+si+st; if(tot==0)tot=1
    printf "%s %s busy %5.1f%% usr %5.1f sys %5.1f si %5.1f | ", t, $1, 100*(tot-id)/tot, 100*u/tot, 100*s/tot, 100*(si+irq)/tot
  } END {print ""}'
  prev=$cur
done
