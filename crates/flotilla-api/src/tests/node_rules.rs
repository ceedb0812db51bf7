//! The NodePool examples of seed 003 (kept in `examples/nodes/seed-003/`) apply unchanged, the
//! examples in `examples/nodes/` carry what Karpenter v1 requires, and the Karpenter rules
//! reject bad pools and claims with the field named.

use serde_json::{Value, json};

use super::schema_check::violations;
use super::served;
use crate::nodes::NodePool;
use crate::{member_crds, validate};

macro_rules! node_example {
    ($file:literal) => {
        (
            $file,
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../examples/nodes/seed-003/",
                $file
            )),
        )
    };
}

const NODE_POOLS: &[(&str, &str)] = &[
    node_example!("nodepool-default.yaml"),
    node_example!("nodepool-termination-grace-period.yaml"),
    node_example!("nodepool-three-budgets.yaml"),
    node_example!("nodepool-do-not-disrupt.yaml"),
    node_example!("nodepool-expire-24h.yaml"),
    node_example!("nodepool-disruption-configuration.yaml"),
    node_example!("nodepool-when-empty-or-underutilized.yaml"),
    node_example!("nodepool-when-empty.yaml"),
    node_example!("nodepool-business-hours.yaml"),
    node_example!("nodepool-weekend-only.yaml"),
    node_example!("nodepool-gradual.yaml"),
];

fn messages(kind: &str, new: &Value, old: Option<&Value>) -> Vec<String> {
    validate("karpenter.sh", kind, new, old, served())
        .iter()
        .map(|e| e.message())
        .collect()
}

fn pool(spec: Value) -> Value {
    json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
           "metadata": {"name": "default"}, "spec": spec})
}

/// The schemas of the member kinds (their storage versions), by kind.
fn member_schemas() -> std::collections::BTreeMap<String, Value> {
    member_crds()
        .into_iter()
        .map(|crd| {
            let version = crd
                .spec
                .versions
                .iter()
                .find(|v| v.storage)
                .expect("a storage version");
            let schema = version.schema.as_ref().unwrap().open_api_v3_schema.as_ref();
            (
                crd.spec.names.kind.clone(),
                serde_json::to_value(schema).unwrap(),
            )
        })
        .collect()
}

/// The schema of the member kind `kind` (its storage version).
fn member_schema(kind: &str) -> Value {
    member_schemas()
        .remove(kind)
        .unwrap_or_else(|| panic!("members serve {kind}"))
}

/// Every example of `examples/nodes/` applies to a simulated member (its kind's schema and
/// rules), and its NodePools carry what Karpenter v1's schema requires beyond Flotilla's
/// (which also takes seed 003's shorter documents): a template with a node class reference
/// and requirements, `consolidateAfter` wherever `disruption` is set, and node lifetimes in
/// `template.spec.expireAfter` (v1 has no `disruption.expireAfter`).
#[test]
fn examples_carry_what_karpenter_v1_requires() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/nodes");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("examples/nodes")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    assert!(files.len() >= 12, "the examples are there: {files:?}");
    let schemas = member_schemas();
    let mut kinds = std::collections::BTreeSet::new();
    for file in files {
        let yaml = std::fs::read_to_string(&file).expect("an example");
        let object: Value = serde_saphyr::from_str(&yaml).expect("YAML");
        let name = file.display();
        let kind = object["kind"].as_str().expect("a kind");
        let group = object["apiVersion"]
            .as_str()
            .and_then(|v| v.split_once('/'))
            .map(|(group, _)| group)
            .expect("a group");
        kinds.insert(kind.to_string());
        assert_eq!(
            violations(&schemas[kind], &object),
            Vec::<String>::new(),
            "{name}"
        );
        assert_eq!(
            validate(group, kind, &object, None, served())
                .iter()
                .map(|e| e.message())
                .collect::<Vec<_>>(),
            Vec::<String>::new(),
            "{name}"
        );
        if kind != "NodePool" {
            continue;
        }
        let template = &object["spec"]["template"]["spec"];
        for key in ["group", "kind", "name"] {
            assert!(
                template["nodeClassRef"][key].is_string(),
                "{name}: nodeClassRef.{key}"
            );
        }
        assert!(
            template["requirements"]
                .as_array()
                .is_some_and(|r| !r.is_empty()),
            "{name}: requirements"
        );
        let disruption = &object["spec"]["disruption"];
        if !disruption.is_null() {
            assert!(
                disruption["consolidateAfter"].is_string(),
                "{name}: consolidateAfter"
            );
            assert!(
                disruption["expireAfter"].is_null(),
                "{name}: v1 has no disruption.expireAfter"
            );
        }
    }
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        ["AKSNodeClass", "NodeOverlay", "NodePool"]
    );
}

