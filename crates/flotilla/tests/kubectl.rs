//! End-to-end: the real kubectl against `flotilla up --members 0 --listen 127.0.0.1:0`.

mod common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{HubProcess, PLACEMENT_COLUMNS, examples_dir};

fn example_files() -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(examples_dir())
        .expect("examples dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 4,
        "expected the seed examples in examples/, found {files:?}"
    );
    files
}

#[test]
fn api_resources_lists_fleet_kinds_with_short_names() {
    let hub = HubProcess::start();
    let out = hub.kubectl_ok(&["api-resources", "--api-group=placement.kubernetes-fleet.io"]);
    for kind in [
        "ClusterResourcePlacement",
        "ClusterStagedUpdateStrategy",
        "ClusterStagedUpdateRun",
        "ClusterApprovalRequest",
    ] {
        assert!(
            out.contains(kind),
            "{kind} missing from api-resources:\n{out}"
        );
    }
    let crp = out
        .lines()
        .find(|l| l.split_whitespace().last() == Some("ClusterResourcePlacement"))
        .expect("crp line");
    assert!(
        crp.split_whitespace().any(|w| w == "crp"),
        "crp short name missing: {crp}"
    );
    // The namespaced placement kinds, with KubeFleet's short names; kubectl reaches each by
    // its short name (nothing exists yet, so each lists nothing).
    for (kind, short) in [
        ("ResourcePlacement", "rp"),
        ("ResourceBinding", "rb"),
        ("ResourceSnapshot", "rs"),
        ("SchedulingPolicySnapshot", "sps"),
    ] {
        let line = out
            .lines()
            .find(|l| l.split_whitespace().last() == Some(kind))
            .unwrap_or_else(|| panic!("{kind} missing from api-resources:\n{out}"));
        let words: Vec<&str> = line.split_whitespace().collect();
        assert!(
            words.contains(&short) && words.contains(&"true"),
            "{kind}: want short name {short}, namespaced: {line}"
        );
        let listed = hub.kubectl(&["get", short, "-A"]);
        assert!(listed.status.success(), "kubectl get {short}: {listed:?}");
    }
    let out = hub.kubectl_ok(&["api-resources", "--api-group=cluster.kubernetes-fleet.io"]);
    assert!(out.contains("MemberCluster"), "{out}");
    let metrics = hub.kubectl_ok(&["get", "--raw", "/metrics"]);
    assert!(
        metrics.contains("apiserver_request_total{verb=\"GET\""),
        "{metrics}"
    );
    assert!(
        metrics.contains("apiserver_request_duration_seconds_bucket"),
        "{metrics}"
    );
    assert!(metrics.contains("flotilla_store_revision "), "{metrics}");
    let version = hub.kubectl_ok(&["version", "-o", "json"]);
    assert!(version.contains("\"serverVersion\""), "{version}");
    let all_ns = hub.kubectl_ok(&["get", "namespaces"]);
    assert!(
        all_ns.contains("default") && all_ns.contains("Active"),
        "{all_ns}"
    );
    let out = hub.kubectl_ok(&["api-resources"]);
    for kind in [
        "Deployment",
        "ConfigMap",
        "Namespace",
        "CustomResourceDefinition",
        "Lease",
        "ClusterRoleBinding",
    ] {
        assert!(out.contains(kind), "{kind} missing:\n{out}");
    }
}

