//! Pods stamped from a workload's pod template, and the template hash that names a revision.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use crate::ids::fnv1a32;

/// The label carrying a Deployment revision's template hash.
pub const POD_TEMPLATE_HASH: &str = "pod-template-hash";

/// Letters Kubernetes' `rand.SafeEncodeString` maps bytes to (no vowels, no confusables).
const SAFE_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// `rand.SafeEncodeString`: each byte mapped into [`SAFE_ALPHABET`].
fn safe_encode(text: &str) -> String {
    text.bytes()
        .map(|b| SAFE_ALPHABET[usize::from(b) % SAFE_ALPHABET.len()] as char)
        .collect()
}

/// The hash of a pod template, as `controller.ComputeHash` shapes it: FNV-32a of the template,
/// its decimal digits safe-encoded (e.g. `7d9f8c6b5`).
pub fn template_hash(template: &PodTemplateSpec) -> String {
    let bytes = serde_json::to_vec(template).unwrap_or_default();
    safe_encode(&fnv1a32(&bytes).to_string())
}

/// How a new pod is named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PodName {
    /// The API server appends 5 random characters to this prefix.
    Generate(String),
    /// Exactly this name.
    Fixed(String),
}

/// A pod from `template` in `namespace`, owned by `owner`, with `labels` added to the
/// template's.
pub fn stamp(
    template: &PodTemplateSpec,
    namespace: &str,
    name: PodName,
    owner: OwnerReference,
    labels: &[(&str, &str)],
) -> Pod {
    let source = template.metadata.clone().unwrap_or_default();
    let mut all_labels: BTreeMap<String, String> = source.labels.unwrap_or_default();
    for (k, v) in labels {
        all_labels.insert((*k).to_string(), (*v).to_string());
    }
    let (name, generate_name) = match name {
        PodName::Generate(prefix) => (None, Some(prefix)),
        PodName::Fixed(name) => (Some(name), None),
    };
    Pod {
        metadata: ObjectMeta {
            name,
            generate_name,
            namespace: Some(namespace.to_string()),
            labels: (!all_labels.is_empty()).then_some(all_labels),
            annotations: source.annotations,
            owner_references: Some(vec![owner]),
            ..Default::default()
        },
        spec: template.spec.clone(),
        status: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{Container, PodSpec};

    fn template(image: &str) -> PodTemplateSpec {
        PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: Some([("app".to_string(), "web".to_string())].into()),
                ..Default::default()
            }),
            spec: Some(PodSpec {
                containers: vec![Container {
                    name: "web".into(),
                    image: Some(image.into()),
                    ..Default::default()
                }],
                ..Default::default()
            }),
        }
    }

    #[test]
    fn hash_is_stable_safe_and_changes_with_the_template() {
        let a = template_hash(&template("nginx:1.27"));
        assert_eq!(a, template_hash(&template("nginx:1.27")));
        assert_ne!(a, template_hash(&template("nginx:1.28")));
        assert!(!a.is_empty() && a.len() <= 10);
        assert!(a.bytes().all(|b| SAFE_ALPHABET.contains(&b)), "{a}");
    }

    #[test]
    fn stamped_pods_carry_labels_owner_and_spec() {
        let owner = OwnerReference {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            name: "web-abc".into(),
            uid: "u1".into(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        };
        let pod = stamp(
            &template("nginx"),
            "shop",
            PodName::Generate("web-abc-".into()),
            owner.clone(),
            &[(POD_TEMPLATE_HASH, "abc")],
        );
        assert_eq!(pod.metadata.generate_name.as_deref(), Some("web-abc-"));
        assert_eq!(pod.metadata.name, None);
        assert_eq!(pod.metadata.namespace.as_deref(), Some("shop"));
        let labels = pod.metadata.labels.unwrap();
        assert_eq!(labels["app"], "web");
        assert_eq!(labels[POD_TEMPLATE_HASH], "abc");
        assert_eq!(pod.metadata.owner_references, Some(vec![owner.clone()]));
        assert_eq!(
            pod.spec.unwrap().containers[0].image.as_deref(),
            Some("nginx")
        );
        let fixed = stamp(
            &template("x"),
            "a",
            PodName::Fixed("db-0".into()),
            owner,
            &[],
        );
        assert_eq!(fixed.metadata.name.as_deref(), Some("db-0"));
    }
}
