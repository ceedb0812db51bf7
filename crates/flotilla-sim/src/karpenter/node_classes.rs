//! The AKSNodeClass status controller: the node image version and Kubernetes version a class
//! resolves to now, which new nodes run and existing nodes drift from.

use flotilla_api::conditions::{NewCondition, set_condition};
use flotilla_api::nodes::{AKSNodeClass, AKSNodeClassStatus, ImageFamily};
use jiff::Timestamp;

use super::status_write;
use crate::actions::Plan;
use crate::reconcile::ClusterState;

/// The newest node image version the simulated cloud offers, which a class that names no
/// `imageVersion` runs.
pub const NEWEST_IMAGE_VERSION: &str = "202501.12.0";

/// The full node image name of `version` in the family `class` names (the node's
/// `kubernetes.azure.com/node-image-version` label): `AKSUbuntu-2204gen2containerd-202501.12.0`.
/// `Ubuntu` resolves by the Kubernetes version in the class's status.
pub fn image_name(class: &AKSNodeClass, version: &str) -> String {
    let kubernetes_version = class
        .status
        .as_ref()
        .and_then(|s| s.kubernetes_version.as_deref())
        .unwrap_or_default();
    let family = class.spec.image_family.unwrap_or_default();
    let prefix = match family.resolve(kubernetes_version) {
        ImageFamily::Ubuntu2204 => "AKSUbuntu-2204gen2containerd",
        ImageFamily::Ubuntu | ImageFamily::Ubuntu2404 => "AKSUbuntu-2404gen2containerd",
        ImageFamily::AzureLinux => "AKSAzureLinux-V3gen2",
    };
    format!("{prefix}-{version}")
}

/// One pass over every node class at `now`, in a cluster running `kubernetes_version`.
pub fn reconcile(state: &ClusterState, kubernetes_version: &str, now: Timestamp) -> Plan {
    let mut plan = Plan::default();
    for class in &state.node_classes {
        let mut status: AKSNodeClassStatus = class.status.clone().unwrap_or_default();
        status.image_version = Some(
            class
                .spec
                .image_version
                .clone()
                .unwrap_or_else(|| NEWEST_IMAGE_VERSION.to_string()),
        );
        status.kubernetes_version = Some(kubernetes_version.trim_start_matches('v').to_string());
        set_condition(
            &mut status.conditions,
            NewCondition {
                type_: "Ready",
                status: "True",
                reason: "Ready",
                message: String::new(),
                observed_generation: class.metadata.generation,
            },
            now,
        );
        if class.status.as_ref() != Some(&status) {
            plan.push(status_write(class, &status));
        }
    }
    plan
}
