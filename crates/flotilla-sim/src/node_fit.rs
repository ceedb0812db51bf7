//! Whether a pod may run on a node regardless of resources: `nodeSelector`, required node
//! affinity, taints and tolerations, and cordoned nodes. Shared by the scheduler and the
//! DaemonSet controller.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Node, NodeSelectorRequirement, NodeSelectorTerm, PodSpec, Taint, Toleration,
};

/// The taint kube-scheduler treats a cordoned (`spec.unschedulable`) node as having.
pub const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";

/// Why a node cannot take a pod (before resources are considered), in kube-scheduler's
/// filter order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Misfit {
    /// The node is cordoned and the pod does not tolerate it.
    Unschedulable,
    /// The node has a `NoSchedule`/`NoExecute` taint the pod does not tolerate.
    UntoleratedTaint {
        /// Taint key.
        key: String,
        /// Taint value (may be empty).
        value: String,
    },
    /// The node does not match the pod's `nodeSelector` or required node affinity.
    Affinity,
}

impl Misfit {
    /// kube-scheduler's reason text for this misfit, as counted in `FailedScheduling`.
    pub fn reason(&self) -> String {
        match self {
            Misfit::Unschedulable => "node(s) were unschedulable".into(),
            Misfit::UntoleratedTaint { key, value } => {
                format!("node(s) had untolerated taint {{{key}: {value}}}")
            }
            Misfit::Affinity => "node(s) didn't match Pod's node affinity/selector".into(),
        }
    }
}

/// The first reason `node` cannot take a pod with `spec`, ignoring resources.
pub fn misfit(spec: &PodSpec, node: &Node) -> Option<Misfit> {
    let tolerations = spec.tolerations.as_deref().unwrap_or_default();
    let cordoned = node.spec.as_ref().and_then(|s| s.unschedulable) == Some(true);
    if cordoned {
        let taint = Taint {
            key: UNSCHEDULABLE_TAINT.into(),
            effect: "NoSchedule".into(),
            ..Default::default()
        };
        if !tolerations.iter().any(|t| tolerates(t, &taint)) {
            return Some(Misfit::Unschedulable);
        }
    }
    let taints = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_deref())
        .unwrap_or_default();
    if let Some(taint) = untolerated_taint(tolerations, taints) {
        return Some(Misfit::UntoleratedTaint {
            key: taint.key.clone(),
            value: taint.value.clone().unwrap_or_default(),
        });
    }
    (!matches_selector_and_affinity(spec, node)).then_some(Misfit::Affinity)
}

/// Whether `toleration` tolerates `taint` (`v1.Toleration.ToleratesTaint`).
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    if let Some(effect) = toleration.effect.as_deref().filter(|e| !e.is_empty())
        && effect != taint.effect
    {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or_default();
    if !key.is_empty() && key != taint.key {
        return false;
    }
    match toleration.operator.as_deref().unwrap_or("Equal") {
        "Exists" => true,
        "Equal" | "" => {
            !key.is_empty()
                && toleration.value.as_deref().unwrap_or_default()
                    == taint.value.as_deref().unwrap_or_default()
        }
        _ => false,
    }
}

/// The first `NoSchedule` or `NoExecute` taint no toleration tolerates.
pub fn untolerated_taint<'a>(tolerations: &[Toleration], taints: &'a [Taint]) -> Option<&'a Taint> {
    taints
        .iter()
        .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
        .find(|taint| !tolerations.iter().any(|t| tolerates(t, taint)))
}

/// Whether the node's labels satisfy the pod's `nodeSelector` and its required node affinity.
pub fn matches_selector_and_affinity(spec: &PodSpec, node: &Node) -> bool {
    let empty = BTreeMap::new();
    let labels = node.metadata.labels.as_ref().unwrap_or(&empty);
    let name = node.metadata.name.as_deref().unwrap_or_default();
    let selector_ok = spec
        .node_selector
        .iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    let required = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|na| {
            na.required_during_scheduling_ignored_during_execution
                .as_ref()
        });
    selector_ok
        && required.is_none_or(|selector| {
            selector
                .node_selector_terms
                .iter()
                .any(|term| matches_term(term, labels, name))
        })
}

