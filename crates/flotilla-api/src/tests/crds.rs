//! The generated definitions: names, versions, subresources, printer columns, and schemas
//! that are structural, self-contained and identical across served versions.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionVersion as CrdVersion,
};
use kube::CustomResourceExt;
use kube::core::object::{HasSpec, HasStatus};
use kube::core::{ClusterResourceScope, NamespaceResourceScope, Resource};
use serde_json::{Value, json};

use super::schema_check::violations;
use crate::placement::{
    ApprovalRequest, ClusterApprovalRequest, ClusterResourceBinding, ClusterResourcePlacement,
    ClusterResourceSnapshot, ClusterSchedulingPolicySnapshot, ClusterStagedUpdateRun,
    ClusterStagedUpdateStrategy, ResourceBinding, ResourcePlacement, ResourceSnapshot,
    SchedulingPolicySnapshot, StagedUpdateRun, StagedUpdateStrategy,
};
use crate::validation::structural;
use crate::{core_crds, fleet_crds, validate};

fn find<'a>(crds: &'a [CustomResourceDefinition], kind: &str) -> &'a CustomResourceDefinition {
    crds.iter()
        .find(|c| c.spec.names.kind == kind)
        .unwrap_or_else(|| panic!("no {kind}"))
}

fn schema(crd: &CustomResourceDefinition, index: usize) -> Value {
    serde_json::to_value(
        &crd.spec.versions[index]
            .schema
            .as_ref()
            .unwrap()
            .open_api_v3_schema,
    )
    .unwrap()
}

/// `(name, priority)` of each printer column of the first version.
fn columns(crd: &CustomResourceDefinition) -> Vec<(String, i32)> {
    crd.spec.versions[0]
        .additional_printer_columns
        .iter()
        .flatten()
        .map(|c| (c.name.clone(), c.priority.unwrap_or(0)))
        .collect()
}

fn assert_structural(crd: &CustomResourceDefinition) {
    let text = serde_json::to_string(crd).unwrap();
    assert!(
        !text.contains("\"$ref\""),
        "{}: $ref in schema",
        crd.spec.names.kind
    );
    for (i, version) in crd.spec.versions.iter().enumerate() {
        let errors: Vec<String> = structural::check(
            &schema(crd, i),
            &crate::validation::path::Path::new("schema"),
        )
        .iter()
        .map(|e| e.message())
        .collect();
        assert_eq!(
            errors,
            Vec::<String>::new(),
            "{} {}: not structural",
            crd.spec.names.kind,
            version.name
        );
    }
}

/// The kinds KubeFleet serves at v1beta1 only (its v1 lacks them).
const V1BETA1_ONLY: [&str; 3] = [
    "SchedulingPolicySnapshot",
    "ResourceSnapshot",
    "ResourceBinding",
];

