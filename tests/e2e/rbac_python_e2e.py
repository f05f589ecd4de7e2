#!/usr/bin/python3
"""python3-kubernetes (Debian) with a ServiceAccount token against kube32-server.

Run by rbac_e2e.sh with KUBECONFIG pointing at the server's admin kubeconfig. As the admin:
a ServiceAccount, a Role reading configmaps in one namespace, a RoleBinding (RbacAuthorizationV1Api)
and a token (TokenRequest). Then a client holding only that token reads configmaps there,
watches them, is refused (403) elsewhere and for writes, and SelfSubjectAccessReview answers.
Prints "python-rbac: all checks passed" on success; otherwise the failed check and exits 1.
"""
import os
import sys
import threading

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

NS = "py-rbac"


def fail(msg):
    print("python-rbac: FAIL: " + msg)
    sys.exit(1)


def expect(cond, msg):
    if not cond:
        fail(msg)


def forbidden(call, what):
    try:
        call()
    except ApiException as e:
        expect(e.status == 403, "%s: status %s, want 403: %s" % (what, e.status, e.body))
        expect("system:serviceaccount:%s:bot" % NS in e.body, "%s: message %s" % (what, e.body))
        return
    fail("%s: allowed, want 403" % what)


def main():
    config.load_kube_config(os.environ["KUBECONFIG"])
    v1 = client.CoreV1Api()
    rbac = client.RbacAuthorizationV1Api()
    v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS)))
    v1.create_namespaced_config_map(
        NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="c1"), data={"k": "v"}))
    v1.create_namespaced_service_account(
        NS, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="bot")))
    rbac.create_namespaced_role(NS, client.V1Role(
        metadata=client.V1ObjectMeta(name="cm-reader"),
        rules=[client.V1PolicyRule(api_groups=[""], resources=["configmaps"],
                                   verbs=["get", "list", "watch"])]))
    subject_cls = getattr(client, "RbacV1Subject", None) or getattr(client, "V1Subject")
    rbac.create_namespaced_role_binding(NS, client.V1RoleBinding(
        metadata=client.V1ObjectMeta(name="cm-reader"),
        role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="Role",
                                  name="cm-reader"),
        subjects=[subject_cls(kind="ServiceAccount", name="bot", namespace=NS)]))
    roles = [r.metadata.name for r in rbac.list_namespaced_role(NS).items]
    expect(roles == ["cm-reader"], "list roles: %r" % roles)
    crs = [r.metadata.name for r in rbac.list_cluster_role().items]
    expect("view" in crs and "cluster-admin" in crs, "cluster roles: %r" % crs)

    tr = v1.create_namespaced_service_account_token("bot", NS, client.AuthenticationV1TokenRequest(
        spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=900)))
    token = tr.status.token
    expect(token and token.count(".") == 2, "token: %r" % token)
    expect(tr.status.expiration_timestamp is not None, "expirationTimestamp missing")

    admin_cfg = client.Configuration.get_default_copy()
    cfg = client.Configuration()
    cfg.host = admin_cfg.host
    cfg.ssl_ca_cert = admin_cfg.ssl_ca_cert
    cfg.api_key = {"authorization": "Bearer " + token}
    sa_api = client.ApiClient(cfg)
    sv1 = client.CoreV1Api(sa_api)

    items = [c.metadata.name for c in sv1.list_namespaced_config_map(NS).items]
    expect(items == ["c1"], "list as bot: %r" % items)
    expect(sv1.read_namespaced_config_map("c1", NS).data == {"k": "v"}, "get as bot")
    seen = []

    def watcher():
        w = watch.Watch()
        for ev in w.stream(sv1.list_namespaced_config_map, NS, timeout_seconds=2):
            seen.append((ev["type"], ev["object"].metadata.name))

    t = threading.Thread(target=watcher)
    t.start()
    t.join(10)
    expect(("ADDED", "c1") in seen, "watch as bot: %r" % seen)

    forbidden(lambda: sv1.list_namespaced_config_map("default"), "list configmaps in default")
    forbidden(lambda: sv1.list_namespaced_secret(NS), "list secrets")
    forbidden(lambda: sv1.list_namespaced_pod(NS), "list pods")
    forbidden(lambda: sv1.delete_namespaced_config_map("c1", NS), "delete configmap")
    forbidden(lambda: sv1.create_namespaced_config_map(
        NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="c2"))), "create configmap")

    authz = client.AuthorizationV1Api(sa_api)
    def can(verb, resource, ns):
        r = authz.create_self_subject_access_review(client.V1SelfSubjectAccessReview(
            spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=client.V1ResourceAttributes(
                verb=verb, resource=resource, namespace=ns))))
        return r.status.allowed
    expect(can("watch", "configmaps", NS) is True, "can-i watch configmaps")
    expect(can("list", "configmaps", "default") is False, "can-i list in default")
    expect(can("delete", "configmaps", NS) is False, "can-i delete")

    v1.delete_namespaced_service_account("bot", NS)
    try:
        sv1.list_namespaced_config_map(NS)
        fail("token of a deleted ServiceAccount still works")
    except ApiException as e:
        expect(e.status == 401, "after delete: status %s" % e.status)
    print("python-rbac: all checks passed")


if __name__ == "__main__":
    main()
