//! One RBAC `PolicyRule` and whether it allows a request.

use serde::{Deserialize, Serialize};

use super::attributes::{Attributes, ResourceAttributes};

/// A `rbac.authorization.k8s.io/v1` PolicyRule.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRule {
    /// Verbs (`get`, `list`, `watch`, `create`, `update`, `patch`, `delete`,
    /// `deletecollection`, or `*`).
    #[serde(default)]
    pub verbs: Vec<String>,
    /// API groups (`""` for core, `*` for all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub api_groups: Vec<String>,
    /// Resources, `resource/subresource`, `*/subresource` or `*`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    /// Object names the rule is limited to; empty means all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_names: Vec<String>,
    /// Non-resource paths (`/metrics`, `/apis/*`, `*`).
    #[serde(
        default,
        rename = "nonResourceURLs",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub non_resource_urls: Vec<String>,
}

impl PolicyRule {
    /// Whether this rule allows the request described by `attrs`.
    pub fn allows(&self, attrs: &Attributes) -> bool {
        if !matches_verb(&self.verbs, attrs.verb()) {
            return false;
        }
        match attrs {
            Attributes::Resource(r) => self.allows_resource(r),
            Attributes::NonResource { path, .. } => self
                .non_resource_urls
                .iter()
                .any(|url| matches_path(url, path)),
        }
    }

    fn allows_resource(&self, r: &ResourceAttributes) -> bool {
        let group = self.api_groups.iter().any(|g| g == "*" || *g == r.group);
        let resource = self.resources.iter().any(|entry| {
            entry == "*"
                || match &r.subresource {
                    None => *entry == r.resource,
                    Some(sub) => {
                        entry.strip_prefix("*/") == Some(sub.as_str())
                            || entry.split_once('/') == Some((r.resource.as_str(), sub.as_str()))
                    }
                }
        });
        let name = self.resource_names.is_empty()
            || r.name
                .as_deref()
                .is_some_and(|n| self.resource_names.iter().any(|allowed| allowed == n));
        group && resource && name
    }
}

fn matches_verb(verbs: &[String], verb: &str) -> bool {
    verbs.iter().any(|v| v == "*" || v == verb)
}

/// kube's non-resource URL match: exact, `*`, or a trailing-`*` prefix.
fn matches_path(rule: &str, path: &str) -> bool {
    if rule == "*" || rule == path {
        return true;
    }
    rule.strip_suffix('*')
        .is_some_and(|prefix| path.starts_with(prefix))
}
