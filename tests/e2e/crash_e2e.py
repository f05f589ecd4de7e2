#!/usr/bin/python3
"""Crash safety of kube32-server end to end.

    crash_e2e.py /path/to/kube32-server

1. Writes ConfigMaps as fast as it can from 4 clients and SIGKILLs the server in the middle;
   restarts it on the same data directory and checks that every acknowledged write (201)
   is there with its data, and that the store did not lose the namespace or the bootstrap.
2. Appends garbage to the log tail (a torn record), restarts, checks the server starts, says
   so in its log, and still has every acknowledged write.
3. After a clean stop, deletes the log: the server must refuse to start, naming
   --store-accept-log-loss; with that flag it starts from the snapshot.
Prints "crash: all checks passed" or the failed check and exits 1.
"""
import http.client
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time


def fail(msg):
    print("crash: FAIL: " + msg)
    sys.exit(1)


class Server:
    def __init__(self, binary, data, token):
        self.binary, self.data, self.token = binary, data, token
        self.proc = None

    def start(self, extra=(), expect_fail=False):
        portfile = os.path.join(self.data, "..", "port")
        if os.path.exists(portfile):
            os.unlink(portfile)
        self.log = open(os.path.join(self.data, "..", "server.log"), "ab")
        # the bare API server (no controllers writing beside the test), when it has the flag
        with open(self.binary, "rb") as f:
            bare = ["--no-controllers"] if b"--no-controllers" in f.read() else []
        self.proc = subprocess.Popen([self.binary, "--data-dir", self.data, "--port", "0",
                                      "--port-file", portfile, "--insecure-http"] + bare +
                                     list(extra), stderr=self.log)
        if expect_fail:
            try:
                return self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                fail("server started although it should have refused")
        for _ in range(200):
            try:
                self.port = int(open(portfile).read())
                return
            except (OSError, ValueError):
                time.sleep(0.05)
        fail("server did not start: " + open(os.path.join(self.data, "..", "server.log")).read())

    def request(self, method, path, body=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        c.request(method, path, body=json.dumps(body) if body is not None else None,
                  headers={"Authorization": "Bearer " + self.token,
                           "Content-Type": "application/json"})
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, data


def main():
    binary = sys.argv[1]
    work = tempfile.mkdtemp(prefix="kube32-crash.")
    data = os.path.join(work, "data")
    os.makedirs(data)
    token = os.urandom(16).hex()
    with open(os.path.join(data, "tokens"), "w") as f:
        f.write('%s,admin,admin,"system:masters"\n' % token)
    srv = Server(binary, data, token)
    srv.start()
    st, _ = srv.request("POST", "/api/v1/namespaces", {"metadata": {"name": "crash"}})
    if st != 201:
        fail("create namespace: %d" % st)

    acked = {}
    lock = threading.Lock()
    stop = threading.Event()

    def writer(w):
        c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
        i = 0
        while not stop.is_set():
            name = "w%d-%d" % (w, i)
            body = json.dumps({"metadata": {"name": name}, "data": {"v": name * 3}})
            try:
                c.request("POST", "/api/v1/namespaces/crash/configmaps", body=body,
                          headers={"Authorization": "Bearer " + token,
                                   "Content-Type": "application/json"})
                r = c.getresponse()
                r.read()
            except (OSError, http.client.HTTPException):
                return  # the server is gone: this write was not acknowledged
            if r.status == 201:
                with lock:
                    acked[name] = name * 3
            i += 1

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    time.sleep(1.5)
    srv.proc.send_signal(signal.SIGKILL)
    srv.proc.wait()
    stop.set()
    for t in threads:
        t.join()
    if len(acked) < 10:
        fail("only %d writes acknowledged before the kill" % len(acked))

    def check_all(stage):
        st, body = srv.request("GET", "/api/v1/namespaces/crash/configmaps")
        if st != 200:
            fail("%s: list: %d %s" % (stage, st, body[:200]))
        have = {i["metadata"]["name"]: i.get("data", {}).get("v") for i in json.loads(body)["items"]}
        missing = [n for n in acked if n not in have]
        wrong = [n for n in acked if n in have and have[n] != acked[n]]
        if missing or wrong:
            fail("%s: %d acknowledged writes missing (%s), %d changed" %
                 (stage, len(missing), missing[:5], len(wrong)))
        st, _ = srv.request("GET", "/api/v1/namespaces/kube-system")
        if st != 200:
            fail("%s: bootstrap namespace lost" % stage)
        return len(have)

    srv.start()
    n = check_all("after SIGKILL")
    print("crash: %d acknowledged, %d present after SIGKILL and restart" % (len(acked), n))
    st, _ = srv.request("POST", "/api/v1/namespaces/crash/configmaps", {"metadata": {"name": "after"}})
    if st != 201:
        fail("write after restart: %d" % st)
    acked["after"] = None
    srv.proc.send_signal(signal.SIGKILL)
    srv.proc.wait()

    # a torn / garbled tail
    with open(os.path.join(data, "store.log"), "ab") as f:
        f.write(b"\x13\x37garbage-that-is-not-a-record" * 3)
    before = os.path.getsize(os.path.join(work, "server.log"))
    srv.start()
    check_all("after a garbled tail")
    time.sleep(0.2)
    with open(os.path.join(work, "server.log"), "rb") as f:
        f.seek(before)
        log = f.read().decode(errors="replace")
    if "store" not in log.lower() or not any(w in log.lower() for w in ("torn", "corrupt", "drop")):
        fail("the server did not report the garbled tail; its log says: %r" % log[:400])
    srv.proc.send_signal(signal.SIGTERM)
    if srv.proc.wait(10) != 0:
        fail("SIGTERM exit status %d" % srv.proc.returncode)

    # a deleted log after a clean stop: acknowledged writes lost, so the server refuses
    os.unlink(os.path.join(data, "store.log"))
    before = os.path.getsize(os.path.join(work, "server.log"))
    if srv.start(expect_fail=True) == 0:
        fail("server exited 0 with its log deleted")
    with open(os.path.join(work, "server.log"), "rb") as f:
        f.seek(before)
        log = f.read().decode(errors="replace")
    if "store.log is missing" not in log or "--store-accept-log-loss" not in log:
        fail("refusal does not name the missing log and the flag; its log says: %r" % log[:400])
    srv.start(extra=["--store-accept-log-loss"])
    st, _ = srv.request("GET", "/api/v1/namespaces/kube-system")
    if st != 200:
        fail("with --store-accept-log-loss: bootstrap namespace missing (%d)" % st)
    srv.proc.send_signal(signal.SIGTERM)
    if srv.proc.wait(10) != 0:
        fail("SIGTERM exit status %d" % srv.proc.returncode)
    subprocess.call(["rm", "-rf", work])
    print("crash: all checks passed")


if __name__ == "__main__":
    main()