#[test]
fn seed_examples_apply_unchanged_and_reapply_is_a_no_op() {
    let hub = HubProcess::start();
    hub.create("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: test-namespace\n");
    // Several seed examples share the name `crp` (and placementType is immutable), so each is
    // applied, re-applied (a no-op), read back, and deleted before the next.
    for file in example_files() {
        let f = file.to_string_lossy().to_string();
        let first = hub.kubectl_ok(&["apply", "-f", &f]);
        assert!(first.contains("created"), "{f}: {first}");
        let second = hub.kubectl_ok(&["apply", "-f", &f]);
        assert!(
            second.contains("unchanged"),
            "second apply of {f} was not a no-op: {second}"
        );
        hub.kubectl_ok(&["get", "-f", &f]);
        let gone = hub.kubectl_ok(&["delete", "-f", &f, "--timeout=60s"]);
        assert!(gone.contains("deleted"), "{f}: {gone}");
    }
    for name in [
        "staged-update-run.yaml",
        "crp-staged-update.yaml",
        "crp-rolling-update.yaml",
    ] {
        let f = examples_dir().join(name).to_string_lossy().to_string();
        hub.kubectl_ok(&["apply", "-f", &f]);
    }
    // Printer columns: the seed's exact header for staged update runs.
    let out = hub.kubectl_ok(&["get", "clusterstagedupdaterun"]);
    let header: Vec<&str> = out
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        [
            "NAME",
            "PLACEMENT",
            "RESOURCE-SNAPSHOT-INDEX",
            "POLICY-SNAPSHOT-INDEX",
            "INITIALIZED",
            "SUCCEEDED",
            "AGE"
        ]
    );
    assert!(
        out.contains("example-staged-update-run") && out.contains("crp-staged-update-sample"),
        "{out}"
    );
    let wide = hub.kubectl_ok(&["get", "crp", "-o", "wide"]);
    assert!(
        wide.lines().next().unwrap_or_default().contains("TYPE"),
        "priority columns missing in -o wide: {wide}"
    );
    let narrow = hub.kubectl_ok(&["get", "crp"]);
    assert!(
        !narrow.lines().next().unwrap_or_default().contains("TYPE"),
        "priority column shown without -o wide: {narrow}"
    );
    // A ResourcePlacement shows CRP's columns (from its `ResourcePlacement…` conditions).
    let rp = examples_dir().join("rp-app.yaml");
    hub.kubectl_ok(&["apply", "-n", "test-namespace", "-f", &rp.to_string_lossy()]);
    let out = hub.kubectl_ok(&["get", "rp", "-n", "test-namespace"]);
    let header: Vec<&str> = out
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(header, PLACEMENT_COLUMNS);
    assert!(out.contains("web"), "{out}");
}

#[test]
fn get_watch_streams_updates_from_another_client() {
    let hub = HubProcess::start();
    hub.create("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: watched\ndata:\n  a: \"1\"\n");
    let mut watcher = hub
        .kubectl_cmd(&[
            "get",
            "configmap",
            "watched",
            "-w",
            "-o",
            "custom-columns=NAME:.metadata.name,A:.data.a",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kubectl get -w");
    let stdout = watcher.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let first = rx.recv_timeout(Duration::from_secs(20)).expect("header");
    assert!(first.contains("NAME"), "{first}");
    let initial = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("initial row");
    assert!(
        initial.contains("watched") && initial.contains('1'),
        "{initial}"
    );
    hub.kubectl_ok(&[
        "patch",
        "configmap",
        "watched",
        "--type=merge",
        "-p",
        r#"{"data":{"a":"2"}}"#,
    ]);
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = false;
    while Instant::now() < deadline {
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(500))
            && line.contains("watched")
            && line.contains('2')
        {
            seen = true;
            break;
        }
    }
    let _ = watcher.kill();
    let _ = watcher.wait();
    assert!(seen, "kubectl get -w did not stream the update");
}

#[test]
fn approval_status_patch_from_the_seed_works() {
    let hub = HubProcess::start();
    let careq = r#"
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterApprovalRequest
metadata:
  name: example-staged-update-run-canary
spec:
  parentStageRollout: example-staged-update-run
  targetStage: canary
"#;
    let out = hub.kubectl_stdin(&["apply", "-f", "-"], careq);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let now = jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let patch = format!(
        r#"{{"status":{{"conditions":[{{"type":"Approved","status":"True","reason":"testPassed","message":"lgtm","lastTransitionTime":"{now}","observedGeneration":1}}]}}}}"#
    );
    hub.kubectl_ok(&[
        "patch",
        "clusterapprovalrequests",
        "example-staged-update-run-canary",
        "--type=merge",
        "-p",
        &patch,
        "--subresource=status",
    ]);
    let approved = hub.kubectl_ok(&[
        "get",
        "clusterapprovalrequest",
        "example-staged-update-run-canary",
        "-o",
        "jsonpath={.status.conditions[?(@.type==\"Approved\")].status}",
    ]);
    assert_eq!(approved, "True");
    let table = hub.kubectl_ok(&["get", "clusterapprovalrequest"]);
    let header: Vec<&str> = table
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        [
            "NAME",
            "UPDATE-RUN",
            "STAGE",
            "APPROVED",
            "APPROVALACCEPTED",
            "AGE"
        ]
    );
    let row = table.lines().nth(1).unwrap_or_default();
    assert!(
        row.contains("example-staged-update-run") && row.contains("canary") && row.contains("True"),
        "{row}"
    );
    // Status writes through the main endpoint are ignored; spec writes through status are too.
    hub.kubectl_ok(&[
        "patch",
        "clusterapprovalrequests",
        "example-staged-update-run-canary",
        "--type=merge",
        "-p",
        r#"{"status":{"conditions":[]}}"#,
    ]);
    let still = hub.kubectl_ok(&[
        "get",
        "careq",
        "example-staged-update-run-canary",
        "-o",
        "jsonpath={.status.conditions[0].type}",
    ]);
    assert_eq!(still, "Approved");
}

