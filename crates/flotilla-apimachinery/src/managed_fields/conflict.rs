//! Apply conflicts and kube-apiserver's rendering of them.

use std::fmt;

use serde_json::{Value, json};

use super::entry::Operation;

/// A field an apply would change that another manager owns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyConflict {
    /// The other manager's name.
    pub manager: String,
    /// How the other manager wrote the field.
    pub operation: Operation,
    /// The API version of the other manager's entry.
    pub api_version: String,
    /// The subresource of the other manager's entry, if any.
    pub subresource: Option<String>,
    /// The conflicting field, e.g. `.spec.replicas`.
    pub field: String,
}

impl ApplyConflict {
    /// The manager as kube-apiserver names it: `"kubectl"` for an applier,
    /// `"kube-controller-manager" using apps/v1` for an updater, with
    /// ` with subresource "status"` when relevant.
    pub fn manager_description(&self) -> String {
        let mut description = Value::from(self.manager.as_str()).to_string();
        if let Some(subresource) = &self.subresource {
            description.push_str(&format!(
                " with subresource {}",
                Value::from(subresource.as_str())
            ));
        }
        if self.operation == Operation::Update {
            description.push_str(&format!(" using {}", self.api_version));
        }
        description
    }
}

/// The conflicts that made a server-side apply fail (HTTP 409, reason `Conflict`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.message())]
pub struct ApplyConflicts(pub Vec<ApplyConflict>);

impl ApplyConflicts {
    /// kube-apiserver's `Status.message`, e.g. `Apply failed with 1 conflict: conflict with
    /// "kubectl-client-side-apply" using apps/v1: .spec.replicas`; several conflicts are listed
    /// per manager (managers sorted), one `- <field>` line each.
    pub fn message(&self) -> String {
        if let [conflict] = self.0.as_slice() {
            return format!(
                "Apply failed with 1 conflict: conflict with {}: {}",
                conflict.manager_description(),
                conflict.field
            );
        }
        let mut by_manager: Vec<&ApplyConflict> = self.0.iter().collect();
        by_manager.sort_by(|a, b| {
            (&a.manager, a.operation, &a.api_version, &a.subresource).cmp(&(
                &b.manager,
                b.operation,
                &b.api_version,
                &b.subresource,
            ))
        });
        let mut lines: Vec<String> = Vec::new();
        let mut current: Option<String> = None;
        for conflict in by_manager {
            let manager = conflict.manager_description();
            if current.as_ref() != Some(&manager) {
                lines.push(format!("conflicts with {manager}:"));
                current = Some(manager);
            }
            lines.push(format!("- {}", conflict.field));
        }
        format!(
            "Apply failed with {} conflicts: {}",
            self.0.len(),
            lines.join("\n")
        )
    }

    /// `Status.details.causes`: one `FieldManagerConflict` cause per conflict.
    pub fn causes(&self) -> Vec<Value> {
        self.0
            .iter()
            .map(|conflict| {
                json!({
                    "reason": "FieldManagerConflict",
                    "message": format!("conflict with {}", conflict.manager_description()),
                    "field": conflict.field,
                })
            })
            .collect()
    }
}

impl fmt::Display for ApplyConflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "conflict with {}: {}",
            self.manager_description(),
            self.field
        )
    }
}