#[test]
fn fleet_kinds_are_served_at_v1_and_v1beta1_with_one_schema() {
    let crds: Vec<_> = fleet_crds()
        .into_iter()
        .filter(|c| c.spec.group != crate::updates::GROUP)
        .collect();
    let kinds: Vec<_> = crds.iter().map(|c| c.spec.names.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "MemberCluster",
            "InternalMemberCluster",
            "ClusterResourcePlacement",
            "ResourcePlacement",
            "ClusterSchedulingPolicySnapshot",
            "SchedulingPolicySnapshot",
            "ClusterResourceSnapshot",
            "ResourceSnapshot",
            "ClusterResourceBinding",
            "ResourceBinding",
            "Work",
            "ClusterResourceOverride",
            "ResourceOverride",
            "ClusterResourceOverrideSnapshot",
            "ResourceOverrideSnapshot",
            "ClusterStagedUpdateStrategy",
            "StagedUpdateStrategy",
            "ClusterStagedUpdateRun",
            "StagedUpdateRun",
            "ClusterApprovalRequest",
            "ApprovalRequest",
            "ClusterResourcePlacementEviction",
            "ClusterResourcePlacementDisruptionBudget"
        ]
    );
    for crd in &crds {
        let kind = &crd.spec.names.kind;
        let namespaced = [
            "InternalMemberCluster",
            "ResourcePlacement",
            "SchedulingPolicySnapshot",
            "ResourceSnapshot",
            "ResourceBinding",
            "Work",
            "ResourceOverride",
            "ResourceOverrideSnapshot",
            "StagedUpdateStrategy",
            "StagedUpdateRun",
            "ApprovalRequest",
        ];
        let scope = if namespaced.contains(&kind.as_str()) {
            "Namespaced"
        } else {
            "Cluster"
        };
        assert_eq!(crd.spec.scope, scope, "{kind}");
        assert_eq!(
            crd.metadata.name.as_deref(),
            Some(format!("{}.{}", crd.spec.names.plural, crd.spec.group).as_str())
        );
        let versions: Vec<_> = crd
            .spec
            .versions
            .iter()
            .map(|v| (v.name.as_str(), v.served, v.storage))
            .collect();
        if V1BETA1_ONLY.contains(&kind.as_str()) {
            assert_eq!(versions, [("v1beta1", true, true)], "{kind}");
        } else {
            assert_eq!(
                versions,
                [("v1", true, false), ("v1beta1", true, true)],
                "{kind}"
            );
            let (v1, v1beta1) = (&crd.spec.versions[0], &crd.spec.versions[1]);
            assert_eq!(
                schema(crd, 0),
                schema(crd, 1),
                "{kind}: schema differs between versions"
            );
            assert_eq!(
                v1.additional_printer_columns, v1beta1.additional_printer_columns,
                "{kind}"
            );
            assert_eq!(v1.selectable_fields, v1beta1.selectable_fields, "{kind}");
        }
        for version in &crd.spec.versions {
            let status = version
                .subresources
                .as_ref()
                .and_then(|s| s.status.as_ref());
            assert!(
                status.is_some(),
                "{kind} {}: no status subresource",
                version.name
            );
        }
        assert!(
            crd.spec
                .names
                .categories
                .iter()
                .flatten()
                .any(|c| c == "fleet"),
            "{kind}"
        );
        assert_structural(crd);
        // Flotilla's own definitions are valid user CRDs too (`flotilla crds` installs them).
        let object = serde_json::to_value(crd).unwrap();
        let errors: Vec<String> = validate(
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            &object,
            None,
            super::served(),
        )
        .iter()
        .map(|e| e.message())
        .collect();
        assert_eq!(errors, Vec::<String>::new(), "{kind}");
    }
}