#[test]
fn edit_label_annotate_and_server_side_apply_behave_like_a_cluster() {
    let hub = HubProcess::start();
    hub.create("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  color: blue\n");
    // edit with a scripted editor.
    let out = hub
        .kubectl_cmd(&["edit", "configmap", "cfg"])
        .env("EDITOR", "sed -i s/blue/green/")
        .output()
        .expect("kubectl edit");
    assert!(
        out.status.success(),
        "edit failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        hub.kubectl_ok(&["get", "cm", "cfg", "-o", "jsonpath={.data.color}"]),
        "green"
    );
    hub.kubectl_ok(&["label", "configmap", "cfg", "tier=web"]);
    hub.kubectl_ok(&["annotate", "configmap", "cfg", "owner=platform"]);
    let labels = hub.kubectl_ok(&["get", "cm", "-l", "tier=web", "-o", "name"]);
    assert_eq!(labels.trim(), "configmap/cfg");
    assert_eq!(
        hub.kubectl_ok(&["get", "cm", "-l", "tier notin (web)", "-o", "name"])
            .trim(),
        ""
    );
    assert_eq!(
        hub.kubectl_ok(&[
            "get",
            "cm",
            "cfg",
            "-o",
            "jsonpath={.metadata.annotations.owner}"
        ]),
        "platform"
    );
    let err = hub.kubectl_err(&["label", "configmap", "cfg", "tier=db"]);
    assert!(err.contains("already has a value"), "{err}");
    hub.kubectl_ok(&["label", "configmap", "cfg", "tier-"]);
    assert_eq!(
        hub.kubectl_ok(&["get", "cm", "-l", "tier", "-o", "name"])
            .trim(),
        ""
    );

    let ssa =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  a: \"1\"\n  b: \"2\"\n";
    let out = hub.kubectl_stdin(&["apply", "--server-side", "-f", "-"], ssa);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let managers = hub.kubectl_ok(&[
        "get",
        "cm",
        "ssa",
        "--show-managed-fields",
        "-o",
        "jsonpath={.metadata.managedFields[*].manager}",
    ]);
    assert!(managers.contains("kubectl"), "{managers}");
    // Dropping a field from the applied config removes it.
    let out = hub.kubectl_stdin(
        &["apply", "--server-side", "-f", "-"],
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  a: \"1\"\n",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        hub.kubectl_ok(&["get", "cm", "ssa", "-o", "jsonpath={.data}"]),
        r#"{"a":"1"}"#
    );
    // Another manager changing an owned field conflicts unless forced.
    let conflict = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  a: \"9\"\n";
    let out = hub.kubectl_stdin(
        &["apply", "--server-side", "--field-manager=other", "-f", "-"],
        conflict,
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("conflict") && err.contains(".data.a"), "{err}");
    let out = hub.kubectl_stdin(
        &[
            "apply",
            "--server-side",
            "--field-manager=other",
            "--force-conflicts",
            "-f",
            "-",
        ],
        conflict,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        hub.kubectl_ok(&["get", "cm", "ssa", "-o", "jsonpath={.data.a}"]),
        "9"
    );
}

