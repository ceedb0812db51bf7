"""Checks the hub with a real operator framework: kopf runs kopf_operator.py against it.

Usage: kopf_check.py KUBECONFIG

Creates the Widget CRD and a namespace, starts `kopf run --standalone --all-namespaces` with
KUBECONFIG pointing at the hub, creates, resizes and deletes a Widget, and asserts what kopf did
through the API: the status its handlers' results went to, its last-handled annotation, its
finalizer, the Events it posted (read with the client and with kubectl). Stops kopf, then deletes
what it created. Prints a line per check and, on failure, kopf's log.
"""

import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile

import checks
from checks import CheckFailed, expect, expect_eq, short
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

KUBECONFIG = sys.argv[1] if len(sys.argv) > 1 else None
HERE = os.path.dirname(os.path.abspath(__file__))
GROUP, VERSION, PLURAL, KIND = "clients.flotilla.test", "v1", "widgets", "Widget"
CRD_NAME = f"{PLURAL}.{GROUP}"
NS = f"clients-kopf-{secrets.token_hex(4)}"
WIDGET = "sprocket"
LAST_HANDLED = "kopf.zalando.org/last-handled-configuration"
FINALIZER = "kopf.zalando.org/KopfFinalizerMarker"
MERGE = "application/merge-patch+json"
RESIZED = "resized/spec.size"  # the update handler's id: where kopf puts its result in status


def eventually(probe, what, timeout=30.0, interval=0.25):
    """Polls probe() as checks.eventually does, failing at once when kopf has exited."""

    def exited():
        if operator is not None and operator.poll() is not None:
            return f"kopf exited with {operator.returncode}"
        return None

    return checks.eventually(probe, what, timeout, interval, abort=exited)


API = config.new_client_from_config(config_file=KUBECONFIG) if KUBECONFIG else None
CORE = client.CoreV1Api(API)
CUSTOM = client.CustomObjectsApi(API)
CRDS = client.ApiextensionsV1Api(API)

operator = None  # the kopf process
log_path = None


def read_log():
    if not log_path or not os.path.exists(log_path):
        return ""
    with open(log_path, errors="replace") as f:
        return f.read()


def get_widget():
    try:
        return CUSTOM.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, WIDGET)
    except ApiException as e:
        if e.status == 404:
            return None
        raise


def events_for(uid):
    """Core v1 Events about the Widget, by field selector (as `kubectl describe` asks)."""
    listed = CORE.list_namespaced_event(NS, field_selector=f"involvedObject.name={WIDGET}").items
    return [e for e in listed if e.involved_object.uid == uid]


def kubectl_events():
    out = subprocess.run(
        ["kubectl", "--kubeconfig", KUBECONFIG, "get", "events", "-n", NS, "-o", "json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    expect(out.returncode == 0, f"kubectl get events: {out.stderr.strip()}")
    return json.loads(out.stdout)["items"]


# --- the steps ----------------------------------------------------------------------------

uid = None


def setup():
    CORE.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS)))
    open_schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    CRDS.create_custom_resource_definition(
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": CRD_NAME},
            "spec": {
                "group": GROUP,
                "scope": "Namespaced",
                "names": {"plural": PLURAL, "singular": "widget", "kind": KIND, "listKind": "WidgetList"},
                "versions": [
                    {
                        "name": VERSION,
                        "served": True,
                        "storage": True,
                        "subresources": {"status": {}},
                        "schema": {
                            "openAPIV3Schema": {
                                "type": "object",
                                "properties": {
                                    "spec": {
                                        "type": "object",
                                        "properties": {"size": {"type": "integer"}},
                                    },
                                    "status": open_schema,
                                },
                            }
                        },
                    }
                ],
            },
        }
    )

    def established():
        crd = CRDS.read_custom_resource_definition(CRD_NAME)
        conditions = (crd.status.conditions if crd.status else None) or []
        return any(c.type == "Established" and c.status == "True" for c in conditions)

    eventually(established, f"CRD {CRD_NAME} not Established")

    def served():
        try:
            return CUSTOM.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL) is not None
        except ApiException as e:
            if e.status == 404:
                return False
            raise

    eventually(served, f"{PLURAL}.{GROUP}/{VERSION} not served")


def start_operator():
    global operator, log_path
    fd, log_path = tempfile.mkstemp(prefix="kopf-", suffix=".log")
    env = dict(os.environ, KUBECONFIG=os.path.abspath(KUBECONFIG))
    operator = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kopf",
            "run",
            "--standalone",
            "--all-namespaces",
            "--verbose",
            os.path.join(HERE, "kopf_operator.py"),
        ],
        stdout=fd,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=tempfile.gettempdir(),
    )
    os.close(fd)
    # The Widget is created only once kopf watches, so the watch (not the initial list) sees it.
    eventually(
        lambda: f"Starting the watch-stream for {PLURAL}.{VERSION}.{GROUP} cluster-wide" in read_log(),
        "kopf did not start watching widgets",
        timeout=60,
    )


def create_handled():
    global uid
    widget = CUSTOM.create_namespaced_custom_object(
        GROUP,
        VERSION,
        NS,
        PLURAL,
        {"apiVersion": f"{GROUP}/{VERSION}", "kind": KIND, "metadata": {"name": WIDGET}, "spec": {"size": 3}},
    )
    uid = widget["metadata"]["uid"]

    def handled():
        w = get_widget()
        created = ((w or {}).get("status") or {}).get("created")
        annotations = (w or {}).get("metadata", {}).get("annotations") or {}
        return w if created and LAST_HANDLED in annotations else None

    w = eventually(handled, "kopf did not record the create handler's result", timeout=60)
    expect_eq(w["status"]["created"], {"size": 3, "greeting": f"hello {WIDGET}"}, "status.created")
    last = json.loads(w["metadata"]["annotations"][LAST_HANDLED])
    expect_eq(last.get("spec"), {"size": 3}, f"{LAST_HANDLED} spec")
    expect(FINALIZER in (w["metadata"].get("finalizers") or []), f"finalizers {w['metadata'].get('finalizers')}")
    expect_eq(w["metadata"]["uid"], uid, "uid")


