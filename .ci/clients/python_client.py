"""Checks the hub with the real Python `kubernetes` client.

Usage: python_client.py KUBECONFIG

Each check is one function; a line is printed per check (`ok  NAME` or `FAIL NAME: detail`)
and the exit status is non-zero when any check failed. Everything namespaced is created in
one fresh namespace, deleted at the end.
"""

import json
import secrets
import sys
import threading
from datetime import datetime, timezone

import yaml
from checks import CheckFailed, eventually, expect, expect_eq, run, short
from kubernetes import client, config, watch
from kubernetes.client.exceptions import ApiException

KUBECONFIG = sys.argv[1] if len(sys.argv) > 1 else None
NS = f"clients-py-{secrets.token_hex(4)}"
NOBODY = "clients-nobody"  # no binding anywhere
READER = "clients-reader"  # may get/list ConfigMaps in NS only (a Role and RoleBinding below)
SMP = "application/strategic-merge-patch+json"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"


def expect_status(status, fn, *args, **kwargs):
    """Calls fn expecting an ApiException with HTTP `status`; returns it."""
    try:
        result = fn(*args, **kwargs)
    except ApiException as e:
        if e.status != status:
            raise CheckFailed(
                f"{fn.__name__}: got HTTP {e.status} ({e.body}), want {status}"
            ) from e
        return e
    raise CheckFailed(f"{fn.__name__}: succeeded ({short(result)}), want HTTP {status}")


def micro_now():
    # A MicroTime is written with six fractional digits; Python's isoformat() omits the fraction
    # when it is zero, so a zero microsecond is avoided.
    now = datetime.now(timezone.utc)
    return now.replace(microsecond=now.microsecond or 1)


def new_api(impersonate_user=None, impersonate_group=None):
    api = config.new_client_from_config(config_file=KUBECONFIG)
    if impersonate_user:
        api.set_default_header("Impersonate-User", impersonate_user)
    if impersonate_group:
        api.set_default_header("Impersonate-Group", impersonate_group)
    return api


def raw_get(api, path):
    """GET path with the client's own transport and credentials; returns (status, body bytes)."""
    method, url, headers, body, _ = api.param_serialize(
        "GET", path, header_params={"Accept": "application/json"}, auth_settings=["BearerToken"]
    )
    response = api.call_api(method, url, headers, body)
    return response.status, response.read()


def admin_token():
    with open(KUBECONFIG) as f:
        kubeconfig = yaml.safe_load(f)
    context = next(
        c["context"] for c in kubeconfig["contexts"] if c["name"] == kubeconfig["current-context"]
    )
    user = next(u["user"] for u in kubeconfig["users"] if u["name"] == context["user"])
    return user["token"]


ADMIN = new_api()
CORE = client.CoreV1Api(ADMIN)
APPS = client.AppsV1Api(ADMIN)
RBAC = client.RbacAuthorizationV1Api(ADMIN)
EVENTS = client.EventsV1Api(ADMIN)
AUTHN = client.AuthenticationV1Api(ADMIN)
AUTHZ = client.AuthorizationV1Api(ADMIN)

CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


def meta(name, **kwargs):
    return client.V1ObjectMeta(name=name, **kwargs)


# --- discovery ----------------------------------------------------------------------------


@check
def version():
    info = client.VersionApi(ADMIN).get_code()  # GET /version/, trailing slash
    expect_eq(info.major, "1", "major")
    expect(info.git_version.startswith("v1."), f"gitVersion {info.git_version!r}")
    for path in ("/version", "/version/"):
        status, body = raw_get(ADMIN, path)
        expect_eq(status, 200, f"GET {path} status")
        expect_eq(json.loads(body)["gitVersion"], info.git_version, f"GET {path} gitVersion")


