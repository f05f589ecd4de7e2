#!/usr/bin/python3
"""Benchmark of kube32-server: memory with 10 nodes, 100 pods and their events, the latency
of GET /api/v1/pods (100 pods) from 1 and from 8 concurrent keep-alive clients, one fsynced
write, 500 concurrent watches, and idle CPU while 10 nodes renew their Leases.

    bench_api.py /path/to/kube32-server [--tls] [--runs N] [--idle-s S] [-- SERVER ARGS...]

Starts the server on a free loopback port with a temporary data directory (plain HTTP by
default; --tls measures over HTTPS, the way kubectl talks to it), fills it over the API,
reads VmRSS from /proc/<pid>/status (Linux), measures, stops it with SIGTERM.

The 8-client figures come three ways, side by side on the same server: identity (no
Accept-Encoding), `_gzip` (Accept-Encoding: gzip as kubectl sends it; the answer is
inflated by the client inside the timed request; with nothing written meanwhile the server
answers from its cache of compressed lists) and `_gzip_nocache` (gzip again, but every
request carries a distinct ignored query parameter, so each one is listed, rendered and
compressed afresh); `..._gzip_answers_...` counts the answers that really came gzip-encoded.

With kube32-load built beside the server (cmd/kube32-server), the 1 and 8 client figures
are measured again with it (suffix _c; _c_gzip: 8 clients asking for gzip as kubectl does,
inflating every answer): a C client over mbedTLS needs far less CPU than Python's, and the
clients share the machine's 2 cores with the server.
The Python 8 clients are 8 processes (not threads: Python's GIL hands over only every 5 ms, which
would show up as server p99), started together; each keeps one connection. Latencies are
the client's whole request/response time, Python's http.client and ssl included.

--runs N repeats the whole measurement N times (a new server each time) and prints, per
figure, the median over the runs and the range (min..max), with the load average before
and after: this machine is shared, so one run says little. --idle-s S (default 30; 0 skips)
measures the server's CPU time while 10 nodes renew their Leases every 10 s, as kubelets
do: the sum of its threads' nanosecond counters (/proc/<pid>/task/*/schedstat) when no
thread came or went, else utime+stime from /proc/<pid>/stat (10 ms ticks, also printed as
api_idle_cpu_pct_ticks). Anything after "--" goes to kube32-server (e.g.
--handler-threads 0, --no-tls-park). One line per figure, e.g.
`api_rss_kib_10nodes_100pods_200events 3012 (runs 2990..3050; limit 4096)`.
"""
import http.client
import json
import multiprocessing
import os
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import zlib


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def rss_anon_kib(pid):
    """Private (anonymous) resident memory: the heap and stacks, without the shared
    libraries' file pages that VmRSS also counts (and that vary with the page cache)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    return -1


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_tasks_ns(pid):
    """{thread id: ns on a CPU} from /proc/PID/task/*/schedstat (nanoseconds, where
    /proc/PID/stat counts 10 ms clock ticks: 3 ticks are 0.1 % of a 30 s window)."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                out[tid] = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return out


def pct(sorted_lat, q):
    return sorted_lat[min(len(sorted_lat) - 1, int(len(sorted_lat) * q))] * 1e3


class Client:
    def __init__(self, port, data, token, use_tls, gzip=False):
        self.port, self.data, self.use_tls = port, data, use_tls
        self.headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json",
                        "Accept": "application/json"}
        if gzip:  # as kubectl (Go's transport) sends it, and then inflates the answer
            self.headers["Accept-Encoding"] = "gzip"
        self.gzipped = 0  # answers that came with Content-Encoding: gzip
        self.c = self.conn()

    def conn(self):
        if self.use_tls:
            ctx = ssl.create_default_context(cafile=os.path.join(self.data, "pki", "ca.crt"))
            return http.client.HTTPSConnection("127.0.0.1", self.port, context=ctx)
        return http.client.HTTPConnection("127.0.0.1", self.port)

    def req(self, method, path, body=None):
        self.c.request(method, path, body=json.dumps(body) if body is not None else None,
                       headers=self.headers)
        r = self.c.getresponse()
        data = r.read()
        if r.getheader("Content-Encoding") == "gzip":
            data = zlib.decompress(data, 16 + zlib.MAX_WBITS)
            self.gzipped += 1
        if r.status >= 300:
            raise RuntimeError("%s %s: %d %s" % (method, path, r.status, data[:200]))
        return data


def worker(args):
    port, data, token, use_tls, n, start_at, gzip, nocache = args
    cl = Client(port, data, token, use_tls, gzip)
    tag = "w%d" % os.getpid()
    # nocache: a query parameter the server ignores but that makes every request a new key
    # of the API's list cache, so each answer is read, rendered and compressed afresh
    path = (lambda i: "/api/v1/pods?bench=%s-%d" % (tag, i)) if nocache else \
        (lambda i: "/api/v1/pods")
    for i in range(20):
        cl.req("GET", path(i))
    while time.time() < start_at:
        time.sleep(0.001)
    lat = []
    for i in range(n):
        t0 = time.perf_counter()
        cl.req("GET", path(20 + i))
        lat.append(time.perf_counter() - t0)
    return lat, cl.gzipped


def run_once(server, use_tls, server_args, idle_s):
    work = tempfile.mkdtemp(prefix="kube32-bench.")
    data = os.path.join(work, "data")
    os.makedirs(data)
    token = os.urandom(16).hex()
    with open(os.path.join(data, "tokens"), "w") as f:
        f.write('%s,admin,admin,"system:masters"\n' % token)
    args = [server, "--data-dir", data, "--port", "0", "--port-file",
            os.path.join(work, "port")] + server_args
    # the bare API server (issue 5's figures are the API server's), when it has the flag
    with open(server, "rb") as f:
        if b"--no-controllers" in f.read() and "--controllers" not in server_args:
            args.append("--no-controllers")
    if not use_tls:
        args.append("--insecure-http")
    proc = subprocess.Popen(args, stderr=subprocess.DEVNULL)
    port = None
    for _ in range(200):
        try:
            port = int(open(os.path.join(work, "port")).read())
            break
        except (OSError, ValueError):
            time.sleep(0.05)
    if not port:
        proc.kill()
        raise RuntimeError("bench: server did not start")
    out = {}
    cl = Client(port, data, token, use_tls)
    out["api_rss_kib_empty"] = rss_kib(proc.pid)
    out["api_rss_anon_kib_empty"] = rss_anon_kib(proc.pid)
    for i in range(10):
        cl.req("POST", "/api/v1/nodes", {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "mcu-%d" % i, "labels": {"kube32.io/board": "cardputer"}},
            "status": {"capacity": {"kube32.io/pod-pool": "80Ki"},
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
                       "nodeInfo": {"kubeletVersion": "v1.32.0-kube32"}}})
        cl.req("POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", {
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "mcu-%d" % i},
            "spec": {"holderIdentity": "mcu-%d" % i, "leaseDurationSeconds": 40,
                     "renewTime": "2025-01-01T00:00:00.000000Z"}})
    for i in range(100):
        cl.req("POST", "/api/v1/namespaces/default/pods", {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "blinky-%d" % i, "labels": {"app": "blinky"}},
            "spec": {"nodeName": "mcu-%d" % (i % 10),
                     "containers": [{"name": "main", "image": "blinky.wasm",
                                     "resources": {"limits": {"memory": "24Ki"}}}]}})
        for reason in ("Scheduled", "Started"):
            cl.req("POST", "/api/v1/namespaces/default/events", {
                "apiVersion": "v1", "kind": "Event",
                "metadata": {"name": "blinky-%d.%s" % (i, reason.lower())},
                "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": "blinky-%d" % i,
                                   "namespace": "default"},
                "reason": reason, "message": "pod blinky-%d %s on mcu-%d" % (i, reason, i % 10),
                "type": "Normal", "count": 1, "source": {"component": "kube32"},
                "firstTimestamp": "2025-01-01T00:00:00Z",
                "lastTimestamp": "2025-01-01T00:00:00Z"})
    body = cl.req("GET", "/api/v1/pods")
    assert len(json.loads(body)["items"]) == 100
    out["api_rss_kib_10nodes_100pods_200events"] = rss_kib(proc.pid)
    out["api_rss_anon_kib_10nodes_100pods_200events"] = rss_anon_kib(proc.pid)
    out["api_list_pods_100_bytes"] = len(body)

    # one client
    lat = []
    for _ in range(50):
        cl.req("GET", "/api/v1/pods")
    for _ in range(1000):
        t0 = time.perf_counter()
        cl.req("GET", "/api/v1/pods")
        lat.append(time.perf_counter() - t0)
    lat.sort()
    for q in (50, 90, 99):
        out["api_get_pods_100_p%d_ms_1client" % q] = pct(lat, q / 100)

    # 8 clients, 8 processes, started together: without Accept-Encoding (identity), then
    # with "Accept-Encoding: gzip" as kubectl sends it (served from the API's list cache
    # while nothing is written), then gzip with every request a cache miss
    for gz, nocache, suffix in ((False, False, ""), (True, False, "_gzip"),
                                (True, True, "_gzip_nocache")):
        start_at = time.time() + 1.0
        c0 = cpu_s(proc.pid)
        with multiprocessing.get_context("fork").Pool(8) as pool:
            parts = pool.map(worker, [(port, data, token, use_tls, 250, start_at, gz,
                                       nocache)] * 8)
        lat8 = sorted(x for p in parts for x in p[0])
        for q in (50, 90, 99):
            out["api_get_pods_100_p%d_ms_8clients%s" % (q, suffix)] = pct(lat8, q / 100)
        # the server's CPU per request, warm-ups included (8 x (20 + 250))
        out["api_server_cpu_us_per_get_8clients%s" % suffix] = \
            (cpu_s(proc.pid) - c0) / (8 * 270) * 1e6
        # how many of the 8 x 270 answers came gzip-encoded (0 for identity)
        out["api_get_pods_100_gzip_answers_8clients%s" % suffix] = sum(p[1] for p in parts)
    gcl = Client(port, data, token, use_tls, True)
    gcl.c.request("GET", "/api/v1/pods", headers=gcl.headers)
    r = gcl.c.getresponse()
    out["api_list_pods_100_gzip_bytes"] = len(r.read())
    out["api_rss_kib_after_8_clients"] = rss_kib(proc.pid)

    # the same with kube32-load (C, src/http's client over mbedTLS), when built beside
    # the server: much less client CPU on the shared cores
    load = os.path.join(os.path.dirname(os.path.abspath(server)), "kube32-load")
    if os.path.exists(load):
        for clients, tag, gz in ((1, "1client_c", False), (8, "8clients_c", False),
                                 (8, "8clients_c_gzip", True)):
            cmd = [load, "--port", str(port), "--token", token, "--clients", str(clients),
                   "--requests", "2000" if clients == 1 else "500"] + (["--gzip"] if gz else [])
            if use_tls:
                cmd += ["--ca", os.path.join(data, "pki", "ca.crt")]
            c0 = cpu_s(proc.pid)
            res = dict(line.split()[:2] for line in
                       subprocess.run(cmd, check=True, capture_output=True,
                                      text=True).stdout.splitlines())
            # the server's own CPU per request (its threads' utime+stime, warm-up
            # included): what the clients' share of the cores does not blur
            nreq = int(res["load_requests"]) + 20 * clients
            out["api_server_cpu_us_per_get_%s" % tag] = (cpu_s(proc.pid) - c0) / nreq * 1e6
            for q in ("p50", "p90", "p99"):
                out["api_get_pods_100_%s_ms_%s" % (q, tag)] = float(res["load_%s_ms" % q])
            out["api_get_pods_100_rps_%s" % tag] = int(res["load_rps"])

    # single write, fsynced before the answer: a Lease renewal (PUT of a small object)
    wl = []
    lease = json.loads(cl.req("GET", "/apis/coordination.k8s.io/v1/namespaces/"
                                     "kube-node-lease/leases/mcu-0"))
    for i in range(200):
        lease["spec"]["renewTime"] = "2025-01-01T00:00:%02d.%06dZ" % (i % 60, i)
        t0 = time.perf_counter()
        lease = json.loads(cl.req("PUT", "/apis/coordination.k8s.io/v1/namespaces/"
                                         "kube-node-lease/leases/mcu-0", lease))
        wl.append(time.perf_counter() - t0)
    wl.sort()
    out["api_write_lease_p50_ms"] = pct(wl, 0.5)
    out["api_write_lease_p99_ms"] = pct(wl, 0.99)

    # 500 concurrent watches (each its own connection, waiting for events)
    rss_before = rss_kib(proc.pid)
    rv = json.loads(body)["metadata"]["resourceVersion"]
    socks = []
    for i in range(500):
        sck = socket.create_connection(("127.0.0.1", port))
        if use_tls:
            sck = ssl.create_default_context(
                cafile=os.path.join(data, "pki", "ca.crt")).wrap_socket(
                    sck, server_hostname="127.0.0.1")
        sck.sendall(("GET /api/v1/namespaces/default/pods?watch=true&resourceVersion=%s "
                     "HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n"
                     % (rv, token)).encode())
        socks.append(sck)
    time.sleep(1.0)
    for sck in socks[:5]:
        sck.settimeout(2)
        assert sck.recv(100).startswith(b"HTTP/1.1 200")
    out["api_rss_kib_500_watches"] = rss_kib(proc.pid)
    out["api_rss_kib_500_watches_extra"] = out["api_rss_kib_500_watches"] - rss_before
    # every watch still works: one pod change reaches all 500
    cl.c.request("PATCH", "/api/v1/namespaces/default/pods/blinky-0",
                 body=json.dumps({"metadata": {"labels": {"bench": "1"}}}),
                 headers=dict(cl.headers, **{"Content-Type": "application/merge-patch+json"}))
    r = cl.c.getresponse()
    r.read()
    assert r.status == 200, r.status
    got = 0
    for sck in socks:
        sck.settimeout(5)
        buf = b""
        try:
            while b"MODIFIED" not in buf:
                d = sck.recv(65536)
                if not d:
                    break
                buf += d
        except (socket.timeout, ssl.SSLError):
            pass
        got += b"MODIFIED" in buf
    out["api_watches_event_delivered"] = got
    out["api_rss_kib_500_watches_after_event"] = rss_kib(proc.pid)
    for sck in socks:
        sck.close()

    # idle: 10 nodes renewing their Leases every 10 s, one connection each (as kubelets)
    if idle_s > 0:
        nodes = [Client(port, data, token, use_tls) for _ in range(10)]
        leases = [json.loads(n.req("GET", "/apis/coordination.k8s.io/v1/namespaces/"
                                          "kube-node-lease/leases/mcu-%d" % i))
                  for i, n in enumerate(nodes)]
        time.sleep(1.0)
        c0, t0 = cpu_s(proc.pid), time.monotonic()
        ns0 = cpu_tasks_ns(proc.pid)
        k = 0
        while time.monotonic() - t0 < idle_s:
            for i, n in enumerate(nodes):
                leases[i]["spec"]["renewTime"] = "2025-01-01T00:01:%02d.000000Z" % (k % 60)
                leases[i] = json.loads(n.req(
                    "PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/"
                    "mcu-%d" % i, leases[i]))
                time.sleep(1.0)  # spread over the 10 s, as ten independent nodes would be
            k += 1
        ns1, c1, t1 = cpu_tasks_ns(proc.pid), cpu_s(proc.pid), time.monotonic()
        if ns1 and set(ns1) == set(ns0):
            # the same threads throughout: their nanosecond counters are exact
            out["api_idle_cpu_pct_10_nodes_leases_10s"] = \
                (sum(ns1.values()) - sum(ns0.values())) / 1e9 / (t1 - t0) * 100
        else:
            # a thread came or went (its time would be lost): the process's clock ticks
            out["api_idle_cpu_pct_10_nodes_leases_10s"] = (c1 - c0) / (t1 - t0) * 100
        out["api_idle_cpu_pct_ticks"] = (c1 - c0) / (t1 - t0) * 100
        out["api_idle_renewals"] = k * 10

    proc.send_signal(signal.SIGTERM)
    out["api_sigterm_exit"] = proc.wait(10)
    subprocess.call(["rm", "-rf", work])
    return out


LIMITS = {
    "api_rss_kib_10nodes_100pods_200events": "limit 4096",
    "api_get_pods_100_p50_ms_1client": "limit 1.0",
    "api_get_pods_100_p50_ms_8clients": "limit 1.0",
    "api_get_pods_100_p99_ms_8clients": "limit 5.0",
    "api_get_pods_100_p50_ms_8clients_gzip": "limit 1.0",
    "api_get_pods_100_p99_ms_8clients_gzip": "limit 5.0",
    "api_get_pods_100_p50_ms_8clients_c": "limit 1.0",
    "api_get_pods_100_p99_ms_8clients_c": "limit 5.0",
    "api_get_pods_100_p50_ms_8clients_c_gzip": "limit 1.0",
    "api_get_pods_100_p99_ms_8clients_c_gzip": "limit 5.0",
    "api_write_lease_p50_ms": "limit 5.0",
    "api_rss_kib_500_watches_extra": "limit 2048",
    "api_idle_cpu_pct_10_nodes_leases_10s": "limit 0.1",
}


def main():
    argv = sys.argv[1:]
    server_args = []
    if "--" in argv:
        server_args = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    server = argv[0]
    use_tls = "--tls" in argv
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 1
    idle_s = float(argv[argv.index("--idle-s") + 1]) if "--idle-s" in argv else 30.0
    load0 = os.getloadavg()
    results = [run_once(server, use_tls, server_args, idle_s) for _ in range(runs)]
    load1 = os.getloadavg()
    print("api_transport %s" % ("https" if use_tls else "http"))
    print("api_server_args %s" % (" ".join(server_args) or "(defaults)"))
    print("api_runs %d" % runs)
    print("api_loadavg_1m_before_after %.2f %.2f (2 cores)" % (load0[0], load1[0]))
    for key in results[0]:
        vals = [r[key] for r in results]
        med = statistics.median(vals)
        fmt = "%d" if all(isinstance(v, int) for v in vals) else "%.3f"
        spread = "runs %s..%s" % (fmt % min(vals), fmt % max(vals)) if runs > 1 else ""
        note = "; ".join(x for x in (spread, LIMITS.get(key, "")) if x)
        print(("%s " + fmt + "%s") % (key, med, " (%s)" % note if note else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