def event_posted():
    found = eventually(
        lambda: [e for e in events_for(uid) if e.reason == "WidgetCreated"],
        "no WidgetCreated Event about the Widget in core/v1",
    )
    e = found[0]
    ref = e.involved_object
    expect_eq(
        (ref.api_version, ref.kind, ref.name, ref.namespace, ref.uid),
        (f"{GROUP}/{VERSION}", KIND, WIDGET, NS, uid),
        "involvedObject",
    )
    expect_eq((e.type, e.message), ("Normal", f"widget {WIDGET} has size 3"), "type and message")
    expect_eq(e.source.component if e.source else None, "kopf", "source.component")
    # The same Event through kubectl.
    items = [
        i
        for i in kubectl_events()
        if i.get("reason") == "WidgetCreated" and i.get("involvedObject", {}).get("uid") == uid
    ]
    expect(len(items) == 1, f"kubectl get events shows {len(items)} WidgetCreated events")
    expect_eq(items[0]["involvedObject"]["name"], WIDGET, "kubectl involvedObject.name")
    expect_eq(items[0]["message"], f"widget {WIDGET} has size 3", "kubectl message")


def update_handled():
    CUSTOM.patch_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL, WIDGET, {"spec": {"size": 4}}, _content_type=MERGE
    )
    w = eventually(
        lambda: (lambda w: w if ((w or {}).get("status") or {}).get(RESIZED) else None)(get_widget()),
        "kopf did not record the update handler's result",
    )
    expect_eq(w["status"][RESIZED], {"from": 3, "to": 4}, f"status[{RESIZED!r}]")
    expect_eq(w["status"]["created"], {"size": 3, "greeting": f"hello {WIDGET}"}, "status.created kept")

    def recorded():
        w = get_widget()
        last = json.loads(((w or {}).get("metadata", {}).get("annotations") or {}).get(LAST_HANDLED, "{}"))
        return last.get("spec") == {"size": 4}

    eventually(recorded, f"{LAST_HANDLED} not updated to size 4")


def finalizer_honoured():
    answer = CUSTOM.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, WIDGET)
    # kopf's finalizer holds the object: the DELETE answers with it, marked for deletion.
    expect(
        isinstance(answer, dict) and (answer.get("metadata") or {}).get("deletionTimestamp"),
        f"DELETE of a Widget with a finalizer answered {short(answer)}",
    )
    w = get_widget()
    expect(w is not None, "the Widget vanished at once despite kopf's finalizer")
    expect(w["metadata"].get("deletionTimestamp"), "no deletionTimestamp while the finalizer is pending")
    expect(FINALIZER in (w["metadata"].get("finalizers") or []), f"finalizers {w['metadata'].get('finalizers')}")
    # kopf runs the delete handler, then removes its finalizer, and the hub removes the Widget.
    eventually(lambda: get_widget() is None, "the Widget stayed after kopf's delete handler", timeout=60)
    eventually(
        lambda: [e for e in events_for(uid) if e.reason == "WidgetDeleted"],
        "no WidgetDeleted Event: the delete handler did not run before the Widget went",
    )


def stop_operator():
    global operator
    proc, operator = operator, None
    proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise CheckFailed("kopf did not stop within 30s of SIGTERM")
    expect_eq(code, 0, "kopf's exit status")
    errors = [line for line in read_log().splitlines() if "[ERROR" in line or "Traceback" in line]
    expect(not errors, "kopf logged errors:\n  " + "\n  ".join(errors[:20]))


def teardown():
    # After a failure kopf may be gone with its finalizer still on the Widget.
    if get_widget() is not None:
        CUSTOM.patch_namespaced_custom_object(
            GROUP, VERSION, NS, PLURAL, WIDGET, {"metadata": {"finalizers": None}}, _content_type=MERGE
        )
        CUSTOM.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, WIDGET)
    CORE.delete_namespace(NS)
    eventually(lambda: gone(CORE.read_namespace, NS), f"namespace {NS} still there after its delete")
    CRDS.delete_custom_resource_definition(CRD_NAME)
    eventually(
        lambda: gone(CRDS.read_custom_resource_definition, CRD_NAME), f"CRD {CRD_NAME} still there after its delete"
    )


def gone(read, name):
    try:
        read(name)
    except ApiException as e:
        if e.status == 404:
            return True
        raise
    return False


STEPS = [setup, start_operator, create_handled, event_posted, update_handled, finalizer_honoured, stop_operator]


def run(name, fn):
    return checks.run(f"kopf {name}", fn)


def main():
    if not KUBECONFIG:
        print("usage: kopf_check.py KUBECONFIG", file=sys.stderr)
        return 2
    failed = []
    for step in STEPS:
        if not run(step.__name__, step):
            failed.append(step.__name__)
            break  # later steps build on this one
    global operator
    if operator is not None:
        proc, operator = operator, None
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if not run("teardown", teardown):
        failed.append("teardown")
    if failed:
        print(f"kopf checks: failed: {', '.join(failed)}; kopf's log ({log_path}):", flush=True)
        for line in read_log().splitlines():
            print(f"  | {line}")
    else:
        print(f"kopf checks: {len(STEPS) + 1} passed, 0 failed", flush=True)
    if log_path and os.path.exists(log_path):
        os.unlink(log_path)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
