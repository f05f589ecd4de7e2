#!/usr/bin/python3
"""Connection admission of kube32-server under a flood of unauthenticated connections.

    flood_e2e.py /path/to/kube32-server [/path/to/kubectl]

Starts kube32-server (HTTPS, loopback, port 0, temporary data directory), then opens 1,000
idle unauthenticated connections from 127.0.0.1, the address kubectl uses too:
  - 400 TCP connections that send nothing,
  - 100 that send half a TLS ClientHello and stall,
  - 500 that finish the TLS handshake and then send nothing.
While they are open, kubectl must answer `get namespaces` in under 2 s (before admission
control, the 1,000-connection table was full and kubectl got SSL_ERROR_SYSCALL for 120 s).
Also checks: a request without a token gets 401 and its connection is closed; a client
refused for lack of room is never sent plain text inside its handshake; the server's memory
after the flood stays bounded (1,000 unfinished handshakes used to hold ~27 MiB); the
server stops cleanly on SIGTERM. Exit 0 and "flood: all checks passed", or 1 with the
failed check; 77 when kubectl is missing (unless CI=true).
"""
import os
import resource
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time

FLOOD_RAW, FLOOD_PARTIAL, FLOOD_TLS = 400, 100, 500
KUBECTL_LIMIT_S = 2.0
RSS_GROWTH_LIMIT_KIB = 10 * 1024


def fail(msg):
    print("flood: FAIL: " + msg)
    sys.exit(1)


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def client_hello(ctx):
    """The bytes of a real ClientHello (from an in-memory TLS client)."""
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname="127.0.0.1")
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return out.read()


def main():
    server = sys.argv[1]
    with open(server, "rb") as f:
        asan_build = b"__asan_init" in f.read()
    kubectl = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("KUBECTL", "/usr/bin/kubectl")
    if not os.access(kubectl, os.X_OK):
        print("flood: kubectl missing at %s: %s" % (kubectl, "FAIL (CI=true)" if os.environ.get("CI") == "true" else "SKIPPED"))
        sys.exit(1 if os.environ.get("CI") == "true" else 77)
    signal.alarm(180)  # the whole test is bounded in time
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = FLOOD_RAW + FLOOD_PARTIAL + FLOOD_TLS + 200
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))

    work = tempfile.mkdtemp(prefix="kube32-flood.")
    data = os.path.join(work, "data")
    home = os.path.join(work, "home")
    os.makedirs(data)
    os.makedirs(home)
    token = os.urandom(16).hex()
    with open(os.path.join(data, "tokens"), "w") as f:
        f.write('%s,admin,admin,"system:masters"\n' % token)
    kubeconfig = os.path.join(data, "admin.kubeconfig")
    portfile = os.path.join(work, "port")
    log = open(os.path.join(work, "server.log"), "wb")
    proc = subprocess.Popen([server, "--data-dir", data, "--port", "0", "--port-file", portfile,
                             "--no-controllers"], stdout=log, stderr=log)
    socks = []
    try:
        for _ in range(200):
            if os.path.exists(portfile) and os.path.getsize(portfile) > 0 and \
                    os.path.exists(kubeconfig):
                break
            time.sleep(0.05)
        else:
            fail("server did not start: " + open(os.path.join(work, "server.log")).read())
        port = int(open(portfile).read())
        env = dict(os.environ, KUBECONFIG=kubeconfig, HOME=home)

        def kubectl_get():
            t0 = time.monotonic()
            r = subprocess.run([kubectl, "get", "namespaces", "--request-timeout=10s"],
                               env=env, capture_output=True, text=True, timeout=30)
            return time.monotonic() - t0, r

        # warm kubectl's discovery cache, and a time to compare with
        _, r = kubectl_get()
        if r.returncode != 0 or "kube-system" not in r.stdout:
            fail("kubectl before the flood: %s %s" % (r.stdout, r.stderr))
        quiet_s, r = kubectl_get()

        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE

        # a 401 closes its connection
        s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10))
        s.sendall(b"GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = b""
        while True:
            try:
                chunk = s.recv(4096)
            except (ssl.SSLError, OSError):
                break
            if not chunk:
                break
            answer += chunk
        s.close()
        head = answer.split(b"\r\n\r\n", 1)[0].decode(errors="replace")
        if not head.startswith("HTTP/1.1 401") or "connection: close" not in head.lower():
            fail("unauthenticated request: expected a 401 that closes, got %r" % head[:200])

        base_kib = rss_kib(proc.pid)
        hello = client_hello(ctx)
        t0 = time.monotonic()
        for _ in range(FLOOD_RAW):
            socks.append(socket.create_connection(("127.0.0.1", port), timeout=10))
        for _ in range(FLOOD_PARTIAL):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(hello[:len(hello) // 2])
            socks.append(s)
        handshakes_failed = 0
        for _ in range(FLOOD_TLS):
            raw = socket.create_connection(("127.0.0.1", port), timeout=10)
            try:
                socks.append(ctx.wrap_socket(raw))
            except (ssl.SSLError, OSError) as e:
                # refused: must be a TLS-level refusal or a close, never plain text
                if "WRONG_VERSION_NUMBER" in str(e) or "wrong version" in str(e):
                    fail("a refused client got plain text inside its TLS handshake: %s" % e)
                handshakes_failed += 1
                raw.close()
        flood_s = time.monotonic() - t0
        time.sleep(0.3)  # the server has taken all of them in
        flood_kib = rss_kib(proc.pid)

        busy_s, r = kubectl_get()
        if r.returncode != 0 or "kube-system" not in r.stdout:
            fail("kubectl during the flood failed after %.2f s: %s %s" % (busy_s, r.stdout, r.stderr))
        if busy_s >= KUBECTL_LIMIT_S:
            fail("kubectl took %.2f s with 1,000 idle connections open (limit %.1f s)" %
                 (busy_s, KUBECTL_LIMIT_S))
        closed = 0
        for s in socks:
            s.setblocking(False)
            try:
                if s.recv(1) == b"":
                    closed += 1
            except (BlockingIOError, ssl.SSLWantReadError):
                pass
            except (ssl.SSLError, OSError):
                closed += 1
        print("flood: %d idle connections opened in %.2f s (%d TLS handshakes refused); "
              "server closed %d of them" % (len(socks) + handshakes_failed, flood_s,
                                             handshakes_failed, closed))
        print("flood: kubectl get namespaces %.2f s quiet, %.2f s during the flood" %
              (quiet_s, busy_s))
        print("flood: server RSS %d KiB before the flood, %d KiB with it (+%d KiB)" %
              (base_kib, flood_kib, flood_kib - base_kib))
        if asan_build:
            print("flood: AddressSanitizer build (its quarantine keeps freed memory): the "
                  "memory bound is checked by the plain build only")
        elif flood_kib - base_kib > RSS_GROWTH_LIMIT_KIB:
            fail("server memory grew by %d KiB with the flood (limit %d KiB)" %
                 (flood_kib - base_kib, RSS_GROWTH_LIMIT_KIB))
    finally:
        for s in socks:
            s.close()
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                rc = proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                rc = -9
        else:
            rc = proc.returncode
        log.close()
    if rc != 0:
        fail("server exit status %d after SIGTERM; log: %s" %
             (rc, open(os.path.join(work, "server.log")).read()[-2000:]))
    subprocess.call(["rm", "-rf", work])
    print("flood: all checks passed")


if __name__ == "__main__":
    main()