#[test]
fn fleet_short_names_and_printer_columns_follow_kubefleet() {
    let crds = fleet_crds();
    let expect = |kind: &str, short: &str, expected: &[(&str, i32)]| {
        let crd = find(&crds, kind);
        assert_eq!(
            crd.spec.names.short_names,
            Some(vec![short.to_string()]),
            "{kind}"
        );
        let expected: Vec<(String, i32)> =
            expected.iter().map(|(n, p)| (n.to_string(), *p)).collect();
        assert_eq!(columns(crd), expected, "{kind}");
    };
    expect(
        "MemberCluster",
        "cluster",
        &[
            ("Joined", 0),
            ("Age", 0),
            ("Member-Agent-Last-Seen", 0),
            ("Node-Count", 0),
            ("Available-CPU", 0),
            ("Available-Memory", 0),
            ("Kubernetes-Version", 0),
            ("Allocatable-CPU", 1),
            ("Allocatable-Memory", 1),
            ("Node-Images", 1),
            ("Power-State", 1),
        ],
    );
    expect(
        "ClusterResourcePlacement",
        "crp",
        &[
            ("Gen", 0),
            ("Type", 1),
            ("Scheduled", 0),
            ("Scheduled-Gen", 0),
            ("Work-Synchronized", 1),
            ("Work-Synchronized-Gen", 1),
            ("Available", 0),
            ("Available-Gen", 0),
            ("Age", 0),
        ],
    );
    // The seed's `kubectl get csur` header: NAME PLACEMENT RESOURCE-SNAPSHOT-INDEX
    // POLICY-SNAPSHOT-INDEX INITIALIZED SUCCEEDED AGE; -o wide adds PROGRESSING and STRATEGY.
    // The namespaced twin (`kubectl get sur`) shows the same.
    for (kind, short) in [
        ("ClusterStagedUpdateRun", "csur"),
        ("StagedUpdateRun", "sur"),
    ] {
        expect(
            kind,
            short,
            &[
                ("Placement", 0),
                ("Resource-Snapshot-Index", 0),
                ("Policy-Snapshot-Index", 0),
                ("Initialized", 0),
                ("Succeeded", 0),
                ("Age", 0),
                ("Progressing", 1),
                ("Strategy", 1),
            ],
        );
    }
    // The seed's `kubectl get clusterapprovalrequest` header:
    // NAME UPDATE-RUN STAGE APPROVED APPROVALACCEPTED AGE; `kubectl get areq` the same.
    for (kind, short) in [
        ("ClusterApprovalRequest", "careq"),
        ("ApprovalRequest", "areq"),
    ] {
        expect(
            kind,
            short,
            &[
                ("Update-Run", 0),
                ("Stage", 0),
                ("Approved", 0),
                ("ApprovalAccepted", 0),
                ("Age", 0),
            ],
        );
    }
    // KubeFleet gives strategies no columns: kubectl shows NAME and AGE.
    expect("ClusterStagedUpdateStrategy", "csus", &[]);
    expect("StagedUpdateStrategy", "sus", &[]);
    expect(
        "ClusterResourcePlacementEviction",
        "crpe",
        &[("Valid", 0), ("Executed", 0), ("Age", 0)],
    );
    expect(
        "ClusterResourcePlacementDisruptionBudget",
        "crpdb",
        &[("Max-Unavailable", 0), ("Min-Available", 0), ("Age", 0)],
    );
    // KubeFleet's override snapshots have no short name and no columns; ours show the index
    // and whether the snapshot is the latest.
    for kind in [
        "ClusterResourceOverrideSnapshot",
        "ResourceOverrideSnapshot",
    ] {
        let crd = find(&crds, kind);
        assert_eq!(crd.spec.names.short_names, None, "{kind}");
        assert_eq!(
            columns(crd),
            [
                ("Index".to_string(), 0),
                ("Latest".to_string(), 0),
                ("Age".to_string(), 0)
            ],
            "{kind}"
        );
    }

    let member = find(&crds, "MemberCluster").spec.versions[0]
        .additional_printer_columns
        .clone()
        .unwrap();
    assert_eq!(
        member[3].json_path,
        r".status.properties.kubernetes-fleet\.io/node-count.value"
    );
    let crp = find(&crds, "ClusterResourcePlacement").spec.versions[0]
        .additional_printer_columns
        .clone()
        .unwrap();
    assert_eq!(
        crp[2].json_path,
        r#".status.conditions[?(@.type=="ClusterResourcePlacementScheduled")].status"#
    );
}

/// Checks at compile time that `N` is a twin of `C`: the same spec and status types.
fn shares_spec_and_status<C, N>()
where
    C: HasSpec + HasStatus,
    N: HasSpec<Spec = C::Spec> + HasStatus<Status = C::Status>,
{
}

/// Checks at compile time that `N` is a twin of `C` that, like it, has no status: the same
/// spec type.
fn shares_spec<C, N>()
where
    C: HasSpec,
    N: HasSpec<Spec = C::Spec>,
{
}

/// Checks a namespaced twin `N` of `C` (both types and definitions): names, scope, the same
/// schema (but for the kind's description) and field selectors, and the same columns, its
/// placement-level conditions read with its own prefix.
fn check_twin<C, N>(crds: &[CustomResourceDefinition], plural: &str, short: &str)
where
    C: Resource<DynamicType = (), Scope = ClusterResourceScope> + CustomResourceExt,
    N: Resource<DynamicType = (), Scope = NamespaceResourceScope> + CustomResourceExt,
{
    let (cluster_kind, kind) = (C::kind(&()), N::kind(&()));
    let (cluster, twin) = (find(crds, &cluster_kind), find(crds, &kind));
    assert_eq!(N::api_version(&()), "placement.kubernetes-fleet.io/v1beta1");
    assert_eq!(N::plural(&()), plural);
    assert_eq!(N::shortnames(), [short]);
    assert_eq!(twin.metadata.name.as_deref(), Some(N::crd_name()));
    assert_eq!(N::api_resource().plural, plural);
    assert_eq!(twin.spec.scope, "Namespaced");
    assert_eq!(cluster.spec.scope, "Cluster");
    assert_eq!(twin.spec.names.plural, plural);
    assert_eq!(
        twin.spec.names.singular.as_deref(),
        Some(kind.to_lowercase().as_str())
    );
    assert_eq!(twin.spec.names.short_names, Some(vec![short.to_string()]));
    assert_eq!(twin.spec.names.categories, cluster.spec.names.categories);
    fn storage(crd: &CustomResourceDefinition) -> (Value, Value, &CrdVersion) {
        let index = crd.spec.versions.iter().position(|v| v.storage).unwrap();
        let mut schema = schema(crd, index);
        let description = schema["description"].take();
        (schema, description, &crd.spec.versions[index])
    }
    let (cluster_schema, _, cluster_version) = storage(cluster);
    let (twin_schema, description, twin_version) = storage(twin);
    assert_eq!(
        twin_version.selectable_fields, cluster_version.selectable_fields,
        "{kind}"
    );
    assert_eq!(
        twin_schema, cluster_schema,
        "{kind}: schema differs from {cluster_kind}'s"
    );
    assert!(
        description
            .as_str()
            .unwrap()
            .starts_with(&format!("{kind} ")),
        "{kind}: {description}"
    );
    let columns = |version: &CrdVersion| -> Vec<(String, String, i32)> {
        version
            .additional_printer_columns
            .iter()
            .flatten()
            .map(|c| (c.name.clone(), c.json_path.clone(), c.priority.unwrap_or(0)))
            .collect()
    };
    let expected: Vec<_> = columns(cluster_version)
        .into_iter()
        .map(|(name, path, priority)| (name, path.replace(&*cluster_kind, &kind), priority))
        .collect();
    assert_eq!(columns(twin_version), expected, "{kind}");
}

