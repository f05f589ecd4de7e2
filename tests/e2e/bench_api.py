#!/usr/bin/python3
"""Benchmark of kube32-server: memory with 10 nodes, 100 pods and their events, and the
latency of GET /api/v1/pods (100 pods) from 1 and from 8 concurrent keep-alive clients.

    bench_api.py /path/to/kube32-server [--tls]

Starts the server on a free loopback port with a temporary data directory (plain HTTP by
default, so the numbers are the API server's and not TLS's; --tls measures over HTTPS),
fills it over the API, reads VmRSS from /proc/<pid>/status (Linux), measures, stops it.
Prints one line per result, e.g. `api_rss_kib 3012 (limit 4096)`.
"""
import http.client
import json
import os
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def main():
    server = sys.argv[1]
    use_tls = "--tls" in sys.argv
    work = tempfile.mkdtemp(prefix="kube32-bench.")
    data = os.path.join(work, "data")
    os.makedirs(data)
    token = os.urandom(16).hex()
    with open(os.path.join(data, "tokens"), "w") as f:
        f.write('%s,admin,admin,"system:masters"\n' % token)
    args = [server, "--data-dir", data, "--port", "0", "--port-file",
            os.path.join(work, "port")]
    if not use_tls:
        args.append("--insecure-http")
    proc = subprocess.Popen(args, stderr=subprocess.DEVNULL)
    port = None
    for _ in range(100):
        try:
            port = int(open(os.path.join(work, "port")).read())
            break
        except (OSError, ValueError):
            time.sleep(0.05)
    if not port:
        print("bench: server did not start")
        proc.kill()
        return 1
    headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json",
               "Accept": "application/json"}

    def conn():
        if use_tls:
            ctx = ssl.create_default_context(cafile=os.path.join(data, "pki", "ca.crt"))
            return http.client.HTTPSConnection("127.0.0.1", port, context=ctx)
        return http.client.HTTPConnection("127.0.0.1", port)

    c = conn()

    def req(method, path, body=None):
        c.request(method, path, body=json.dumps(body) if body is not None else None,
                  headers=headers)
        r = c.getresponse()
        data = r.read()
        if r.status >= 300:
            raise RuntimeError("%s %s: %d %s" % (method, path, r.status, data[:200]))
        return data

    rss_empty = rss_kib(proc.pid)
    for i in range(10):
        req("POST", "/api/v1/nodes", {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "mcu-%d" % i, "labels": {"kube32.io/board": "cardputer"}},
            "status": {"capacity": {"kube32.io/pod-pool": "80Ki"},
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
                       "nodeInfo": {"kubeletVersion": "v1.32.0-kube32"}}})
    for i in range(100):
        req("POST", "/api/v1/namespaces/default/pods", {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "blinky-%d" % i, "labels": {"app": "blinky"}},
            "spec": {"nodeName": "mcu-%d" % (i % 10),
                     "containers": [{"name": "main", "image": "blinky.wasm",
                                     "resources": {"limits": {"memory": "24Ki"}}}]}})
        for reason in ("Scheduled", "Started"):
            req("POST", "/api/v1/namespaces/default/events", {
                "apiVersion": "v1", "kind": "Event",
                "metadata": {"name": "blinky-%d.%s" % (i, reason.lower())},
                "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": "blinky-%d" % i,
                                   "namespace": "default"},
                "reason": reason, "message": "pod blinky-%d %s on mcu-%d" % (i, reason, i % 10),
                "type": "Normal", "count": 1, "source": {"component": "kube32"},
                "firstTimestamp": "2025-01-01T00:00:00Z",
                "lastTimestamp": "2025-01-01T00:00:00Z"})
    body = req("GET", "/api/v1/pods")
    assert len(json.loads(body)["items"]) == 100
    rss = rss_kib(proc.pid)

    # latency: one client, then 8 concurrent clients
    lat = []
    for _ in range(50):
        req("GET", "/api/v1/pods")
    for _ in range(1000):
        t0 = time.perf_counter()
        req("GET", "/api/v1/pods")
        lat.append(time.perf_counter() - t0)
    lat.sort()
    med1 = statistics.median(lat) * 1e3
    p99_1 = lat[int(len(lat) * 0.99)] * 1e3

    lat8 = []
    lock = threading.Lock()

    def worker():
        cc = conn()
        mine = []
        for _ in range(250):
            t0 = time.perf_counter()
            cc.request("GET", "/api/v1/pods", headers=headers)
            r = cc.getresponse()
            r.read()
            mine.append(time.perf_counter() - t0)
        with lock:
            lat8.extend(mine)

    ts = [threading.Thread(target=worker) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    lat8.sort()
    med8 = statistics.median(lat8) * 1e3
    p99_8 = lat8[int(len(lat8) * 0.99)] * 1e3
    rss_after = rss_kib(proc.pid)

    # 500 concurrent watches (each its own connection, waiting for events)
    import socket
    socks = []
    for i in range(500):
        sck = socket.create_connection(("127.0.0.1", port))
        if use_tls:
            sck = ssl.create_default_context(
                cafile=os.path.join(data, "pki", "ca.crt")).wrap_socket(
                    sck, server_hostname="127.0.0.1")
        sck.sendall(("GET /api/v1/namespaces/default/pods?watch=true&resourceVersion=%s "
                     "HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n"
                     % (json.loads(body)["metadata"]["resourceVersion"], token)).encode())
        socks.append(sck)
    time.sleep(1.0)
    for sck in socks[:5]:
        sck.settimeout(2)
        assert sck.recv(100).startswith(b"HTTP/1.1 200")
    rss_watches = rss_kib(proc.pid)
    for sck in socks:
        sck.close()

    proc.send_signal(signal.SIGTERM)
    rc = proc.wait(10)
    print("api_transport %s" % ("https" if use_tls else "http"))
    print("api_rss_kib_empty %d" % rss_empty)
    print("api_rss_kib_10nodes_100pods_200events %d (limit 4096)" % rss)
    print("api_rss_kib_after_8_clients %d" % rss_after)
    print("api_list_pods_100_bytes %d" % len(body))
    print("api_get_pods_100_median_ms_1client %.3f (limit 1.0; python client included)" % med1)
    print("api_get_pods_100_p99_ms_1client %.3f" % p99_1)
    print("api_get_pods_100_median_ms_8clients %.3f" % med8)
    print("api_get_pods_100_p99_ms_8clients %.3f (limit 5.0)" % p99_8)
    print("api_rss_kib_500_watches %d (extra %d KiB, limit 2048)" % (rss_watches, rss_watches - rss_after))
    print("api_sigterm_exit %d" % rc)
    subprocess.call(["rm", "-rf", work])
    return 0


if __name__ == "__main__":
    sys.exit(main())
