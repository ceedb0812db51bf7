//! The checks of `MemberCluster`, as `validation::member_cluster` applies them.

use serde_json::json;

use super::{
    Placed, QUALIFIED_NAME_MAX, at, invalid, label_value, longest, metadata_name, qualified_name,
    required, schema, unique_by,
};
use crate::cluster::member_cluster::MAX_MEMBER_NAME;

/// The checks of a MemberCluster.
pub(super) fn rules() -> Vec<Placed> {
    vec![
        at(
            "",
            invalid(
                "self.metadata.name.matches(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",
                ".metadata.name",
                "a member cluster name must be a DNS-1123 label: lower case alphanumeric \
                 characters or '-', starting and ending with an alphanumeric character \
                 (e.g. 'member-1', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            ),
        ),
        metadata_name(json!({"maxLength": MAX_MEMBER_NAME})),
        at(
            "spec.identity",
            required(
                "!has(self.kind) || self.kind != 'ServiceAccount' || (has(self.namespace) && self.namespace != '')",
                ".namespace",
                "must be set for a ServiceAccount",
            ),
        ),
        schema(
            "spec.identity.kind",
            json!({"enum": ["Group", "ServiceAccount", "User"]}),
        ),
        at(
            "spec.taints[]",
            invalid(
                &qualified_name("self.key"),
                ".key",
                "must be a qualified name",
            ),
        ),
        at(
            "spec.taints[]",
            invalid(
                &format!("!has(self.value) || {}", label_value("self.value")),
                ".value",
                "must be a valid label value",
            ),
        ),
        longest("spec.taints[].key", QUALIFIED_NAME_MAX),
        longest("spec.taints[].value", 253),
        unique_by("spec.taints", &["key", "effect"]),
    ]
}