#[test]
fn namespaced_twins_share_spec_status_schema_and_columns() {
    shares_spec_and_status::<ClusterResourcePlacement, ResourcePlacement>();
    shares_spec_and_status::<ClusterSchedulingPolicySnapshot, SchedulingPolicySnapshot>();
    shares_spec_and_status::<ClusterResourceSnapshot, ResourceSnapshot>();
    shares_spec_and_status::<ClusterResourceBinding, ResourceBinding>();
    let crds = fleet_crds();
    check_twin::<ClusterResourcePlacement, ResourcePlacement>(&crds, "resourceplacements", "rp");
    check_twin::<ClusterSchedulingPolicySnapshot, SchedulingPolicySnapshot>(
        &crds,
        "schedulingpolicysnapshots",
        "sps",
    );
    check_twin::<ClusterResourceSnapshot, ResourceSnapshot>(&crds, "resourcesnapshots", "rs");
    check_twin::<ClusterResourceBinding, ResourceBinding>(&crds, "resourcebindings", "rb");
    // The staged-update twins (KubeFleet's short names: `sus`, `sur`, `areq`).
    shares_spec::<ClusterStagedUpdateStrategy, StagedUpdateStrategy>();
    shares_spec_and_status::<ClusterStagedUpdateRun, StagedUpdateRun>();
    shares_spec_and_status::<ClusterApprovalRequest, ApprovalRequest>();
    check_twin::<ClusterStagedUpdateStrategy, StagedUpdateStrategy>(
        &crds,
        "stagedupdatestrategies",
        "sus",
    );
    check_twin::<ClusterStagedUpdateRun, StagedUpdateRun>(&crds, "stagedupdateruns", "sur");
    check_twin::<ClusterApprovalRequest, ApprovalRequest>(&crds, "approvalrequests", "areq");
    let selectable = |kind: &str| -> Vec<String> {
        find(&crds, kind).spec.versions[0]
            .selectable_fields
            .iter()
            .flatten()
            .map(|f| f.json_path.clone())
            .collect()
    };
    assert_eq!(selectable("StagedUpdateRun"), [".spec.placementName"]);
    assert_eq!(
        selectable("ApprovalRequest"),
        [".spec.parentStageRollout", ".spec.targetStage"]
    );

    // KubeFleet's ResourcePlacement columns: CRP's, reading `ResourcePlacement…` conditions.
    let rp = find(&crds, "ResourcePlacement");
    assert_eq!(rp.spec.versions.len(), 2);
    let paths: Vec<_> = rp.spec.versions[0]
        .additional_printer_columns
        .iter()
        .flatten()
        .map(|c| (c.name.as_str(), c.json_path.as_str()))
        .collect();
    assert_eq!(
        paths,
        [
            ("Gen", ".metadata.generation"),
            ("Type", ".spec.policy.placementType"),
            (
                "Scheduled",
                r#".status.conditions[?(@.type=="ResourcePlacementScheduled")].status"#
            ),
            (
                "Scheduled-Gen",
                r#".status.conditions[?(@.type=="ResourcePlacementScheduled")].observedGeneration"#
            ),
            (
                "Work-Synchronized",
                r#".status.conditions[?(@.type=="ResourcePlacementWorkSynchronized")].status"#
            ),
            (
                "Work-Synchronized-Gen",
                r#".status.conditions[?(@.type=="ResourcePlacementWorkSynchronized")].observedGeneration"#
            ),
            (
                "Available",
                r#".status.conditions[?(@.type=="ResourcePlacementAvailable")].status"#
            ),
            (
                "Available-Gen",
                r#".status.conditions[?(@.type=="ResourcePlacementAvailable")].observedGeneration"#
            ),
            ("Age", ".metadata.creationTimestamp"),
        ]
    );
}

