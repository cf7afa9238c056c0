#!/bin/bash
# diff.sh A B N: self instructions per request by function, A vs B
tab() { callgrind_annotate --threshold=100 --auto=no $1 2>/dev/null | awk '/file:function/{f=1;getline;next} f && /^---/{exit} f {gsub(",","",$1); n=$1; $1="";$2=""; sub(/^ +/,""); sub(/ \[.*/,""); sub(/^[^:]*:/,""); a[$0]+=n} END{for(k in a) print a[k]"\t"k}' | sort -t $'\t' -k2; }
join -t $'\t' -1 2 -2 2 -a1 -a2 -e0 -o 0,1.1,2.1 <(tab $1) <(tab $2) | awk -F'\t' -v N=$3 '{d=($3-$2)/N; if (d>25||d<-25) printf "%8.0f %8.0f %8.0f  %s\n", $2/N,$3/N,d,$1}' | sort -k3 -nr
