//! One selected manifest as one member cluster receives it (the work generator's
//! `applyOverrides`).

use flotilla_api::placement::overrides::{JsonPatchOp, JsonPatchOverride, OverrideType};
use flotilla_apimachinery::patch::{PatchError, json_patch};
use serde_json::{Value, json};

use super::ClusterView;
use super::applicable::ApplicableOverrides;
use super::error::{OverrideError, OverrideKind, Problem};
use super::source::ResourceId;
use super::variables::substitute;

/// What a cluster receives of one manifest.
#[derive(Clone, Debug, PartialEq)]
pub enum Rendered {
    /// The manifest, every matching JSON patch rule applied.
    Manifest(Value),
    /// A `Delete` rule keeps the manifest off the cluster.
    Deleted(Deleted),
}

/// The `Delete` rule that keeps a manifest off a cluster (the first one, in application order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deleted {
    /// The kind of the override.
    pub kind: OverrideKind,
    /// The override snapshot's namespace (ResourceOverride snapshots only).
    pub namespace: Option<String>,
    /// The override snapshot's name.
    pub snapshot: String,
    /// Index of the rule in `policy.overrideRules`.
    pub rule: usize,
}

/// Renders `manifest` for `cluster` under the placement's applicable `overrides`.
///
/// The overrides that select the manifest apply in order — ClusterResourceOverrides by name,
/// then ResourceOverrides by namespace and name, so a ResourceOverride has the last word — and
/// within each, its rules in order; a rule applies when its cluster selector selects the
/// cluster. If any applying rule is a `Delete` rule, the manifest is not placed (whatever the
/// other rules say). Otherwise each applying rule's JSON patch operations run in order, their
/// values' variables filled in for the cluster.
pub fn render(
    manifest: &Value,
    cluster: ClusterView<'_>,
    overrides: &ApplicableOverrides<'_>,
) -> Result<Rendered, Box<OverrideError>> {
    let Some(id) = ResourceId::of(manifest) else {
        return Ok(Rendered::Manifest(manifest.clone()));
    };
    let mut patches = Vec::new();
    for source in overrides.sources().filter(|s| s.selects(&id)) {
        for (index, rule) in source.rules_for(cluster, Some(&id))? {
            if rule.override_type.unwrap_or_default() == OverrideType::Delete {
                return Ok(Rendered::Deleted(Deleted {
                    kind: source.kind(),
                    namespace: source.namespace().map(str::to_string),
                    snapshot: source.snapshot.to_string(),
                    rule: index,
                }));
            }
            patches.push((
                source,
                index,
                rule.json_patch_overrides.as_deref().unwrap_or(&[]),
            ));
        }
    }
    let mut rendered = manifest.clone();
    for (source, index, operations) in patches {
        for operation in operations {
            rendered = apply(&rendered, operation, cluster).map_err(|problem| {
                source.error(index, Some(&operation.path), Some(&id), problem)
            })?;
        }
    }
    Ok(Rendered::Manifest(rendered))
}

/// Applies one JSON patch operation, its value's variables filled in for `cluster`.
fn apply(
    target: &Value,
    operation: &JsonPatchOverride,
    cluster: ClusterView<'_>,
) -> Result<Value, Problem> {
    let op = match operation.op {
        JsonPatchOp::Add => "add",
        JsonPatchOp::Remove => "remove",
        JsonPatchOp::Replace => "replace",
    };
    let mut patch = json!({"op": op, "path": operation.path});
    if operation.op != JsonPatchOp::Remove {
        // An absent value is JSON null, as Go marshals an empty `apiextensionsv1.JSON`.
        let value = operation.value.as_ref().unwrap_or(&Value::Null);
        patch["value"] = substitute(value, cluster)?;
    }
    json_patch(target, &Value::Array(vec![patch])).map_err(|e| {
        Problem::PatchFailed(match e {
            PatchError::JsonPatchFailed { reason, .. } => {
                format!("{op} operation does not apply: {reason}")
            }
            other => other.to_string(),
        })
    })
}