/// The hand-written twin types serialize as `#[derive(CustomResource)]` types do (with
/// `apiVersion` and `kind`, status only when set) and read back unchanged.
#[test]
fn namespaced_twins_round_trip() {
    let mut rp = ResourcePlacement::new(
        "web",
        serde_json::from_value(json!({"resourceSelectors": [
            {"group": "apps", "version": "v1", "kind": "Deployment", "name": "web"}
        ]}))
        .unwrap(),
    );
    rp.metadata.namespace = Some("app".into());
    let value = serde_json::to_value(&rp).unwrap();
    assert_eq!(
        value,
        json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ResourcePlacement",
            "metadata": {"name": "web", "namespace": "app"},
            "spec": {"resourceSelectors": [
                {"group": "apps", "version": "v1", "kind": "Deployment", "name": "web"}
            ]}
        })
    );
    assert_eq!(
        serde_json::from_value::<ResourcePlacement>(value).unwrap(),
        rp
    );
    let snapshot = ResourceSnapshot {
        status: Some(Default::default()),
        ..Default::default()
    };
    let value = serde_json::to_value(&snapshot).unwrap();
    assert_eq!(value["kind"], "ResourceSnapshot");
    assert_eq!(value["status"], json!({}));
    assert_eq!(
        serde_json::from_value::<ResourceSnapshot>(value).unwrap(),
        snapshot
    );
    // A twin of a kind without status has none either.
    let mut strategy = StagedUpdateStrategy::new(
        "canary-first",
        serde_json::from_value(json!({"stages": [{"name": "canary"}]})).unwrap(),
    );
    strategy.metadata.namespace = Some("app".into());
    let value = serde_json::to_value(&strategy).unwrap();
    assert_eq!(
        value,
        json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "StagedUpdateStrategy",
            "metadata": {"name": "canary-first", "namespace": "app"},
            "spec": {"stages": [{"name": "canary"}]}
        })
    );
    assert_eq!(
        serde_json::from_value::<StagedUpdateStrategy>(value).unwrap(),
        strategy
    );
    let cluster = ClusterStagedUpdateStrategy::from(strategy.clone());
    assert_eq!(cluster.spec, strategy.spec);
    assert_eq!(StagedUpdateStrategy::from(cluster), strategy);
    let mut run = StagedUpdateRun::new(
        "run",
        serde_json::from_value(
            json!({"placementName": "web", "stagedRolloutStrategyName": "canary-first"}),
        )
        .unwrap(),
    );
    run.status = Some(Default::default());
    let value = serde_json::to_value(&run).unwrap();
    assert_eq!(value["kind"], "StagedUpdateRun");
    assert_eq!(value["status"], json!({}));
    assert_eq!(
        serde_json::from_value::<StagedUpdateRun>(value).unwrap(),
        run
    );
    let request = ApprovalRequest::new(
        "run-after-canary",
        serde_json::from_value(json!({"parentStageRollout": "run", "targetStage": "canary"}))
            .unwrap(),
    );
    assert_eq!(
        ApprovalRequest::from(ClusterApprovalRequest::from(request.clone())),
        request
    );
}