#[test]
fn explain_reads_the_openapi_schema() {
    let hub = HubProcess::start();
    let out = hub.kubectl_ok(&["explain", "clusterresourceplacement.spec.policy"]);
    assert!(out.contains("placementType"), "{out}");
    assert!(out.contains("numberOfClusters"), "{out}");
    let out = hub.kubectl_ok(&["explain", "deployment.spec.replicas"]);
    assert!(out.contains("replicas"), "{out}");
}

#[test]
fn delete_waits_until_gone_and_honours_finalizers() {
    let hub = HubProcess::start();
    hub.create("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n");
    let out = hub.kubectl_ok(&["delete", "configmap", "plain"]);
    assert!(out.contains("deleted"), "{out}");
    assert!(
        hub.kubectl_err(&["get", "cm", "plain"])
            .contains("NotFound")
    );

    let held = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  finalizers: [\"example.com/hold\"]\n";
    assert!(
        hub.kubectl_stdin(&["apply", "-f", "-"], held)
            .status
            .success()
    );
    // With a finalizer, delete does not complete: kubectl waits until its timeout.
    let out = hub.kubectl(&["delete", "configmap", "held", "--timeout=2s"]);
    assert!(
        !out.status.success(),
        "delete returned before the finalizer was removed"
    );
    let ts = hub.kubectl_ok(&[
        "get",
        "cm",
        "held",
        "-o",
        "jsonpath={.metadata.deletionTimestamp}",
    ]);
    assert!(!ts.is_empty(), "deletionTimestamp not set");
    // New finalizers are refused once deletion started.
    let err = hub.kubectl_err(&[
        "patch",
        "cm",
        "held",
        "--type=json",
        "-p",
        r#"[{"op":"add","path":"/metadata/finalizers/-","value":"example.com/more"}]"#,
    ]);
    assert!(err.contains("finalizers"), "{err}");
    // Removing the last finalizer lets it go; a waiting delete then returns.
    let mut waiter = hub
        .kubectl_cmd(&["delete", "configmap", "held", "--timeout=30s"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("delete");
    std::thread::sleep(Duration::from_millis(500));
    hub.kubectl_ok(&[
        "patch",
        "cm",
        "held",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
    ]);
    let status = waiter.wait().expect("wait");
    assert!(
        status.success(),
        "delete did not return once the object was gone"
    );
    assert!(hub.kubectl_err(&["get", "cm", "held"]).contains("NotFound"));
}

#[test]
fn invalid_objects_and_unknown_fields_are_rejected_naming_the_field() {
    let hub = HubProcess::start();
    let pick_fixed = r#"
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  name: bad
spec:
  resourceSelectors:
    - group: ""
      kind: Namespace
      name: test-namespace
      version: v1
  policy:
    placementType: PickFixed
    clusterNames: ["a"]
    numberOfClusters: 2
"#;
    let out = hub.kubectl_stdin(&["apply", "-f", "-"], pick_fixed);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("spec.policy.numberOfClusters"), "{err}");
    assert!(err.contains("Invalid") || err.contains("invalid"), "{err}");

    let wrong_enum = pick_fixed
        .replace("PickFixed", "PickSome")
        .replace("    clusterNames: [\"a\"]\n    numberOfClusters: 2\n", "");
    let out = hub.kubectl_stdin(&["apply", "-f", "-"], &wrong_enum);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("spec.policy.placementType"),
        "{err}"
    );

    let unknown = pick_fixed.replace("    numberOfClusters: 2\n", "    bogusField: 1\n");
    let out = hub.kubectl_stdin(&["apply", "-f", "-"], &unknown);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("unknown field") && err.contains("bogusField"),
        "{err}"
    );
    // Nothing was stored.
    assert!(hub.kubectl_err(&["get", "crp", "bad"]).contains("NotFound"));

    // A ResourcePlacement selects namespaced resources of its own namespace only.
    let namespace_in_rp = r#"
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ResourcePlacement
metadata:
  name: bad
  namespace: default
spec:
  resourceSelectors:
    - group: apps
      kind: Deployment
      version: v1
      name: web
      selectionScope: NamespaceOnly
    - group: rbac.authorization.k8s.io
      kind: ClusterRole
      version: v1
"#;
    let out = hub.kubectl_stdin(&["apply", "-f", "-"], namespace_in_rp);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains("spec.resourceSelectors[0].selectionScope")
            && err.contains("spec.resourceSelectors[1].kind"),
        "{err}"
    );
    assert!(hub.kubectl_err(&["get", "rp", "bad"]).contains("NotFound"));
}

