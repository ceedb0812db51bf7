//! The AKSNodeClass status controller: the node image version and Kubernetes version a class
//! resolves to now, which new nodes run and existing nodes drift from.

use flotilla_api::conditions::{NewCondition, set_condition};
use flotilla_api::nodes::{AKSNodeClassStatus, ImageFamily};
use jiff::Timestamp;

use super::status_write;
use crate::actions::Plan;
use crate::reconcile::ClusterState;

/// The newest node image version the simulated cloud offers, which a class that names no
/// `imageVersion` runs.
pub const NEWEST_IMAGE_VERSION: &str = "202501.12.0";

/// The full node image name of `version` in `family` (the node's
/// `kubernetes.azure.com/node-image-version` label): `AKSUbuntu-2204gen2containerd-202501.12.0`.
pub fn image_name(family: Option<ImageFamily>, version: &str) -> String {
    let prefix = match family.unwrap_or_default() {
        ImageFamily::Ubuntu2204 => "AKSUbuntu-2204gen2containerd",
        ImageFamily::Ubuntu2404 => "AKSUbuntu-2404gen2containerd",
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