@check
def discovery_groups():
    groups = {g.name: g for g in client.ApisApi(ADMIN).get_api_versions().groups}
    for name in (
        "apps",
        "authentication.k8s.io",
        "authorization.k8s.io",
        "events.k8s.io",
        "rbac.authorization.k8s.io",
        "apiextensions.k8s.io",
    ):
        expect(name in groups, f"/apis lacks {name}: {sorted(groups)}")
    expect_eq(client.CoreApi(ADMIN).get_api_versions().versions, ["v1"], "/api versions")
    for api, name, kinds in (
        (client.AuthenticationApi(ADMIN), "authentication.k8s.io", {"tokenreviews", "selfsubjectreviews"}),
        (
            client.AuthorizationApi(ADMIN),
            "authorization.k8s.io",
            {"subjectaccessreviews", "selfsubjectaccessreviews", "localsubjectaccessreviews"},
        ),
    ):
        group = api.get_api_group()
        expect_eq(group.name, name, "group name")
        expect_eq(group.preferred_version.group_version, f"{name}/v1", f"{name} preferred version")
        expect_eq(groups[name].preferred_version.group_version, f"{name}/v1", f"/apis {name}")
    resources = {r.name for r in AUTHN.get_api_resources().resources}
    expect({"tokenreviews", "selfsubjectreviews"} <= resources, f"authentication.k8s.io/v1: {resources}")
    resources = {r.name for r in AUTHZ.get_api_resources().resources}
    expect(
        {"subjectaccessreviews", "selfsubjectaccessreviews", "localsubjectaccessreviews"} <= resources,
        f"authorization.k8s.io/v1: {resources}",
    )
    resources = {r.name: r for r in EVENTS.get_api_resources().resources}
    expect("events" in resources and resources["events"].namespaced, f"events.k8s.io/v1: {set(resources)}")


# --- typed bodies without apiVersion/kind -------------------------------------------------


@check
def create_without_kind():
    body = client.V1ConfigMap(metadata=meta("typed"), data={"a": "1"})
    sent = ADMIN.sanitize_for_serialization(body)
    expect("apiVersion" not in sent and "kind" not in sent, f"the client sends {sent}")
    created = CORE.create_namespaced_config_map(NS, body)
    expect_eq((created.api_version, created.kind), ("v1", "ConfigMap"), "created")
    expect_eq(created.data, {"a": "1"}, "created data")
    replaced = CORE.replace_namespaced_config_map(
        "typed", NS, client.V1ConfigMap(metadata=meta("typed"), data={"b": "2"})
    )
    expect_eq((replaced.api_version, replaced.kind), ("v1", "ConfigMap"), "replaced")
    expect_eq(replaced.data, {"b": "2"}, "replaced data")
    status, raw = raw_get(ADMIN, f"/api/v1/namespaces/{NS}/configmaps/typed")
    stored = json.loads(raw)
    expect_eq(status, 200, "GET status")
    expect_eq((stored.get("apiVersion"), stored.get("kind")), ("v1", "ConfigMap"), "GET as JSON")
    expect_eq(stored.get("data"), {"b": "2"}, "GET data")
    # Another group: apps/v1 from the URL.
    deployment = APPS.create_namespaced_deployment(NS, deployment_body("typed"))
    expect_eq((deployment.api_version, deployment.kind), ("apps/v1", "Deployment"), "Deployment")
    deployment = APPS.replace_namespaced_deployment("typed", NS, deployment_body("typed", replicas=2))
    expect_eq((deployment.api_version, deployment.kind), ("apps/v1", "Deployment"), "replaced Deployment")
    expect_eq(deployment.spec.replicas, 2, "replaced replicas")
    APPS.delete_namespaced_deployment("typed", NS)
    CORE.delete_namespaced_config_map("typed", NS)


def deployment_body(name, replicas=1):
    labels = {"app": name}
    return client.V1Deployment(
        metadata=meta(name, labels=labels),
        spec=client.V1DeploymentSpec(
            replicas=replicas,
            selector=client.V1LabelSelector(match_labels=labels),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=labels),
                spec=client.V1PodSpec(
                    containers=[
                        client.V1Container(name="app", image="registry.invalid/app:1"),
                        client.V1Container(name="sidecar", image="registry.invalid/sidecar:1"),
                    ]
                ),
            ),
        ),
    )


# --- CRUD, patch and watch ----------------------------------------------------------------


