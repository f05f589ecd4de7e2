#!/usr/bin/python3
"""python3-kubernetes (Debian) CustomObjectsApi against kube32-server's custom resources.

Run by crd_e2e.sh once the Sensor CRD (sensors.demo.kube32.io) is established, with
KUBECONFIG pointing at the server's admin kubeconfig: create (defaults filled), get, list
with a label selector, merge patch, the status and scale subresources, a watch seeing a
change, a bad object refused with a 422 naming the field and rule, delete; and the CRD read
back through ApiextensionsV1Api. Prints "python-crd: all checks passed" on success;
otherwise the failed check and exits 1.
"""
import json
import os
import sys
import threading
import time

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

G, V, P, NS = "demo.kube32.io", "v1", "sensors", "default"


def fail(msg):
    print("python-crd: FAIL: " + msg)
    sys.exit(1)


def expect(cond, msg):
    if not cond:
        fail(msg)


def main():
    config.load_kube_config(os.environ["KUBECONFIG"])
    co = client.CustomObjectsApi()
    ext = client.ApiextensionsV1Api()

    crd = ext.read_custom_resource_definition("sensors.demo.kube32.io")
    conds = {c.type: c.status for c in crd.status.conditions}
    expect(conds.get("Established") == "True" and conds.get("NamesAccepted") == "True",
           "CRD conditions: %r" % conds)
    expect(crd.status.stored_versions == ["v1"], "storedVersions: %r" % crd.status.stored_versions)

    body = {"apiVersion": "demo.kube32.io/v1", "kind": "Sensor",
            "metadata": {"name": "py1", "labels": {"app": "py"}},
            "spec": {"model": "rfid", "address": "0x29"}}
    o = co.create_namespaced_custom_object(G, V, NS, P, body)
    expect(o["spec"].get("bus") == 0, "default bus: %r" % o["spec"])
    expect(o["metadata"].get("uid"), "uid: %r" % o["metadata"])

    got = co.get_namespaced_custom_object(G, V, NS, P, "py1")
    expect(got["spec"]["model"] == "rfid", "get: %r" % got)
    items = co.list_namespaced_custom_object(G, V, NS, P, label_selector="app=py")["items"]
    expect([i["metadata"]["name"] for i in items] == ["py1"], "list -l: %r" % items)
    allns = co.list_cluster_custom_object(G, V, P)["items"]
    expect("py1" in [i["metadata"]["name"] for i in allns], "list all: %r" % allns)

    p = co.patch_namespaced_custom_object(G, V, NS, P, "py1", {"spec": {"bus": 3}})
    expect(p["spec"]["bus"] == 3, "patch: %r" % p["spec"])
    expect(p["metadata"]["generation"] == 2, "generation: %r" % p["metadata"])

    s = co.patch_namespaced_custom_object_status(G, V, NS, P, "py1",
                                                 {"status": {"reading": 7.25}})
    expect(s["status"]["reading"] == 7.25, "status: %r" % s.get("status"))
    sc = co.patch_namespaced_custom_object_scale(G, V, NS, P, "py1", {"spec": {"replicas": 2}})
    expect(sc["kind"] == "Scale" and sc["spec"]["replicas"] == 2, "scale: %r" % sc)
    expect(co.get_namespaced_custom_object(G, V, NS, P, "py1")["spec"]["replicas"] == 2,
           "scale wrote spec.replicas")

    # a bad object: 422 with the schema's messages
    bad = dict(body, metadata={"name": "py-bad"}, spec={"model": "rfid", "bus": 7})
    try:
        co.create_namespaced_custom_object(G, V, NS, P, bad)
        fail("bad object accepted")
    except ApiException as e:
        st = json.loads(e.body)
        expect(e.status == 422 and st["reason"] == "Invalid", "bad: %s %s" % (e.status, e.body))
        expect("spec.bus in body should be less than or equal to 3" in st["message"],
               "bad message: %s" % st["message"])
        causes = st["details"]["causes"]
        expect(causes[0]["field"] == "spec.bus", "causes: %r" % causes)

    # watch: the existing object, then a change made while watching
    seen = []

    def watcher():
        w = watch.Watch()
        for ev in w.stream(co.list_namespaced_custom_object, G, V, NS, P, timeout_seconds=4):
            seen.append((ev["type"], ev["object"]["metadata"]["name"],
                         ev["object"]["spec"].get("bus")))

    t = threading.Thread(target=watcher)
    t.start()
    time.sleep(1)
    co.patch_namespaced_custom_object(G, V, NS, P, "py1", {"spec": {"bus": 1}})
    t.join(10)
    expect(("ADDED", "py1", 3) in seen and ("MODIFIED", "py1", 1) in seen, "watch: %r" % seen)

    co.delete_namespaced_custom_object(G, V, NS, P, "py1")
    try:
        co.get_namespaced_custom_object(G, V, NS, P, "py1")
        fail("py1 still there after delete")
    except ApiException as e:
        expect(e.status == 404, "get after delete: %s" % e.status)
    print("python-crd: all checks passed")


if __name__ == "__main__":
    main()