/// The staged-update twins' short names, plurals and singulars are KubeFleet's and reach one
/// kind only: no other kind the hub serves (fleet or core) answers to them.
#[test]
fn staged_update_twin_names_are_free_on_the_hub() {
    let crds: Vec<_> = fleet_crds().into_iter().chain(core_crds()).collect();
    for (kind, names) in [
        (
            "StagedUpdateStrategy",
            ["sus", "stagedupdatestrategies", "stagedupdatestrategy"],
        ),
        (
            "StagedUpdateRun",
            ["sur", "stagedupdateruns", "stagedupdaterun"],
        ),
        (
            "ApprovalRequest",
            ["areq", "approvalrequests", "approvalrequest"],
        ),
    ] {
        for crd in &crds {
            let other = &crd.spec.names;
            if other.kind == kind {
                continue;
            }
            let taken: Vec<&str> = [other.plural.as_str()]
                .into_iter()
                .chain(other.singular.as_deref())
                .chain(other.short_names.iter().flatten().map(String::as_str))
                .collect();
            for name in names {
                assert!(
                    !taken.contains(&name),
                    "{kind}: {name} is also {} {}'s",
                    crd.spec.group,
                    other.kind
                );
            }
        }
    }
}

#[test]
fn fleet_schemas_carry_kubefleet_defaults_and_bounds() {
    let crds = fleet_crds();
    let at = |kind: &str, pointer: &str| -> Value {
        schema(find(&crds, kind), 1)
            .pointer(pointer)
            .cloned()
            .unwrap_or_else(|| panic!("{kind}: {pointer}"))
    };
    let spec = "/properties/spec/properties";
    let heartbeat = at("MemberCluster", &format!("{spec}/heartbeatPeriodSeconds"));
    assert_eq!(
        (
            heartbeat["default"].clone(),
            heartbeat["minimum"].clone(),
            heartbeat["maximum"].clone()
        ),
        (json!(60), json!(1.0), json!(600.0))
    );
    assert_eq!(
        at(
            "ClusterResourcePlacement",
            &format!("{spec}/policy/properties/placementType/default")
        ),
        json!("PickAll")
    );
    assert_eq!(
        at(
            "ClusterResourcePlacement",
            &format!("{spec}/resourceSelectors/maxItems")
        ),
        json!(100)
    );
    assert_eq!(
        at(
            "ClusterResourcePlacement",
            &format!("{spec}/resourceSelectors/minItems")
        ),
        json!(1)
    );
    assert_eq!(
        at(
            "ClusterResourcePlacement",
            &format!("{spec}/revisionHistoryLimit/default")
        ),
        json!(10)
    );
    let rolling = at(
        "ClusterResourcePlacement",
        &format!("{spec}/strategy/properties/rollingUpdate/properties"),
    );
    assert_eq!(rolling["maxUnavailable"]["default"], json!("25%"));
    assert_eq!(
        rolling["maxUnavailable"]["x-kubernetes-int-or-string"],
        json!(true)
    );
    assert_eq!(rolling["maxSurge"]["default"], json!("25%"));
    assert_eq!(rolling["unavailablePeriodSeconds"]["default"], json!(60));
    let term = at(
        "ClusterResourcePlacement",
        &format!(
            "{spec}/policy/properties/affinity/properties/clusterAffinity/properties/preferredDuringSchedulingIgnoredDuringExecution/items/properties/preference/properties"
        ),
    );
    let shape = |sorter: &Value| {
        let mut sorter = sorter.clone();
        sorter.as_object_mut().unwrap().remove("description");
        sorter
    };
    assert_eq!(
        shape(&term["metricSorter"]),
        shape(&term["propertySorter"]),
        "metricSorter has propertySorter's shape"
    );
    let stage = at(
        "ClusterStagedUpdateStrategy",
        &format!("{spec}/stages/items/properties"),
    );
    // List items are not defaulted (kubectl apply's JSON merge patch replaces lists).
    assert_eq!(stage["maxConcurrency"].get("default"), None);
    assert!(
        stage["maxConcurrency"]["description"]
            .as_str()
            .unwrap()
            .ends_with("Defaults to 1.")
    );
    assert_eq!(stage["afterStageTasks"]["maxItems"], json!(2));
    assert_eq!(stage["beforeStageTasks"]["maxItems"], json!(1));
    assert_eq!(stage["name"]["maxLength"], json!(63));
    assert_eq!(
        at(
            "ClusterStagedUpdateStrategy",
            &format!("{spec}/stages/maxItems")
        ),
        json!(31)
    );
    assert_eq!(
        at("ClusterStagedUpdateRun", &format!("{spec}/state/enum")),
        json!(["Initialize", "Run", "Stop"])
    );
    assert_eq!(
        at("ClusterStagedUpdateRun", &format!("{spec}/state/default")),
        json!("Run")
    );
    let budget = at("ClusterResourcePlacementDisruptionBudget", spec);
    for name in ["maxUnavailable", "minAvailable"] {
        assert_eq!(
            budget[name]["x-kubernetes-int-or-string"],
            json!(true),
            "{name}"
        );
        assert_eq!(
            budget[name]["pattern"],
            json!("^(100|[0-9]{1,2})%$"),
            "{name}"
        );
    }
    let eviction = at("ClusterResourcePlacementEviction", spec);
    assert_eq!(eviction["placementName"]["maxLength"], json!(255));
    assert_eq!(eviction["clusterName"]["maxLength"], json!(255));
    let required = at(
        "ClusterResourcePlacementEviction",
        "/properties/spec/required",
    );
    assert_eq!(required, json!(["clusterName", "placementName"]));
    let snapshot = at("ClusterResourceOverrideSnapshot", spec);
    assert_eq!(
        snapshot["overrideSpec"]["properties"]["clusterResourceSelectors"]["maxItems"],
        json!(20)
    );
    let conditions = at(
        "ClusterResourcePlacement",
        "/properties/status/properties/conditions",
    );
    assert_eq!(conditions["x-kubernetes-list-type"], json!("map"));
    assert_eq!(conditions["x-kubernetes-list-map-keys"], json!(["type"]));
}

