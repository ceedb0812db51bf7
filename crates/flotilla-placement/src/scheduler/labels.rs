//! Label selectors of cluster selector terms, compiled once per cycle and matched against
//! `MemberCluster` labels.
//!
//! Parsing and validation are `flotilla_apimachinery::selector`'s (kube's
//! `LabelSelectorAsSelector` rules); matching runs on the cluster's label map directly, with
//! the same semantics as [`Requirement::matches`], so that no per-cluster JSON map is built.

use std::collections::BTreeMap;
use std::fmt;

use flotilla_api::cluster::MemberCluster;
use flotilla_apimachinery::selector::{
    LabelSelector, Operator, Requirement, from_label_selector_json,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector as ApiLabelSelector;

use super::cluster_labels;

/// A compiled `metav1.LabelSelector` with the text of each requirement, or why it is invalid.
pub(crate) struct LabelMatcher {
    selector: Result<(LabelSelector, Vec<String>), String>,
}

/// Why a cluster's labels fail a selector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LabelMismatch<'a> {
    /// The selector itself is invalid, so it matches no cluster.
    Invalid(&'a str),
    /// A requirement does not hold for the cluster's labels.
    Unmet {
        /// The requirement.
        requirement: &'a Requirement,
        /// The requirement as `kubectl -l` would write it.
        text: &'a str,
        /// The cluster's value of the requirement's key, if it has the label.
        actual: Option<&'a str>,
    },
}

impl LabelMatcher {
    /// Compiles `selector`.
    pub fn new(selector: &ApiLabelSelector) -> Self {
        let selector = serde_json::to_value(selector)
            .map_err(|e| e.to_string())
            .and_then(|json| {
                from_label_selector_json(&json).map_err(|errors| {
                    errors
                        .iter()
                        .map(|e| e.message())
                        .collect::<Vec<_>>()
                        .join("; ")
                })
            })
            .map(|selector| {
                let texts = selector
                    .requirements()
                    .iter()
                    .map(|r| r.to_string())
                    .collect();
                (selector, texts)
            });
        Self { selector }
    }

    /// `Err` with why the selector is invalid (an invalid selector matches no cluster).
    pub fn validity(&self) -> Result<(), &str> {
        self.selector.as_ref().map(|_| ()).map_err(String::as_str)
    }

    /// Whether `cluster`'s labels match.
    pub fn matches(&self, cluster: &MemberCluster) -> bool {
        self.mismatch(cluster_labels(cluster)).is_none()
    }

    /// `None` if `labels` match; otherwise the first requirement (in key order) they fail.
    pub fn mismatch<'a>(
        &'a self,
        labels: &'a BTreeMap<String, String>,
    ) -> Option<LabelMismatch<'a>> {
        let (selector, texts) = match &self.selector {
            Ok(compiled) => compiled,
            Err(message) => return Some(LabelMismatch::Invalid(message)),
        };
        selector
            .requirements()
            .iter()
            .zip(texts)
            .find_map(|(requirement, text)| {
                let actual = labels.get(requirement.key()).map(String::as_str);
                (!holds(requirement, actual)).then_some(LabelMismatch::Unmet {
                    requirement,
                    text,
                    actual,
                })
            })
    }
}

/// Whether `requirement` holds for a cluster whose value of its key is `actual`.
fn holds(requirement: &Requirement, actual: Option<&str>) -> bool {
    let listed = |value: &str| requirement.values().iter().any(|v| v == value);
    match requirement.operator() {
        Operator::In | Operator::Equals | Operator::DoubleEquals => actual.is_some_and(listed),
        Operator::NotIn | Operator::NotEquals => actual.is_none_or(|a| !listed(a)),
        Operator::Exists => actual.is_some(),
        Operator::DoesNotExist => actual.is_none(),
        Operator::GreaterThan | Operator::LessThan => {
            let (Some(actual), [wanted]) = (actual, requirement.values()) else {
                return false;
            };
            match (actual.parse::<i64>(), wanted.parse::<i64>()) {
                (Ok(actual), Ok(wanted)) if requirement.operator() == Operator::GreaterThan => {
                    actual > wanted
                }
                (Ok(actual), Ok(wanted)) => actual < wanted,
                _ => false,
            }
        }
    }
}

impl fmt::Display for LabelMismatch<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LabelMismatch::Invalid(message) => write!(f, "label selector is invalid: {message}"),
            LabelMismatch::Unmet {
                requirement,
                text,
                actual: Some(value),
            } => write!(
                f,
                "label requirement {text} is not met ({}=\"{value}\")",
                requirement.key()
            ),
            LabelMismatch::Unmet {
                requirement,
                text,
                actual: None,
            } => write!(
                f,
                "label requirement {text} is not met (no {} label)",
                requirement.key()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn matcher(selector: serde_json::Value) -> LabelMatcher {
        LabelMatcher::new(&serde_json::from_value(selector).unwrap())
    }

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn operators_match_like_kubernetes() {
        let east = labels(&[("region", "east"), ("tier", "1")]);
        let none = labels(&[]);
        let cases = [
            (json!({"matchLabels": {"region": "east"}}), true, false),
            (
                json!({"matchExpressions": [{"key": "region", "operator": "In", "values": ["east", "west"]}]}),
                true,
                false,
            ),
            (
                json!({"matchExpressions": [{"key": "region", "operator": "NotIn", "values": ["east"]}]}),
                false,
                true,
            ),
            (
                json!({"matchExpressions": [{"key": "region", "operator": "Exists"}]}),
                true,
                false,
            ),
            (
                json!({"matchExpressions": [{"key": "region", "operator": "DoesNotExist"}]}),
                false,
                true,
            ),
            (json!({}), true, true),
        ];
        for (selector, on_east, on_none) in cases {
            let m = matcher(selector.clone());
            assert_eq!(m.mismatch(&east).is_none(), on_east, "{selector} on east");
            assert_eq!(m.mismatch(&none).is_none(), on_none, "{selector} on none");
        }
    }

    #[test]
    fn mismatches_explain_themselves() {
        let m = matcher(json!({"matchLabels": {"region": "east", "tier": "1"}}));
        let west = labels(&[("region", "west"), ("tier", "1")]);
        assert_eq!(
            m.mismatch(&west).unwrap().to_string(),
            r#"label requirement region=east is not met (region="west")"#
        );
        assert_eq!(
            m.mismatch(&labels(&[("region", "east")]))
                .unwrap()
                .to_string(),
            "label requirement tier=1 is not met (no tier label)"
        );
        let bad = matcher(json!({"matchExpressions": [{"key": "region", "operator": "Near"}]}));
        let text = bad.mismatch(&west).unwrap().to_string();
        assert!(text.starts_with("label selector is invalid: "), "{text}");
    }
}
