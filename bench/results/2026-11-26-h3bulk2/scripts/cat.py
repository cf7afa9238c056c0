import sys, subprocess, collections
# usage: cat.py perf.data COMM[,COMM] ; categorise each sample of those comms by its stack
data, comms = sys.argv[1], set(sys.argv[2].split(','))
out = subprocess.run(['perf','script','-i',data,'-F','comm,ip,sym'], capture_output=True, text=True).stdout
cats = [  # (name, substrings: the first category whose any frame matches, checked in order)
 ('softirq (loopback delivery)', ['handle_softirqs','do_softirq','net_rx_action']),
 ('AES-GCM seal', ['gcm.seal','gcm.(*GCM).Seal','aes.encryptBlock']),
 ('AES-GCM open', ['gcm.open']),
 ('sendmsg (kernel, UDP/GSO)', ['udp_sendmsg','__sys_sendmsg','syscall.sendmsg','WriteMsgUDP']),
 ('recvmsg/recvmmsg', ['udp_recvmsg','__sys_recvmmsg','___sys_recvmsg','recvmmsg','ReadBatch','ReadMsgUDP']),
 ('stream data copy (popNewStreamFrame)', ['popNewStreamFrame']),
 ('quic-go ack handling', ['ackhandler','handleAckFrame']),
 ('quic-go packing/sending other', ['sendPackets','packetPacker','AppendPacket']),
 ('quic-go receive other', ['handlePacketImpl','handleShortHeaderPacket','handleFrames','(*Conn).run']),
 ('riptide layer', ['riptide-http/riptide/internal','riptide-http/riptide/http3','riptide-http/riptide.','riptide-http/riptide/h3']),
 ('quic-go http3 layer', ['quic-go/http3','quic-go/qpack']),
 ('Go GC', ['gcBgMarkWorker','gcDrain','markroot','scanobject','bgsweep','bgscavenge']),
 ('Go scheduler/sysmon/timers', ['runtime.schedule','runtime.findRunnable','runtime.sysmon','runtime.mcall','runtime.park_m','futex','runtime.notesleep','runtime.usleep','runtime.goexit0','checkTimers','exitsyscall','entersyscall']),
]
c = collections.Counter(); n = 0
for block in out.split('\n\n'):
    lines = block.strip().split('\n')
    if not lines or not lines[0].strip(): continue
    comm = lines[0].split()[0]
    if comm not in comms: continue
    n += 1
    stack = ' '.join(lines)
    for name, subs in cats:
        if any(s in stack for s in subs):
            c[name] += 1; break
    else:
        c['other'] += 1
print(f'{data}: {n} samples of {sorted(comms)}')
for name, _ in cats + [('other', None)]:
    print(f'  {name:40s} {100*c[name]/max(n,1):5.1f}%')