@check
def configmap_crud_watch():
    name = "watched"
    selector = "clients.flotilla.test/check=watch"
    start = CORE.list_namespaced_config_map(NS, label_selector=selector).metadata.resource_version
    seen = []
    errors = []

    def stream():
        w = watch.Watch()
        try:
            for event in w.stream(
                CORE.list_namespaced_config_map,
                NS,
                label_selector=selector,
                resource_version=start,
                timeout_seconds=30,
            ):
                obj = event["object"]
                seen.append((event["type"], obj.metadata.name, dict(obj.data or {})))
                if event["type"] == "DELETED":
                    w.stop()
        except Exception as e:  # reported by the main thread
            errors.append(e)

    watcher = threading.Thread(target=stream, daemon=True)
    watcher.start()

    labels = {"clients.flotilla.test/check": "watch"}
    cm = CORE.create_namespaced_config_map(
        NS, client.V1ConfigMap(metadata=meta(name, labels=labels), data={"a": "1"})
    )
    cm = CORE.patch_namespaced_config_map(name, NS, {"data": {"b": "2"}}, _content_type=SMP)
    expect_eq(cm.data, {"a": "1", "b": "2"}, "after strategic merge patch")
    cm = CORE.patch_namespaced_config_map(
        name, NS, {"data": {"a": None, "c": "3"}}, _content_type=MERGE
    )
    expect_eq(cm.data, {"b": "2", "c": "3"}, "after merge patch")
    cm = CORE.patch_namespaced_config_map(
        name,
        NS,
        [{"op": "test", "path": "/data/b", "value": "2"}, {"op": "replace", "path": "/data/b", "value": "4"}],
        _content_type=JSON_PATCH,
    )
    expect_eq(cm.data, {"b": "4", "c": "3"}, "after JSON patch")
    # A JSON patch whose test fails changes nothing.
    expect_status(
        422,
        CORE.patch_namespaced_config_map,
        name,
        NS,
        [{"op": "test", "path": "/data/b", "value": "no"}, {"op": "remove", "path": "/data/c"}],
        _content_type=JSON_PATCH,
    )
    stale = cm.metadata.resource_version
    cm.data = {"d": "5"}
    cm = CORE.replace_namespaced_config_map(name, NS, cm)
    expect_eq(cm.data, {"d": "5"}, "after replace")
    expect(cm.metadata.resource_version != stale, "replace kept the resourceVersion")
    # A replace with the old resourceVersion conflicts.
    expect_status(
        409,
        CORE.replace_namespaced_config_map,
        name,
        NS,
        client.V1ConfigMap(metadata=meta(name, resource_version=stale), data={"e": "6"}),
    )
    listed = CORE.list_namespaced_config_map(NS, label_selector=selector).items
    expect_eq([(c.metadata.name, c.data) for c in listed], [(name, {"d": "5"})], "list")
    CORE.delete_namespaced_config_map(name, NS)
    expect_status(404, CORE.read_namespaced_config_map, name, NS)

    watcher.join(timeout=20)
    expect(not watcher.is_alive(), f"the watch saw no DELETED within 20s; saw {seen}")
    expect(not errors, f"the watch failed: {errors}")
    expect_eq(
        seen,
        [
            ("ADDED", name, {"a": "1"}),
            ("MODIFIED", name, {"a": "1", "b": "2"}),
            ("MODIFIED", name, {"b": "2", "c": "3"}),
            ("MODIFIED", name, {"b": "4", "c": "3"}),
            ("MODIFIED", name, {"d": "5"}),
            ("DELETED", name, {"d": "5"}),
        ],
        "watch events",
    )


@check
def deployment_patch_and_scale():
    name = "web"
    APPS.create_namespaced_deployment(NS, deployment_body(name))
    # Strategic merge: containers merge by name, the sidecar stays.
    d = APPS.patch_namespaced_deployment(
        name,
        NS,
        {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "registry.invalid/app:2"}]}}}},
        _content_type=SMP,
    )
    images = [(c.name, c.image) for c in d.spec.template.spec.containers]
    expect_eq(
        images,
        [("app", "registry.invalid/app:2"), ("sidecar", "registry.invalid/sidecar:1")],
        "containers after strategic merge patch",
    )
    d = APPS.patch_namespaced_deployment(
        name, NS, {"metadata": {"labels": {"tier": "front"}}}, _content_type=MERGE
    )
    expect_eq(d.metadata.labels, {"app": name, "tier": "front"}, "labels after merge patch")
    d = APPS.patch_namespaced_deployment(
        name, NS, [{"op": "replace", "path": "/spec/replicas", "value": 2}], _content_type=JSON_PATCH
    )
    expect_eq(d.spec.replicas, 2, "replicas after JSON patch")

    scale = APPS.read_namespaced_deployment_scale(name, NS)
    expect_eq((scale.api_version, scale.kind), ("autoscaling/v1", "Scale"), "scale kind")
    expect_eq(scale.spec.replicas, 2, "scale replicas")
    scale = APPS.patch_namespaced_deployment_scale(name, NS, {"spec": {"replicas": 5}})
    expect_eq(scale.spec.replicas, 5, "patched scale")
    expect_eq(APPS.read_namespaced_deployment(name, NS).spec.replicas, 5, "replicas after scale patch")
    scale = APPS.replace_namespaced_deployment_scale(
        name, NS, client.V1Scale(metadata=meta(name), spec=client.V1ScaleSpec(replicas=3))
    )
    expect_eq(scale.spec.replicas, 3, "replaced scale")
    expect_eq(APPS.read_namespaced_deployment(name, NS).spec.replicas, 3, "replicas after scale replace")

    APPS.delete_namespaced_deployment(name, NS)
    eventually(
        lambda: not [x for x in APPS.list_namespaced_deployment(NS).items if x.metadata.name == name],
        f"Deployment {name} still listed after delete",
    )