#[test]
fn seed_node_pools_apply_unchanged() {
    let schema = member_schema("NodePool");
    for (file, yaml) in NODE_POOLS {
        let object: Value = serde_saphyr::from_str(yaml).unwrap_or_else(|e| panic!("{file}: {e}"));
        let typed: NodePool =
            serde_json::from_value(object.clone()).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(
            serde_json::to_value(&typed).unwrap(),
            object,
            "{file}: the typed round trip changed the object"
        );
        assert_eq!(violations(&schema, &object), Vec::<String>::new(), "{file}");
        assert_eq!(
            messages("NodePool", &object, None),
            Vec::<String>::new(),
            "{file}"
        );
        assert_eq!(
            messages("NodePool", &object, Some(&object)),
            Vec::<String>::new(),
            "{file}"
        );
    }
}

#[test]
fn schema_rejects_out_of_range_budgets_and_durations() {
    let schema = member_schema("NodePool");
    let cases = [
        (
            json!({"disruption": {"budgets": [{"nodes": "1000%"}]}}),
            "spec.disruption.budgets[0].nodes",
        ),
        (
            json!({"template": {"spec": {"terminationGracePeriod": "30 seconds"}}}),
            "spec.template.spec.terminationGracePeriod",
        ),
        (
            json!({"disruption": {"consolidateAfter": "soon"}}),
            "spec.disruption.consolidateAfter",
        ),
        (
            json!({"disruption": {"budgets": [{"nodes": "1", "schedule": "@daily", "duration": "1d"}]}}),
            "spec.disruption.budgets[0].duration",
        ),
        (json!({"weight": 101}), "spec.weight"),
    ];
    for (spec, field) in cases {
        let found = violations(&schema, &pool(spec.clone()));
        assert!(
            found.iter().any(|v| v.starts_with(field)),
            "{spec}: expected a violation at {field}, got {found:?}"
        );
    }
}

