# perrun.py results.json: one line per run of the HTTP/3 bulk workloads: MB/s, server and client
# CPU per MB (ms), each side's CPU in % of one CPU, the server CPU set's busy and irq % (when reported)
import json, sys
r = json.load(open(sys.argv[1]))
for x in r['runs']:
    if x['workload'] not in ('h3bulk', 'h3rsbulk'):
        continue
    mb = x.get('bytes', 0) / 1e6
    srv = 1e3 * x['cpu_seconds'] / mb if mb else 0
    cli = 1e3 * x.get('load_cpu_seconds', 0) / mb if mb else 0
    print(f"{x['workload']:8s} r{x['round']} {x['server']:18s} {x.get('mb_per_s', 0):6.1f} MB/s  "
          f"server {srv:5.2f} ms/MB {x.get('server_busy_pct', 0):4.0f}%  client {cli:5.2f} ms/MB {x.get('load_busy_pct', 0):4.0f}%  "
          f"server CPUs {x.get('server_set_busy_pct', 0):4.0f}% (irq {x.get('server_set_irq_pct', 0):3.0f}%)")
