#!/usr/bin/python3
"""python3-kubernetes (Debian) against kube32-server: list, watch, create, patch, delete.

Run by kubectl_e2e.sh with KUBECONFIG pointing at the server's admin kubeconfig. Prints
"python: all checks passed" on success; otherwise the failed check and exits 1.
"""
import os
import sys
import threading
import time

from kubernetes import client, config, watch

NS = "py-e2e"


def fail(msg):
    print("python: FAIL: " + msg)
    sys.exit(1)


def expect(cond, msg):
    if not cond:
        fail(msg)


def main():
    config.load_kube_config(os.environ["KUBECONFIG"])
    v1 = client.CoreV1Api()
    apps = client.AppsV1Api()

    names = [n.metadata.name for n in v1.list_namespace().items]
    expect("default" in names and "kube-system" in names, "list_namespace: %r" % names)

    v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS)))
    cm = v1.create_namespaced_config_map(
        NS,
        client.V1ConfigMap(metadata=client.V1ObjectMeta(name="c1", labels={"app": "py"}),
                           data={"k": "v"}))
    expect(cm.metadata.uid and int(cm.metadata.resource_version) > 0, "create: %r" % cm.metadata)

    # strategic merge patch (the client's default for dict bodies)
    p = v1.patch_namespaced_config_map("c1", NS, {"data": {"k2": "v2"}})
    expect(p.data == {"k": "v", "k2": "v2"}, "patch: %r" % p.data)

    # list with a label selector; an empty list has items == [] (never null)
    items = v1.list_namespaced_config_map(NS, label_selector="app=py").items
    expect([i.metadata.name for i in items] == ["c1"], "list -l: %r" % items)
    expect(v1.list_namespaced_secret(NS).items == [], "empty list")

    # watch: synthetic ADDED for what exists, then live events, then the stream ends
    seen = []

    def watcher():
        w = watch.Watch()
        for ev in w.stream(v1.list_namespaced_config_map, NS, timeout_seconds=3):
            seen.append((ev["type"], ev["object"].metadata.name))

    t = threading.Thread(target=watcher)
    t.start()
    time.sleep(1)
    v1.create_namespaced_config_map(
        NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="c2"), data={"a": "b"}))
    v1.delete_namespaced_config_map("c2", NS)
    t.join(10)
    expect(("ADDED", "c1") in seen and ("ADDED", "c2") in seen and ("DELETED", "c2") in seen,
           "watch events: %r" % seen)

    # a Deployment through the apps client, patched with a merge patch
    dep = client.V1Deployment(
        metadata=client.V1ObjectMeta(name="d1"),
        spec=client.V1DeploymentSpec(
            replicas=1,
            selector=client.V1LabelSelector(match_labels={"app": "d1"}),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels={"app": "d1"}),
                spec=client.V1PodSpec(containers=[client.V1Container(name="m", image="m.wasm")]))))
    apps.create_namespaced_deployment(NS, dep)
    d = apps.patch_namespaced_deployment_scale("d1", NS, {"spec": {"replicas": 2}})
    expect(d.spec.replicas == 2, "scale: %r" % d.spec)
    expect(apps.read_namespaced_deployment("d1", NS).metadata.generation == 2, "generation")

    # errors come back as ApiException with the Status code
    try:
        v1.create_namespaced_config_map(
            NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="c1")))
        fail("duplicate create succeeded")
    except client.exceptions.ApiException as e:
        expect(e.status == 409 and "AlreadyExists" in e.body, "409: %s" % e.body)

    v1.delete_namespaced_config_map("c1", NS)
    try:
        v1.read_namespaced_config_map("c1", NS)
        fail("read after delete succeeded")
    except client.exceptions.ApiException as e:
        expect(e.status == 404, "404 after delete: %s" % e.status)

    v1.delete_namespace(NS)
    print("python: all checks passed")


if __name__ == "__main__":
    main()