#[test]
fn user_crd_is_served_validated_and_cleaned_up() {
    let hub = HubProcess::start();
    let crd = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
    - name: v1
      served: true
      storage: true
      additionalPrinterColumns:
        - {name: Size, type: integer, jsonPath: .spec.size}
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [size]
              properties:
                size: {type: integer, minimum: 1, maximum: 10}
"#;
    let out = hub.kubectl_stdin(&["apply", "-f", "-"], crd);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let established = hub.kubectl_ok(&[
        "get",
        "crd",
        "widgets.example.com",
        "-o",
        "jsonpath={.status.conditions[?(@.type==\"Established\")].status}",
    ]);
    assert_eq!(established, "True");
    let widget =
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  size: 3\n";
    let out = hub.kubectl_stdin(&["apply", "-f", "-"], widget);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = hub.kubectl_ok(&["get", "wd"]);
    assert!(
        table.lines().next().unwrap_or_default().contains("SIZE") && table.contains("w1"),
        "{table}"
    );
    let out = hub.kubectl_stdin(
        &["apply", "-f", "-"],
        &widget.replace("w1", "w2").replace("size: 3", "size: 11"),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("spec.size"), "{err}");
    hub.kubectl_ok(&["delete", "crd", "widgets.example.com", "--timeout=60s"]);
    let err = hub.kubectl_err(&["get", "widgets.example.com"]);
    assert!(
        err.contains("the server doesn't have a resource type")
            || err.contains("NotFound")
            || err.contains("not find"),
        "{err}"
    );
    // Re-creating the CRD shows no leftover objects.
    assert!(
        hub.kubectl_stdin(&["apply", "-f", "-"], crd)
            .status
            .success()
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = hub.kubectl(&["get", "widgets.example.com", "-o", "name"]);
        if out.status.success() {
            assert_eq!(
                String::from_utf8_lossy(&out.stdout).trim(),
                "",
                "objects survived CRD deletion"
            );
            break;
        }
        assert!(Instant::now() < deadline, "recreated CRD not served");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn namespace_deletion_empties_the_namespace() {
    let hub = HubProcess::start();
    let ns = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: doomed\n";
    hub.create(ns);
    hub.create("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c1\n  namespace: doomed\n");
    hub.create("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s1\n  namespace: doomed\nstringData:\n  k: v\n");
    hub.kubectl_ok(&["delete", "namespace", "doomed", "--timeout=60s"]);
    assert!(
        hub.kubectl_err(&["get", "namespace", "doomed"])
            .contains("NotFound")
    );
    hub.create(ns);
    assert_eq!(
        hub.kubectl_ok(&["get", "cm,secret", "-n", "doomed", "-o", "name"])
            .trim(),
        ""
    );
}

#[test]
fn imperative_generators_send_protobuf_and_are_understood() {
    let hub = HubProcess::start();
    hub.kubectl_ok(&["create", "namespace", "demo"]);
    hub.kubectl_ok(&[
        "-n",
        "demo",
        "create",
        "configmap",
        "cfg",
        "--from-literal=a=1",
    ]);
    hub.kubectl_ok(&[
        "-n",
        "demo",
        "create",
        "secret",
        "generic",
        "s",
        "--from-literal=pw=hunter2",
    ]);
    hub.kubectl_ok(&[
        "-n",
        "demo",
        "create",
        "deployment",
        "web",
        "--image=nginx:1.27",
        "--replicas=2",
        "--port=80",
    ]);
    hub.kubectl_ok(&["-n", "demo", "create", "serviceaccount", "bot"]);
    hub.kubectl_ok(&[
        "-n",
        "demo",
        "create",
        "role",
        "reader",
        "--verb=get,list",
        "--resource=configmaps",
    ]);
    hub.kubectl_ok(&[
        "-n",
        "demo",
        "create",
        "rolebinding",
        "rb",
        "--role=reader",
        "--serviceaccount=demo:bot",
    ]);
    hub.kubectl_ok(&[
        "-n",
        "demo",
        "create",
        "service",
        "clusterip",
        "websvc",
        "--tcp=80:8080",
    ]);
    hub.kubectl_ok(&[
        "-n",
        "demo",
        "create",
        "job",
        "once",
        "--image=busybox",
        "--",
        "echo",
        "hi",
    ]);
    assert_eq!(
        hub.kubectl_ok(&["-n", "demo", "get", "cm", "cfg", "-o", "jsonpath={.data.a}"]),
        "1"
    );
    assert_eq!(
        hub.kubectl_ok(&[
            "-n",
            "demo",
            "get",
            "secret",
            "s",
            "-o",
            "jsonpath={.data.pw}"
        ]),
        "aHVudGVyMg=="
    );
    let deploy = hub.kubectl_ok(&["-n", "demo", "get", "deploy", "web", "-o", "jsonpath={.spec.replicas} {.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].ports[0].containerPort}"]);
    assert_eq!(deploy, "2 nginx:1.27 80");
    let binding = hub.kubectl_ok(&[
        "-n",
        "demo",
        "get",
        "rolebinding",
        "rb",
        "-o",
        "jsonpath={.roleRef.name} {.subjects[0].kind} {.subjects[0].name}",
    ]);
    assert_eq!(binding, "reader ServiceAccount bot");
    let svc = hub.kubectl_ok(&[
        "-n",
        "demo",
        "get",
        "svc",
        "websvc",
        "-o",
        "jsonpath={.spec.ports[0].port} {.spec.ports[0].targetPort}",
    ]);
    assert_eq!(svc, "80 8080");
    let job = hub.kubectl_ok(&[
        "-n",
        "demo",
        "get",
        "job",
        "once",
        "-o",
        "jsonpath={.spec.template.spec.containers[0].command}",
    ]);
    assert_eq!(job, r#"["echo","hi"]"#);
}

/// `kubectl get -o yaml` writes a `kind: List`; kubectl validates its items against
/// `/openapi/v2` (protobuf) before applying them, and refuses bad ones naming the field.
#[test]
fn list_files_round_trip_and_their_items_are_validated() {
    let hub = HubProcess::start();
    hub.kubectl_ok(&["create", "configmap", "l1", "--from-literal=a=b"]);
    hub.kubectl_ok(&["create", "configmap", "l2", "--from-literal=c=d"]);
    let listed = hub.kubectl_ok(&["get", "configmap", "l1", "l2", "-o", "yaml"]);
    assert!(listed.contains("kind: List"), "{listed}");
    hub.kubectl_ok(&["delete", "configmap", "l1", "l2"]);
    let out = hub.kubectl_stdin(&["apply", "-f", "-"], &listed);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        hub.kubectl_ok(&["get", "configmap", "l2", "-o", "jsonpath={.data.c}"]),
        "d"
    );
    let bad = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: d1}\n  spec:\n    replicas: three\n    selector: {matchLabels: {a: b}}\n    template:\n      metadata: {labels: {a: b}}\n      spec: {containers: [{name: c, image: nginx, bogusField: 1}]}\n";
    let out = hub.kubectl_stdin(&["create", "-f", "-"], bad);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a bad List item was accepted");
    assert!(
        err.contains("spec.replicas") && err.contains(r#"unknown field "bogusField""#),
        "{err}"
    );
}