@check
def resource_quota():
    hard = {"pods": "10", "configmaps": "20", "requests.cpu": "2", "requests.memory": "1Gi"}
    created = CORE.create_namespaced_resource_quota(
        NS, client.V1ResourceQuota(metadata=meta("quota"), spec=client.V1ResourceQuotaSpec(hard=hard))
    )
    expect_eq((created.api_version, created.kind), ("v1", "ResourceQuota"), "created")
    read = CORE.read_namespaced_resource_quota("quota", NS)
    expect_eq(read.spec.hard, hard, "spec.hard")
    names = [q.metadata.name for q in CORE.list_namespaced_resource_quota(NS).items]
    expect_eq(names, ["quota"], "listed quotas")
    # kube-apiserver answers a ResourceQuota's DELETE with the deleted object (its storage has
    # ReturnDeletedObject), and the client's delete_namespaced_resource_quota decodes it so.
    response = CORE.delete_namespaced_resource_quota("quota", NS, _preload_content=False)
    deleted = json.loads(response.data)
    expect_eq(
        (deleted.get("kind"), deleted.get("metadata", {}).get("name")),
        ("ResourceQuota", "quota"),
        f"DELETE answered {short(deleted)}; kind and name",
    )
    expect_status(404, CORE.read_namespaced_resource_quota, "quota", NS)
    CORE.create_namespaced_resource_quota(
        NS, client.V1ResourceQuota(metadata=meta("quota2"), spec=client.V1ResourceQuotaSpec(hard=hard))
    )
    deleted = CORE.delete_namespaced_resource_quota("quota2", NS)
    expect_eq(deleted.metadata.name, "quota2", "typed delete")


# --- Events: core/v1 and events.k8s.io/v1 are one resource --------------------------------


@check
def events_core_and_events_v1():
    target = CORE.create_namespaced_config_map(NS, client.V1ConfigMap(metadata=meta("evented")))
    ref = client.V1ObjectReference(
        api_version="v1", kind="ConfigMap", name="evented", namespace=NS, uid=target.metadata.uid
    )
    now = micro_now()
    CORE.create_namespaced_event(
        NS,
        client.CoreV1Event(
            metadata=meta("evented.core"),
            involved_object=ref,
            reason="CoreReason",
            message="written through core/v1",
            type="Normal",
            source=client.V1EventSource(component="clients-check"),
            first_timestamp=now,
            last_timestamp=now,
            count=1,
            event_time=now,
            action="Check",
            reporting_component="clients-check",
            reporting_instance="clients-check-1",
        ),
    )
    EVENTS.create_namespaced_event(
        NS,
        client.EventsV1Event(
            metadata=meta("evented.v1"),
            regarding=ref,
            reason="V1Reason",
            note="written through events.k8s.io/v1",
            type="Warning",
            event_time=now,
            action="Check",
            reporting_controller="clients.flotilla.test/check",
            reporting_instance="clients-check-1",
        ),
    )

    as_v1 = {e.metadata.name: e for e in EVENTS.list_namespaced_event(NS).items}
    expect(set(as_v1) >= {"evented.core", "evented.v1"}, f"events.k8s.io/v1 lists {sorted(as_v1)}")
    e = as_v1["evented.core"]
    expect_eq(
        (e.note, e.reason, e.type, e.regarding.kind, e.regarding.name, e.regarding.uid),
        ("written through core/v1", "CoreReason", "Normal", "ConfigMap", "evented", target.metadata.uid),
        "core/v1 Event read as events.k8s.io/v1",
    )
    expect_eq(e.reporting_controller, "clients-check", "reportingController")

    as_core = {e.metadata.name: e for e in CORE.list_namespaced_event(NS).items}
    expect(set(as_core) >= {"evented.core", "evented.v1"}, f"core/v1 lists {sorted(as_core)}")
    e = as_core["evented.v1"]
    expect_eq(
        (e.message, e.reason, e.type, e.involved_object.kind, e.involved_object.name),
        ("written through events.k8s.io/v1", "V1Reason", "Warning", "ConfigMap", "evented"),
        "events.k8s.io/v1 Event read as core/v1",
    )
    expect_eq(e.reporting_component, "clients.flotilla.test/check", "reportingComponent")
    # Cross-version read and delete by name.
    expect_eq(EVENTS.read_namespaced_event("evented.core", NS).note, "written through core/v1", "read")
    expect_eq(CORE.read_namespaced_event("evented.v1", NS).message, "written through events.k8s.io/v1", "read")
    EVENTS.delete_namespaced_event("evented.core", NS)
    CORE.delete_namespaced_event("evented.v1", NS)
    expect_status(404, CORE.read_namespaced_event, "evented.core", NS)
    expect_status(404, EVENTS.read_namespaced_event, "evented.v1", NS)
    CORE.delete_namespaced_config_map("evented", NS)