#[test]
fn budget_strings_must_be_percentages() {
    let crds = fleet_crds();
    let schema = schema(find(&crds, "ClusterResourcePlacementDisruptionBudget"), 1);
    let budget = |spec: Value| {
        json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourcePlacementDisruptionBudget",
            "metadata": {"name": "crp"},
            "spec": spec
        })
    };
    for ok in [
        json!({"maxUnavailable": "0%"}),
        json!({"minAvailable": "100%"}),
        json!({"minAvailable": 3}),
    ] {
        assert_eq!(
            violations(&schema, &budget(ok.clone())),
            Vec::<String>::new(),
            "{ok}"
        );
    }
    for bad in [
        json!({"maxUnavailable": "101%"}),
        json!({"minAvailable": "3"}),
        json!({"minAvailable": "1.5%"}),
    ] {
        assert_eq!(violations(&schema, &budget(bad.clone())).len(), 1, "{bad}");
    }
}

#[test]
fn core_kinds_are_all_there_with_kubectl_names() {
    let crds = core_crds();
    // The kinds users place on members most (the differential suite checks every one of the
    // ~64 kube-apiserver serves, against a real one).
    for wanted in [
        "ResourceQuota",
        "LimitRange",
        "NetworkPolicy",
        "Ingress",
        "CronJob",
        "PersistentVolumeClaim",
        "EndpointSlice",
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
        "PriorityClass",
        "StorageClass",
        "HorizontalPodAutoscaler",
    ] {
        find(&crds, wanted);
    }
    let mut names = std::collections::BTreeSet::new();
    for crd in &crds {
        let names_ = &crd.spec.names;
        let kind = names_.kind.as_str();
        assert!(
            names.insert(crd.metadata.name.clone()),
            "{kind}: defined twice"
        );
        assert_eq!(
            names_.singular.as_deref(),
            Some(kind.to_lowercase().as_str()),
            "{kind}"
        );
        assert_eq!(
            names_.list_kind.as_deref(),
            Some(format!("{kind}List").as_str()),
            "{kind}"
        );
        let expected_name = if crd.spec.group.is_empty() {
            names_.plural.clone()
        } else {
            format!("{}.{}", names_.plural, crd.spec.group)
        };
        assert_eq!(crd.metadata.name.as_deref(), Some(expected_name.as_str()));
        let has_scale = crd.spec.versions[0]
            .subresources
            .as_ref()
            .is_some_and(|s| s.scale.is_some());
        let scalable = [
            "Deployment",
            "ReplicaSet",
            "StatefulSet",
            "ReplicationController",
        ];
        assert_eq!(
            has_scale,
            scalable.contains(&kind),
            "{kind}: scale subresource"
        );
        assert!(!columns(crd).is_empty(), "{kind}: printer columns");
        assert_structural(crd);
    }
    let in_all: Vec<&str> = crds
        .iter()
        .filter(|c| c.spec.names.categories.iter().flatten().any(|c| c == "all"))
        .map(|c| c.spec.names.kind.as_str())
        .collect();
    assert_eq!(
        in_all,
        [
            "Service",
            "Pod",
            "ReplicationController",
            "DaemonSet",
            "Deployment",
            "ReplicaSet",
            "StatefulSet",
            "HorizontalPodAutoscaler",
            "CronJob",
            "Job"
        ]
    );
}

