#!/usr/bin/python3
"""Benchmark (not a test): 500 TLS watches opened at the same moment against kube32-server.

    watch_burst_bench.py /path/to/kube32-server

Starts the server (HTTPS, loopback, port 0, temporary data directory, --no-controllers),
releases 500 threads together, each connecting, handshaking and opening a pod watch, and
prints how many watches were established, the time, and the server's RSS before, at peak
and after (VmRSS); then the most common client errors. Stops the server.
"""
import os, socket, ssl, subprocess, sys, tempfile, threading, time
def rss(pid):
    for l in open("/proc/%d/status"%pid):
        if l.startswith("VmRSS:"): return int(l.split()[1])
work=tempfile.mkdtemp(); data=work+"/data"; os.makedirs(data)
tok="t"*32
open(data+"/tokens","w").write('%s,admin,admin,"system:masters"\n'%tok)
p=subprocess.Popen([sys.argv[1],"--data-dir",data,"--port","0","--port-file",work+"/port","--no-controllers"],stderr=subprocess.DEVNULL,stdout=subprocess.DEVNULL)
while not (os.path.exists(work+"/port") and os.path.getsize(work+"/port")): time.sleep(0.05)
port=int(open(work+"/port").read()); time.sleep(0.5)
ctx=ssl.create_default_context(); ctx.check_hostname=False; ctx.verify_mode=ssl.CERT_NONE
N=500; bar=threading.Barrier(N); socks=[None]*N; ok=[0]; errs=[]
def w(i):
    bar.wait()
    raw=socket.create_connection(("127.0.0.1",port),timeout=60)
    try:
        s=ctx.wrap_socket(raw)
        s.sendall(("GET /api/v1/namespaces/default/pods?watch=true HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n"%tok).encode())
        b=b""
        while b"\r\n\r\n" not in b:
            c=s.recv(4096)
            if not c: break
            b+=c
        if b.startswith(b"HTTP/1.1 200"): ok[0]+=1
        socks[i]=s
    except Exception as e:
        errs.append(str(e)[:60])
r0=rss(p.pid)
ts=[threading.Thread(target=w,args=(i,)) for i in range(N)]
t=time.monotonic()
for x in ts: x.start()
peak=r0
while any(x.is_alive() for x in ts):
    peak=max(peak,rss(p.pid)); time.sleep(0.02)
el=time.monotonic()-t
time.sleep(1)
r1=rss(p.pid)
print("watch burst (%s): %d/%d watches in %.1f s; RSS before %d KiB, peak %d KiB (+%d), after %d KiB (+%d)"%(sys.argv[1],ok[0],N,el,r0,peak,peak-r0,r1,r1-r0))
import collections; print(collections.Counter(errs).most_common(3))
p.terminate(); p.wait()
subprocess.call(["rm", "-rf", work])