# --- identity: impersonation, access reviews, token reviews -------------------------------


def forbidden(e, user):
    body = json.loads(e.body)
    expect_eq(body.get("reason"), "Forbidden", "reason")
    expect(f'User "{user}"' in body.get("message", ""), f"message {body.get('message')!r}")


def whoami(api):
    review = client.AuthenticationV1Api(api).create_self_subject_review(client.V1SelfSubjectReview())
    return review.status.user_info


@check
def impersonation():
    me = whoami(ADMIN)
    expect("system:masters" in (me.groups or []), f"the admin's groups: {me.groups}")

    nobody = new_api(impersonate_user=NOBODY)
    info = whoami(nobody)
    expect_eq(info.username, NOBODY, "impersonated username")
    expect_eq(set(info.groups or []), {"system:authenticated"}, "impersonated groups")
    forbidden(expect_status(403, client.CoreV1Api(nobody).list_namespaced_config_map, NS), NOBODY)
    forbidden(expect_status(403, client.CoreV1Api(nobody).list_namespace), NOBODY)

    # The group is honoured too: system:masters may do anything.
    master = new_api(impersonate_user=NOBODY, impersonate_group="system:masters")
    info = whoami(master)
    expect_eq(info.username, NOBODY, "username with group")
    expect("system:masters" in (info.groups or []), f"groups {info.groups}")
    client.CoreV1Api(master).list_namespaced_config_map(NS)
    client.CoreV1Api(master).list_namespace()

    # A user bound by a Role reads ConfigMaps in NS, and nothing else.
    reader = client.CoreV1Api(new_api(impersonate_user=READER))
    reader_list = eventually(
        lambda: try_list(reader, NS), f"{READER} cannot list ConfigMaps in {NS} after the RoleBinding"
    )
    expect(isinstance(reader_list.items, list), "list")
    forbidden(expect_status(403, reader.list_namespaced_config_map, "default"), READER)
    forbidden(
        expect_status(
            403, reader.create_namespaced_config_map, NS, client.V1ConfigMap(metadata=meta("denied"))
        ),
        READER,
    )


def try_list(core, namespace):
    try:
        return core.list_namespaced_config_map(namespace)
    except ApiException as e:
        if e.status != 403:
            raise
        return None


def review_allowed(spec_user=None, spec_groups=None, namespace=None, verb="list", resource="configmaps"):
    review = AUTHZ.create_subject_access_review(
        client.V1SubjectAccessReview(
            spec=client.V1SubjectAccessReviewSpec(
                user=spec_user,
                groups=spec_groups,
                resource_attributes=client.V1ResourceAttributes(
                    namespace=namespace, verb=verb, resource=resource
                ),
            )
        )
    )
    return review.status.allowed