/// A term matches when all of its requirements do; a term with none matches nothing.
fn matches_term(term: &NodeSelectorTerm, labels: &BTreeMap<String, String>, name: &str) -> bool {
    let expressions = term.match_expressions.as_deref().unwrap_or_default();
    let fields = term.match_fields.as_deref().unwrap_or_default();
    if expressions.is_empty() && fields.is_empty() {
        return false;
    }
    expressions
        .iter()
        .all(|r| matches_requirement(r, labels.get(&r.key).map(String::as_str)))
        && fields.iter().all(|r| {
            r.key == "metadata.name"
                && matches!(r.operator.as_str(), "In" | "NotIn")
                && matches_requirement(r, Some(name))
        })
}

/// One node selector requirement against the value of its key (`None` if the label is absent).
pub fn matches_requirement(req: &NodeSelectorRequirement, value: Option<&str>) -> bool {
    let values = req.values.as_deref().unwrap_or_default();
    let number = |s: &str| s.parse::<i64>().ok();
    match req.operator.as_str() {
        "In" => value.is_some_and(|v| values.iter().any(|x| x == v)),
        "NotIn" => value.is_none_or(|v| !values.iter().any(|x| x == v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" | "Lt" => {
            let (Some(have), [bound]) = (value.and_then(number), values) else {
                return false;
            };
            let Some(bound) = number(bound) else {
                return false;
            };
            if req.operator == "Gt" {
                have > bound
            } else {
                have < bound
            }
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{Affinity, NodeAffinity, NodeSelector, NodeSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn node(labels: &[(&str, &str)], taints: &[(&str, &str, &str)], cordoned: bool) -> Node {
        Node {
            metadata: ObjectMeta {
                name: Some("n1".into()),
                labels: Some(
                    labels
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect(),
                ),
                ..Default::default()
            },
            spec: Some(NodeSpec {
                unschedulable: cordoned.then_some(true),
                taints: Some(
                    taints
                        .iter()
                        .map(|(k, v, e)| Taint {
                            key: k.to_string(),
                            value: (!v.is_empty()).then(|| v.to_string()),
                            effect: e.to_string(),
                            ..Default::default()
                        })
                        .collect(),
                ),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn req(key: &str, op: &str, values: &[&str]) -> NodeSelectorRequirement {
        NodeSelectorRequirement {
            key: key.into(),
            operator: op.into(),
            values: (!values.is_empty()).then(|| values.iter().map(|v| v.to_string()).collect()),
        }
    }

    fn with_terms(terms: Vec<NodeSelectorTerm>) -> PodSpec {
        PodSpec {
            affinity: Some(Affinity {
                node_affinity: Some(NodeAffinity {
                    required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                        node_selector_terms: terms,
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn term(exprs: Vec<NodeSelectorRequirement>) -> NodeSelectorTerm {
        NodeSelectorTerm {
            match_expressions: Some(exprs),
            match_fields: None,
        }
    }

    fn toleration(key: &str, op: &str, value: &str, effect: &str) -> Toleration {
        let opt = |s: &str| (!s.is_empty()).then(|| s.to_string());
        Toleration {
            key: opt(key),
            operator: opt(op),
            value: opt(value),
            effect: opt(effect),
            toleration_seconds: None,
        }
    }

    #[test]
    fn requirement_operators() {
        let cases = [
            (req("k", "In", &["a", "b"]), Some("b"), true),
            (req("k", "In", &["a"]), Some("c"), false),
            (req("k", "In", &["a"]), None, false),
            (req("k", "NotIn", &["a"]), Some("c"), true),
            (req("k", "NotIn", &["a"]), Some("a"), false),
            (req("k", "NotIn", &["a"]), None, true),
            (req("k", "Exists", &[]), Some(""), true),
            (req("k", "Exists", &[]), None, false),
            (req("k", "DoesNotExist", &[]), None, true),
            (req("k", "DoesNotExist", &[]), Some("x"), false),
            (req("k", "Gt", &["3"]), Some("4"), true),
            (req("k", "Gt", &["3"]), Some("3"), false),
            (req("k", "Gt", &["3"]), Some("x"), false),
            (req("k", "Gt", &["3", "4"]), Some("9"), false),
            (req("k", "Lt", &["3"]), Some("-1"), true),
            (req("k", "Lt", &["3"]), None, false),
            (req("k", "Bogus", &[]), Some("x"), false),
        ];
        for (r, value, expected) in cases {
            assert_eq!(
                matches_requirement(&r, value),
                expected,
                "{r:?} on {value:?}"
            );
        }
    }

    #[test]
    fn terms_are_ored_and_expressions_anded() {
        let n = node(&[("zone", "z1"), ("size", "8")], &[], false);
        let cases = [
            (vec![term(vec![req("zone", "In", &["z1"])])], true),
            (
                vec![term(vec![
                    req("zone", "In", &["z1"]),
                    req("size", "Gt", &["16"]),
                ])],
                false,
            ),
            (
                vec![
                    term(vec![req("zone", "In", &["z2"])]),
                    term(vec![req("size", "Lt", &["16"])]),
                ],
                true,
            ),
            (vec![term(vec![])], false),
            (vec![], false),
            (
                vec![NodeSelectorTerm {
                    match_expressions: None,
                    match_fields: Some(vec![req("metadata.name", "In", &["n1"])]),
                }],
                true,
            ),
            (
                vec![NodeSelectorTerm {
                    match_expressions: None,
                    match_fields: Some(vec![req("metadata.name", "In", &["n2"])]),
                }],
                false,
            ),
        ];
        for (terms, expected) in cases {
            let spec = with_terms(terms.clone());
            assert_eq!(
                matches_selector_and_affinity(&spec, &n),
                expected,
                "{terms:?}"
            );
        }
        let mut spec = with_terms(vec![term(vec![req("zone", "Exists", &[])])]);
        spec.node_selector = Some([("size".to_string(), "4".to_string())].into());
        assert!(
            !matches_selector_and_affinity(&spec, &n),
            "selector ANDs with affinity"
        );
    }

    #[test]
    fn tolerations_match_taints() {
        let taint = Taint {
            key: "dedicated".into(),
            value: Some("gpu".into()),
            effect: "NoSchedule".into(),
            ..Default::default()
        };
        let cases = [
            (toleration("dedicated", "Equal", "gpu", "NoSchedule"), true),
            (toleration("dedicated", "", "gpu", ""), true),
            (toleration("dedicated", "Equal", "cpu", "NoSchedule"), false),
            (toleration("dedicated", "Exists", "", "NoSchedule"), true),
            (toleration("dedicated", "Exists", "", "NoExecute"), false),
            (toleration("", "Exists", "", ""), true),
            (toleration("", "Equal", "", ""), false),
            (toleration("other", "Exists", "", ""), false),
        ];
        for (t, expected) in cases {
            assert_eq!(tolerates(&t, &taint), expected, "{t:?}");
        }
    }

    #[test]
    fn misfits_follow_the_filter_order() {
        let plain = PodSpec::default();
        let cordoned = node(&[], &[("dedicated", "gpu", "NoSchedule")], true);
        assert_eq!(misfit(&plain, &cordoned), Some(Misfit::Unschedulable));
        let mut tolerant = plain.clone();
        tolerant.tolerations = Some(vec![toleration(
            UNSCHEDULABLE_TAINT,
            "Exists",
            "",
            "NoSchedule",
        )]);
        assert_eq!(
            misfit(&tolerant, &cordoned).map(|m| m.reason()),
            Some("node(s) had untolerated taint {dedicated: gpu}".to_string())
        );
        let prefer = node(&[], &[("soft", "", "PreferNoSchedule")], false);
        assert_eq!(
            misfit(&plain, &prefer),
            None,
            "PreferNoSchedule does not filter"
        );
        let mut picky = plain.clone();
        picky.node_selector = Some([("zone".to_string(), "z9".to_string())].into());
        assert_eq!(misfit(&picky, &prefer), Some(Misfit::Affinity));
    }
}
