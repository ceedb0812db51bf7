//! The AKSNodeClass status controller: the node image version and Kubernetes version a class
//! resolves to now, which new nodes run and existing nodes drift from, and whether its nodes
//! run the node-local DNS proxy; and how a class shapes its pools' instance types.

use std::collections::BTreeMap;

use flotilla_api::conditions::{NewCondition, set_condition};
use flotilla_api::nodes::{
    AKSNodeClass, AKSNodeClassStatus, ImageFamily, LocalDnsMode, LocalDnsState,
};
use flotilla_nodes::scheduling::{InstanceType, labels};
use jiff::Timestamp;

use super::status_write;
use super::view::View;
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
        status.local_dns_state = class.spec.local_dns.as_ref().map(|dns| {
            // Once `Preferred` enabled the proxy it stays enabled while the mode is unchanged,
            // as the AKS provider keeps it (nodes are not churned by a version read).
            let kept = dns.mode == LocalDnsMode::Preferred
                && class.status.as_ref().and_then(|s| s.local_dns_state)
                    == Some(LocalDnsState::Enabled);
            if kept {
                LocalDnsState::Enabled
            } else {
                dns.mode.resolve(kubernetes_version)
            }
        });
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

/// The cloud's instance types as the pools' node classes shape them, as the AKS provider
/// does: a class's `maxPods` gives its pools every type with that many pods per node (and the
/// memory the kubelet reserves for them) in place of the standard shape; a class that
/// explicitly enables artifact streaming gets no arm64 types. The pools' own requirements,
/// and so their NodeClaims, stay as written.
pub fn shape(
    mut instance_types: Vec<InstanceType>,
    view: &View<'_>,
    region: &str,
) -> Vec<InstanceType> {
    let mut by_max_pods: BTreeMap<u32, Vec<&str>> = BTreeMap::new();
    let mut streaming: Vec<&str> = Vec::new();
    for (name, pool) in &view.pools {
        let Ok(class) = view.class_of(pool) else {
            continue;
        };
        if let Some(max_pods) = class.spec.max_pods.and_then(|m| u32::try_from(m).ok()) {
            by_max_pods.entry(max_pods).or_default().push(*name);
        }
        if class.spec.artifact_streaming_enabled() {
            streaming.push(*name);
        }
    }
    let reshaped: Vec<&str> = by_max_pods.values().flatten().copied().collect();
    if !reshaped.is_empty() {
        for it in &mut instance_types {
            it.exclude_pools(&reshaped);
        }
    }
    for (max_pods, pools) in &by_max_pods {
        instance_types.extend(
            super::cloud::instance_types_with_max_pods(region, *max_pods)
                .into_iter()
                .map(|mut it| {
                    it.only_for_pools(pools);
                    it
                }),
        );
    }
    if !streaming.is_empty() {
        for it in instance_types.iter_mut().filter(|it| {
            it.requirements
                .get(labels::ARCH)
                .is_some_and(|a| a.has("arm64"))
        }) {
            it.exclude_pools(&streaming);
        }
    }
    instance_types
}