#[test]
fn core_schemas_keep_kubernetes_semantics() {
    let crds = core_crds();
    let namespace = schema(find(&crds, "Namespace"), 0);
    assert_eq!(
        namespace.pointer("/properties/status/properties/phase/default"),
        Some(&json!("Active"))
    );
    let deployment = schema(find(&crds, "Deployment"), 0);
    let pod = "/properties/spec/properties/template/properties/spec/properties";
    let containers = deployment.pointer(&format!("{pod}/containers")).unwrap();
    assert_eq!(containers["x-kubernetes-list-map-keys"], json!(["name"]));
    let ports = &containers["items"]["properties"]["ports"];
    assert_eq!(
        ports["x-kubernetes-list-map-keys"],
        json!(["containerPort", "protocol"])
    );
    assert_eq!(
        ports["items"]["properties"]["protocol"]["default"],
        json!("TCP")
    );
    let fields_v1 = deployment
        .pointer("/properties/metadata/properties/managedFields/items/properties/fieldsV1")
        .unwrap();
    assert_eq!(
        fields_v1["x-kubernetes-preserve-unknown-fields"],
        json!(true)
    );
    let crd = schema(find(&crds, "CustomResourceDefinition"), 0);
    let user_schema = crd
        .pointer("/properties/spec/properties/versions/items/properties/schema/properties/openAPIV3Schema")
        .unwrap();
    assert_eq!(
        user_schema["x-kubernetes-preserve-unknown-fields"],
        json!(true)
    );
    let deploy_columns: Vec<String> = columns(find(&crds, "Deployment"))
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        deploy_columns[..5],
        ["Ready", "Up-to-date", "Available", "Age", "Containers"]
    );
}

/// Policy snapshots report the placement generation under KubeFleet's JSON name,
/// `observedCRPGeneration`, so that tooling written for KubeFleet reads it.
#[test]
fn policy_snapshot_status_uses_kubefleet_field_names() {
    use crate::placement::snapshots::SchedulingPolicySnapshotStatus;
    let crds = fleet_crds();
    let crd = find(&crds, "ClusterSchedulingPolicySnapshot");
    for i in 0..crd.spec.versions.len() {
        let status = &schema(crd, i)["properties"]["status"]["properties"];
        assert!(status.get("observedCRPGeneration").is_some(), "{status}");
        assert!(status.get("observedCrpGeneration").is_none(), "{status}");
    }
    let status: SchedulingPolicySnapshotStatus =
        serde_json::from_value(json!({"observedCRPGeneration": 3})).unwrap();
    assert_eq!(status.observed_crp_generation, 3);
    assert_eq!(
        serde_json::to_value(&status).unwrap(),
        json!({"observedCRPGeneration": 3})
    );
}

#[test]
fn update_kinds_are_served_at_v1beta1_with_status_and_columns() {
    let crds: Vec<_> = fleet_crds()
        .into_iter()
        .filter(|c| c.spec.group == crate::updates::GROUP)
        .collect();
    let kinds: Vec<_> = crds
        .iter()
        .map(|c| (c.spec.names.kind.as_str(), c.spec.scope.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("FleetUpdateStrategy", "Cluster"),
            ("UpdateRun", "Cluster"),
            ("Gate", "Cluster"),
            ("AutoUpgradeProfile", "Cluster"),
            ("MaintenanceConfiguration", "Namespaced"),
            ("KubernetesVersion", "Cluster"),
            ("NodeImageVersion", "Cluster"),
            ("MemberUpgrade", "Namespaced"),
        ]
    );
    for crd in &crds {
        let versions: Vec<_> = crd.spec.versions.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(versions, ["v1beta1"], "{}", crd.spec.names.kind);
        let columns = crd.spec.versions[0]
            .additional_printer_columns
            .as_deref()
            .unwrap_or_default();
        assert!(
            columns.iter().any(|c| c.name == "Age") && columns.len() >= 2,
            "{} has printer columns",
            crd.spec.names.kind
        );
    }
}