#[test]
fn pool_rules_name_the_field() {
    let cases = [
        (
            json!({"disruption": {"budgets": [{"nodes": "1"}, {"nodes": "0", "duration": "8h"}]}}),
            vec![
                "spec.disruption.budgets[1].schedule: Required value: a budget with a duration needs a schedule: when its window opens",
            ],
        ),
        (
            json!({"disruption": {"budgets": [{"nodes": "0", "schedule": "@daily"}]}}),
            vec![
                "spec.disruption.budgets[0].duration: Required value: a budget with a schedule needs a duration: how long it stays active each time the schedule fires",
            ],
        ),
        (
            json!({"disruption": {"budgets": [
                {"nodes": "0", "schedule": "0 25 * * *", "duration": "1h"},
                {"nodes": "0", "schedule": "TZ=Europe/Paris 0 9 * * 1-5", "duration": "8h"},
                {"nodes": "0", "schedule": "@fortnightly", "duration": "8h"}
            ]}}),
            vec![
                "spec.disruption.budgets[0].schedule: Invalid value: \"0 25 * * *\": hour \"25\": 25 is above the maximum 23",
                "spec.disruption.budgets[1].schedule: Invalid value: \"TZ=Europe/Paris 0 9 * * 1-5\": time zone prefix TZ=Europe/Paris is not allowed: schedules are evaluated in UTC",
                "spec.disruption.budgets[2].schedule: Invalid value: \"@fortnightly\": unknown macro @fortnightly (expected @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly)",
            ],
        ),
        (
            json!({"template": {"metadata": {"labels": {
                "karpenter.sh/nodepool": "x",
                "karpenter.sh/capacity-type": "spot",
                "karpenter.sh/initialized": "true",
                "kubernetes.io/hostname": "n1",
                "karpenter.azure.com/sku-family": "D",
                "karpenter.azure.com/image": "x",
                "kubernetes.azure.com/mode": "user",
                "kubernetes.azure.com/agentpool": "x",
                "agentpool": "x",
                "team.example.com/owner": "x",
                "example.com": "x"
            }}}}),
            vec![
                "spec.template.metadata.labels: Invalid value: \"agentpool\": label \"agentpool\" is restricted",
                "spec.template.metadata.labels: Invalid value: \"karpenter.azure.com/image\": label domain \"karpenter.azure.com\" is restricted",
                "spec.template.metadata.labels: Invalid value: \"karpenter.sh/initialized\": label domain \"karpenter.sh\" is restricted",
                "spec.template.metadata.labels: Invalid value: \"karpenter.sh/nodepool\": label \"karpenter.sh/nodepool\" is restricted",
                "spec.template.metadata.labels: Invalid value: \"kubernetes.azure.com/agentpool\": label domain \"kubernetes.azure.com\" is restricted",
                "spec.template.metadata.labels: Invalid value: \"kubernetes.io/hostname\": label \"kubernetes.io/hostname\" is restricted",
            ],
        ),
        (
            json!({"template": {"spec": {"requirements": [
                {"key": "karpenter.azure.com/sku-cpu", "operator": "Gt", "values": ["2", "4"]},
                {"key": "kubernetes.io/arch", "operator": "Exists", "values": ["amd64"]},
                {"key": "karpenter.sh/capacity-type", "operator": "In", "values": []},
                {"key": "node.kubernetes.io/instance-type", "operator": "In",
                 "values": ["Standard_D2s_v5"], "minValues": 2}
            ]}}}),
            vec![
                "spec.template.spec.requirements[0].values: Invalid value: [\"2\",\"4\"]: operators Gt, Lt, Gte and Lte take exactly one non-negative integer",
                "spec.template.spec.requirements[1].values: Invalid value: [\"amd64\"]: operators Exists and DoesNotExist take no values",
                "spec.template.spec.requirements[2].values: Required value: operator In needs at least one value",
                "spec.template.spec.requirements[3].minValues: Invalid value: 2: minValues (2) is more than the 1 value(s) the requirement allows",
            ],
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(
            messages("NodePool", &pool(spec.clone()), None),
            expected,
            "{spec}"
        );
    }
}

#[test]
fn static_pools_keep_their_mode_and_take_only_a_node_limit() {
    let fixed = pool(json!({"replicas": 2, "limits": {"nodes": "4"}}));
    assert!(messages("NodePool", &fixed, None).is_empty());
    assert_eq!(
        messages(
            "NodePool",
            &pool(json!({"replicas": 2, "limits": {"cpu": "8"}, "weight": 10})),
            None
        ),
        vec![
            "spec: Invalid value: \"object\": only 'limits.nodes' is supported on static NodePools",
            "spec: Invalid value: \"object\": 'weight' is not supported on static NodePools",
        ]
    );
    let dynamic = pool(json!({}));
    let transition = "spec: Invalid value: \"object\": Cannot transition NodePool between static (replicas set) and dynamic (replicas unset) provisioning modes";
    assert_eq!(
        messages("NodePool", &dynamic, Some(&fixed)),
        vec![transition]
    );
    assert_eq!(
        messages("NodePool", &fixed, Some(&dynamic)),
        vec![transition]
    );
    let schema = member_schema("NodePool");
    let negative = pool(json!({"replicas": -1}));
    assert!(
        !violations(&schema, &negative).is_empty(),
        "replicas is at least 0"
    );
}

#[test]
fn node_class_kind_is_immutable_and_claims_never_change() {
    let class = |kind: &str| {
        pool(json!({"template": {"spec": {"nodeClassRef":
            {"group": "karpenter.azure.com", "kind": kind, "name": "default"}}}}))
    };
    assert_eq!(
        messages("NodePool", &class("Other"), Some(&class("AKSNodeClass"))),
        vec!["spec.template.spec.nodeClassRef.kind: Invalid value: \"Other\": field is immutable"]
    );
    let claim = |name: &str| {
        json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": {"name": "c"},
               "spec": {"nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": name}}})
    };
    assert_eq!(
        messages("NodeClaim", &claim("other"), Some(&claim("default"))).len(),
        1
    );
    assert_eq!(
        messages("NodeClaim", &claim("default"), Some(&claim("default"))),
        Vec::<String>::new()
    );
}

