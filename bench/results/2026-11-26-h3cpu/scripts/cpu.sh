#!/bin/bash
# usage: cpu.sh OUT ROUNDS NAME1 BIN1 NAME2 BIN2 ...  (interleaved rounds, pinned like the harness)
out=$1; r=$2; shift 2; port=$((9500 + RANDOM % 400))
pairs=("$@")
for i in $(seq 1 $r); do
  for ((k=0; k<${#pairs[@]}; k+=2)); do name=${pairs[k]}; bin=${pairs[k+1]}; port=$((port+1))
    line=$(./prof.sh $bin $port ./p-$name-$i)
    echo "$name $line" | awk '{split($2,a,":"); split($3,b,":"); printf "%s requests %d rps %.0f cpu_ticks %d us_per_req %.2f\n",$1,a[2],b[2],$5+$7,($5+$7)*10000/a[2]}'
  done
done | tee $out