@check
def access_reviews():
    attrs = client.V1ResourceAttributes(namespace=NS, verb="list", resource="configmaps")
    review = AUTHZ.create_self_subject_access_review(
        client.V1SelfSubjectAccessReview(spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=attrs))
    )
    expect_eq(review.status.allowed, True, "admin SelfSubjectAccessReview")
    review = client.AuthorizationV1Api(new_api(impersonate_user=NOBODY)).create_self_subject_access_review(
        client.V1SelfSubjectAccessReview(spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=attrs))
    )
    expect(not review.status.allowed, f"{NOBODY} SelfSubjectAccessReview allowed: {review.status}")

    expect_eq(review_allowed(READER, namespace=NS), True, f"SAR {READER} list configmaps in {NS}")
    expect_eq(bool(review_allowed(READER, namespace=NS, verb="delete")), False, f"SAR {READER} delete")
    expect_eq(bool(review_allowed(READER, namespace="default")), False, f"SAR {READER} in default")
    expect_eq(bool(review_allowed(NOBODY, namespace=NS)), False, f"SAR {NOBODY}")
    expect_eq(
        review_allowed(NOBODY, spec_groups=["system:masters"], verb="delete", resource="namespaces"),
        True,
        "SAR group system:masters",
    )
    local = AUTHZ.create_namespaced_local_subject_access_review(
        NS,
        client.V1LocalSubjectAccessReview(
            metadata=client.V1ObjectMeta(namespace=NS),
            spec=client.V1SubjectAccessReviewSpec(user=READER, resource_attributes=attrs),
        ),
    )
    expect_eq(local.status.allowed, True, "LocalSubjectAccessReview")
    # Creating a SubjectAccessReview needs a right that nobody has.
    forbidden(
        expect_status(
            403,
            client.AuthorizationV1Api(new_api(impersonate_user=NOBODY)).create_subject_access_review,
            client.V1SubjectAccessReview(
                spec=client.V1SubjectAccessReviewSpec(user=READER, resource_attributes=attrs)
            ),
        ),
        NOBODY,
    )


@check
def token_review():
    review = AUTHN.create_token_review(
        client.V1TokenReview(spec=client.V1TokenReviewSpec(token=admin_token()))
    )
    expect_eq(review.status.authenticated, True, "admin token authenticated")
    expect_eq(review.status.user.username, whoami(ADMIN).username, "admin token username")
    expect("system:masters" in (review.status.user.groups or []), f"groups {review.status.user.groups}")
    review = AUTHN.create_token_review(
        client.V1TokenReview(spec=client.V1TokenReviewSpec(token="garbage-" + secrets.token_hex(16)))
    )
    expect(not review.status.authenticated, f"a garbage token authenticated: {review.status}")
    expect(
        review.status.user is None or not review.status.user.username,
        f"a garbage token has a user: {review.status.user}",
    )
    forbidden(
        expect_status(
            403,
            client.AuthenticationV1Api(new_api(impersonate_user=NOBODY)).create_token_review,
            client.V1TokenReview(spec=client.V1TokenReviewSpec(token=admin_token())),
        ),
        NOBODY,
    )


# --- setup and teardown -------------------------------------------------------------------


def setup():
    ns = CORE.create_namespace(client.V1Namespace(metadata=meta(NS)))
    expect_eq((ns.api_version, ns.kind), ("v1", "Namespace"), "created namespace")
    RBAC.create_namespaced_role(
        NS,
        client.V1Role(
            metadata=meta("configmap-reader"),
            rules=[client.V1PolicyRule(api_groups=[""], resources=["configmaps"], verbs=["get", "list", "watch"])],
        ),
    )
    RBAC.create_namespaced_role_binding(
        NS,
        client.V1RoleBinding(
            metadata=meta("configmap-reader"),
            role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="Role", name="configmap-reader"),
            subjects=[client.RbacV1Subject(api_group="rbac.authorization.k8s.io", kind="User", name=READER)],
        ),
    )


def teardown():
    CORE.delete_namespace(NS)

    def gone():
        try:
            CORE.read_namespace(NS)
        except ApiException as e:
            if e.status == 404:
                return True
            raise
        return False

    eventually(gone, f"namespace {NS} still there after its delete", timeout=30, interval=0.5)


def main():
    if not KUBECONFIG:
        print("usage: python_client.py KUBECONFIG", file=sys.stderr)
        return 2
    if not run("setup", setup):
        return 1
    failed = []
    for fn in CHECKS:
        if not run(fn.__name__, fn):
            failed.append(fn.__name__)
    if not run("teardown", teardown):
        failed.append("teardown")
    print(f"python client checks: {len(CHECKS) + 2 - len(failed)} passed, {len(failed)} failed", flush=True)
    if failed:
        print(f"python client checks: failed: {', '.join(failed)}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