#[test]
fn node_class_image_gc_starts_above_where_it_stops() {
    let class = |high: i64, low: i64| {
        json!({"apiVersion": "karpenter.azure.com/v1beta1", "kind": "AKSNodeClass",
               "metadata": {"name": "default"},
               "spec": {"kubelet": {"imageGCHighThresholdPercent": high, "imageGCLowThresholdPercent": low}}})
    };
    let messages = |object: &Value| -> Vec<String> {
        validate(
            "karpenter.azure.com",
            "AKSNodeClass",
            object,
            None,
            served(),
        )
        .iter()
        .map(|e| e.message())
        .collect()
    };
    assert_eq!(messages(&class(85, 80)), Vec::<String>::new());
    assert_eq!(
        messages(&class(80, 80)),
        vec![
            "spec.kubelet: Invalid value: {\"imageGCHighThresholdPercent\":80,\"imageGCLowThresholdPercent\":80}: \
             imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent"
        ]
    );
}

/// A NodeOverlay with `spec`.
fn overlay(spec: Value) -> Value {
    json!({"apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay",
           "metadata": {"name": "o"}, "spec": spec})
}

#[test]
fn node_overlays_follow_karpenters_schema_and_rules() {
    let crd = member_crds()
        .into_iter()
        .find(|c| c.spec.names.kind == "NodeOverlay")
        .expect("members serve NodeOverlay");
    assert_eq!(crd.spec.versions[0].name, "v1alpha1");
    assert_eq!(
        crd.spec.names.short_names,
        Some(vec!["overlays".to_string()])
    );
    let schema = member_schema("NodeOverlay");
    let good = [
        json!({"requirements": [{"key": "karpenter.azure.com/sku-family", "operator": "In", "values": ["D"]}],
               "priceAdjustment": "-15%", "weight": 10}),
        json!({"requirements": [{"key": "karpenter.sh/nodepool", "operator": "In", "values": ["a"]}],
               "price": "0.25"}),
        json!({"requirements": [], "priceAdjustment": "+0.5"}),
        json!({"requirements": [{"key": "karpenter.sh/capacity-type", "operator": "NotIn", "values": ["spot"]}],
               "priceAdjustment": "-100%"}),
    ];
    for spec in good {
        let doc = overlay(spec.clone());
        assert_eq!(violations(&schema, &doc), Vec::<String>::new(), "{spec}");
        assert_eq!(
            messages("NodeOverlay", &doc, None),
            Vec::<String>::new(),
            "{spec}"
        );
    }
    for (spec, field) in [
        (
            json!({"requirements": [], "priceAdjustment": "10%"}),
            "spec.priceAdjustment",
        ),
        (
            json!({"requirements": [], "priceAdjustment": "-150%"}),
            "spec.priceAdjustment",
        ),
        (json!({"requirements": [], "price": "-1"}), "spec.price"),
        (json!({"requirements": [], "weight": 0}), "spec.weight"),
        (json!({"priceAdjustment": "+1"}), "spec.requirements"),
    ] {
        let found = violations(&schema, &overlay(spec.clone()));
        assert!(
            found.iter().any(|v| v.starts_with(field)),
            "{spec}: expected a violation at {field}, got {found:?}"
        );
    }
    let rules = [
        (
            json!({"requirements": [], "price": "1", "priceAdjustment": "+1"}),
            "cannot set both 'price' and 'priceAdjustment'",
        ),
        (
            json!({"requirements": [{"key": "karpenter.sh/nodepool", "operator": "In"}]}),
            "requirements with operator 'In' must have a value defined",
        ),
        (
            json!({"requirements": [{"key": "a", "operator": "NotIn"}]}),
            "requirements with operator 'NotIn' must have a value defined",
        ),
        (
            json!({"requirements": [{"key": "karpenter.azure.com/sku-cpu", "operator": "Gt", "values": ["x"]}]}),
            "requirements operator 'Gt', 'Lt', 'Gte' or 'Lte' must have a single positive integer value",
        ),
        (
            json!({"requirements": [{"key": "karpenter.sh/foo", "operator": "Exists"}]}),
            "label domain \"karpenter.sh\" is restricted",
        ),
        (
            json!({"requirements": [], "capacity": {"cpu": "1"}}),
            "invalid resource restricted",
        ),
        (
            json!({"requirements": [], "capacity": {"example.com/gpu": "1"}}),
            "extended resources are not modelled",
        ),
    ];
    for (spec, expected) in rules {
        let found = messages("NodeOverlay", &overlay(spec.clone()), None);
        assert!(
            found.iter().any(|m| m.contains(expected)),
            "{spec}: expected {expected:?}, got {found:?}"
        );
    }
}

