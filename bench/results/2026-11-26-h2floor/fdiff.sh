#!/bin/bash
# fdiff.sh TAG DOOR: self instr/req by function ((3000x - 1000x)/20000)
tab() { callgrind_annotate --threshold=100 --auto=no $1 2>/dev/null | awk '/file:function/{f=1;getline;next} f && /^---/{exit} f {gsub(",","",$1); n=$1; $1="";$2=""; sub(/^ +/,""); sub(/ \[.*/,""); sub(/^[^:]*:/,""); a[$0]+=n} END{for(k in a) print a[k]"\t"k}' | sort -t $'\t' -k2; }
join -t $'\t' -1 2 -2 2 -a1 -a2 -e0 -o 0,1.1,2.1 <(tab /tmp/h2floor/cg.$1.$2.1000) <(tab /tmp/h2floor/cg.$1.$2.3000) | awk -F'\t' '{d=($3-$2)/20000; printf "%.1f\t%s\n", d, $1}' | sort -t $'\t' -k2