/// An AKSNodeClass with `spec`.
fn node_class(spec: Value) -> Value {
    json!({"apiVersion": "karpenter.azure.com/v1beta1", "kind": "AKSNodeClass",
           "metadata": {"name": "default"}, "spec": spec})
}

/// One zone of a node-local DNS list, with every required field.
fn zone(zone: &str, destination: &str) -> Value {
    json!({"zone": zone, "queryLogging": "Error", "protocol": "PreferUDP",
           "forwardDestination": destination, "forwardPolicy": "Sequential",
           "maxConcurrent": 1000, "cacheDuration": "1h", "serveStaleDuration": "1h",
           "serveStale": "Immediate"})
}

#[test]
fn aks_node_classes_follow_the_providers_schema_and_rules() {
    let crd = member_crds()
        .into_iter()
        .find(|c| c.spec.names.kind == "AKSNodeClass")
        .expect("members serve AKSNodeClass");
    let storage = crd
        .spec
        .versions
        .iter()
        .find(|v| v.storage)
        .map(|v| v.name.as_str());
    assert_eq!(storage, Some("v1beta1"));
    let schema = member_schema("AKSNodeClass");
    let dns = json!({"mode": "Required",
        "vnetDNSOverrides": [zone(".", "VnetDNS"), zone("cluster.local", "ClusterCoreDNS")],
        "kubeDNSOverrides": [zone(".", "ClusterCoreDNS"), zone("cluster.local", "ClusterCoreDNS")]});
    let good = [
        json!({"imageFamily": "Ubuntu", "fipsMode": "FIPS"}),
        json!({"vnetSubnetID": "/subscriptions/0000/resourceGroups/rg-1/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes"}),
        json!({"kubelet": {"cpuManagerPolicy": "static", "topologyManagerPolicy": "best-effort",
                           "cpuCFSQuotaPeriod": "200ms", "containerLogMaxFiles": 3,
                           "containerLogMaxSize": "10Mi", "failSwapOn": false,
                           "imageGCHighThresholdPercent": 85, "imageGCLowThresholdPercent": 80},
               "linuxOSConfig": {"swapFileSize": "2Gi", "transparentHugePageEnabled": "madvise",
                                 "transparentHugePageDefrag": "defer+madvise",
                                 "sysctls": {"netCoreRmemDefault": 212992, "netCoreRmemMax": 134217728,
                                             "netIPv4IPLocalPortRange": "32768 60999",
                                             "netIPv4TCPTwReuse": true, "vmMaxMapCount": 262144}}}),
        json!({"localDNS": dns}),
        json!({"security": {"encryptionAtHost": true}, "artifactStreaming": {"enabled": true},
               "gpu": {"mode": "None"}, "tags": {"team": "payments"}}),
    ];
    for spec in good {
        let doc = node_class(spec.clone());
        assert_eq!(violations(&schema, &doc), Vec::<String>::new(), "{spec}");
        assert_eq!(
            validate("karpenter.azure.com", "AKSNodeClass", &doc, None, served())
                .iter()
                .map(|e| e.message())
                .collect::<Vec<_>>(),
            Vec::<String>::new(),
            "{spec}"
        );
    }
    for (spec, field) in [
        (json!({"vnetSubnetID": "subnet-1"}), "spec.vnetSubnetID"),
        (
            json!({"kubelet": {"cpuManagerPolicy": "dynamic"}}),
            "spec.kubelet.cpuManagerPolicy",
        ),
        (
            json!({"kubelet": {"containerLogMaxFiles": 1}}),
            "spec.kubelet.containerLogMaxFiles",
        ),
        (
            json!({"kubelet": {"containerLogMaxSize": "10MB"}}),
            "spec.kubelet.containerLogMaxSize",
        ),
        (
            json!({"linuxOSConfig": {"sysctls": {"vmSwappiness": 101}}}),
            "spec.linuxOSConfig.sysctls.vmSwappiness",
        ),
        (
            json!({"linuxOSConfig": {"sysctls": {"netIPv4IPLocalPortRange": "1024-65535"}}}),
            "spec.linuxOSConfig.sysctls.netIPv4IPLocalPortRange",
        ),
        (
            json!({"linuxOSConfig": {"transparentHugePageEnabled": "sometimes"}}),
            "spec.linuxOSConfig.transparentHugePageEnabled",
        ),
        (
            json!({"localDNS": {"mode": "Disabled"}}),
            "spec.localDNS.vnetDNSOverrides",
        ),
        (
            json!({"localDNS": {"mode": "Always", "vnetDNSOverrides": [], "kubeDNSOverrides": []}}),
            "spec.localDNS.mode",
        ),
        (json!({"gpu": {"mode": "Cuda"}}), "spec.gpu.mode"),
    ] {
        let found = violations(&schema, &node_class(spec.clone()));
        assert!(
            found.iter().any(|v| v.starts_with(field)),
            "{spec}: expected a violation at {field}, got {found:?}"
        );
    }
    let mut forwarded = dns.clone();
    forwarded["vnetDNSOverrides"][0]["forwardDestination"] = "ClusterCoreDNS".into();
    forwarded["vnetDNSOverrides"]
        .as_array_mut()
        .unwrap()
        .push(zone("example.com", "ClusterCoreDNS"));
    forwarded["kubeDNSOverrides"] = json!([zone(".", "ClusterCoreDNS")]);
    let mut stale = dns.clone();
    stale["kubeDNSOverrides"][1]["serveStale"] = "Verify".into();
    stale["kubeDNSOverrides"][1]["protocol"] = "ForceTCP".into();
    stale["kubeDNSOverrides"][1]["forwardDestination"] = "VnetDNS".into();
    let rules = [
        (
            json!({"imageFamily": "Ubuntu2204", "fipsMode": "FIPS"}),
            vec![
                "spec: Invalid value: ",
                "FIPS is not yet supported for Ubuntu2204 or Ubuntu2404",
            ],
        ),
        (
            json!({"linuxOSConfig": {"swapFileSize": "1500Mi"}}),
            vec![
                "kubelet.failSwapOn must be set to false when linuxOSConfig.swapFileSize is specified",
            ],
        ),
        (
            json!({"linuxOSConfig": {"sysctls": {"netCoreWmemDefault": 300000, "netCoreWmemMax": 212992,
                                                 "netIPv4NeighDefaultGcThresh2": 2000,
                                                 "netIPv4NeighDefaultGcThresh3": 1500,
                                                 "netIPv4IPLocalPortRange": "61000 32000"}}}),
            vec![
                "spec.linuxOSConfig.sysctls: Invalid value: ",
                "netCoreWmemDefault must be <= netCoreWmemMax",
                "netIPv4NeighDefaultGcThresh2 must be <= netIPv4NeighDefaultGcThresh3",
                "netIPv4IPLocalPortRange first port must be in [1024, 60999]",
                "netIPv4IPLocalPortRange last port must be in [32768, 65535]",
                "netIPv4IPLocalPortRange first port must be <= last port",
            ],
        ),
        (
            json!({"localDNS": forwarded}),
            vec![
                "spec.localDNS.vnetDNSOverrides: Invalid value: ",
                "root zone '.' cannot be forwarded to ClusterCoreDNS from vnetDNSOverrides",
                "external domains cannot be forwarded to ClusterCoreDNS from vnetDNSOverrides",
                "spec.localDNS.kubeDNSOverrides: Invalid value: ",
                "must contain required zones '.' and 'cluster.local'",
            ],
        ),
        (
            json!({"localDNS": stale}),
            vec![
                "spec.localDNS.kubeDNSOverrides[1]: Invalid value: ",
                "'cluster.local' cannot be forwarded to VnetDNS",
                "serveStale Verify cannot be used with protocol ForceTCP",
            ],
        ),
        (
            json!({"tags": {"a<b": "x", "c\\d": "y", "long": "v".repeat(257)}}),
            vec![
                "spec.tags: Invalid value: ",
                "tags keys must not contain '<', '>', '%', '&', or '?'",
                "tags keys must not contain '\\'",
                "tags values must be less than 256 characters",
            ],
        ),
    ];
    for (spec, expected) in rules {
        let found: Vec<String> = validate(
            "karpenter.azure.com",
            "AKSNodeClass",
            &node_class(spec.clone()),
            None,
            served(),
        )
        .iter()
        .map(|e| e.message())
        .collect();
        for part in expected {
            assert!(
                found.iter().any(|m| m.contains(part)),
                "{spec}: expected {part:?}, got {found:?}"
            );
        }
    }
}
