//! A NodeClaim's life in the simulated cloud, one pass at a time (reference §1, §5, §6):
//!
//! - **launch**: the cheapest compatible offering is bought; the claim gets its provider ID,
//!   image, capacity and the launch's labels (`Launched`);
//! - **boot**: [`BOOT_DELAY`] later the machine's kubelet creates its Node, tainted
//!   `karpenter.sh/unregistered`;
//! - **registration**: the node gets the claim's labels, the termination finalizer and the
//!   claim as owner, and loses the unregistered taint (`Registered`);
//! - **initialization**: [`STARTUP_DELAY`] later the node's start-up agents have removed its
//!   startup taints and it is labelled `karpenter.sh/initialized` (`Initialized`, `Ready`);
//! - while it runs: `lastPodEventTime`, `Consolidatable`, `Drifted`, and expiration (forceful:
//!   the claim is deleted whatever the budgets say);
//! - **finalization** once deleted: the termination time is stamped, the node deleted (its
//!   own finalizer drains it), and the finalizer released when the node is gone.

use std::collections::BTreeMap;

use flotilla_api::conditions::{NewCondition, find, is_true, set_condition};
use flotilla_api::nodes::{
    INITIALIZED_LABEL, NodeClaim, NodeClaimStatus, NodePool, REGISTERED_LABEL,
    TERMINATION_FINALIZER, TERMINATION_TIMESTAMP_ANNOTATION, UNREGISTERED_TAINT,
};
use flotilla_apimachinery::go_duration;
use flotilla_nodes::drift::{DriftContext, drifted, restamp};
use flotilla_nodes::expiration::{expired, expires_at};
use flotilla_nodes::scheduling::from_api;
use flotilla_nodes::scheduling::labels;
use flotilla_nodes::termination::termination_time;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Node, Taint};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};

use super::cloud::{self, Launch};
use super::disruption::Marks;
use super::memory::Memory;
use super::view::View;
use super::{COMPONENT, Context, metrics, reference};
use crate::actions::{Action, EventNote, Plan};
use crate::ids::fnv1a64;
use crate::node_pool::{Machine, machine_node};

/// From launch to the machine's kubelet registering its Node.
pub const BOOT_DELAY: SignedDuration = SignedDuration::from_secs(20);
/// From registration to the node's start-up agents removing its startup taints.
pub const STARTUP_DELAY: SignedDuration = SignedDuration::from_secs(5);

/// The claim's condition `type_`'s transition time, if the condition is `True`.
pub fn true_since(claim: &NodeClaim, type_: &str) -> Option<Timestamp> {
    let conditions = &claim.status.as_ref()?.conditions;
    find(conditions, type_)
        .filter(|c| c.status == "True")
        .map(|c| c.last_transition_time.0)
}

/// Whether the claim's condition `type_` is `True`.
pub fn claim_is(claim: &NodeClaim, type_: &str) -> bool {
    claim
        .status
        .as_ref()
        .is_some_and(|s| is_true(&s.conditions, type_))
}

/// Sets a condition on a status being built.
pub(super) fn set(
    status: &mut NodeClaimStatus,
    type_: &str,
    value: &str,
    reason: &str,
    message: String,
    now: Timestamp,
) {
    set_condition(
        &mut status.conditions,
        NewCondition {
            type_,
            status: value,
            reason,
            message,
            observed_generation: None,
        },
        now,
    );
}

/// Drops a condition from a status being built.
fn clear(status: &mut NodeClaimStatus, type_: &str) {
    status.conditions.retain(|c| c.type_ != type_);
}

/// A resource list of `cpu`, `memory` and `pods` from the scheduler's resources.
fn quantities(r: &flotilla_nodes::scheduling::Resources) -> BTreeMap<String, Quantity> {
    let cpu = u64::try_from(r.cpu_millis).unwrap_or(0);
    let memory = u64::try_from(r.memory_bytes).unwrap_or(0);
    [
        ("cpu", flotilla_apimachinery::quantity::format_cpu(cpu)),
        (
            "memory",
            flotilla_apimachinery::quantity::format_memory(memory),
        ),
        ("pods", r.pods.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), Quantity(v)))
    .collect()
}

/// The provider ID of a claim's machine.
fn machine_provider_id(ctx: &Context<'_>, node: &str) -> String {
    format!("sim://{}/{node}", ctx.member)
}

/// The node name of a claim's machine, as AKS names Karpenter's nodes.
pub fn machine_name(claim: &NodeClaim) -> String {
    format!("aks-{}", claim.metadata.name.as_deref().unwrap_or_default())
}

/// The image the claim's node class resolves to now.
fn wanted_image(view: &View<'_>, claim: &NodeClaim) -> Option<String> {
    let class = view.classes.get(claim.spec.node_class_ref.name.as_str())?;
    class
        .status
        .as_ref()
        .and_then(|s| s.image_version.clone())
        .or_else(|| class.spec.image_version.clone())
}

/// `claim` carrying the labels of its launch.
fn labelled(claim: &NodeClaim, launch: &Launch<'_>) -> NodeClaim {
    let mut out = claim.clone();
    out.metadata
        .labels
        .get_or_insert_default()
        .extend(launch.labels(claim));
    out
}

/// Launches `claim`: labels and status, or a warning and its deletion.
fn launch(
    claim: &NodeClaim,
    view: &View<'_>,
    ctx: &Context<'_>,
    memory: &mut Memory,
    status: &mut NodeClaimStatus,
    plan: &mut Plan,
    now: Timestamp,
) {
    let chosen: Result<Launch<'_>, String> = cloud::launch(claim, ctx.cloud);
    match chosen {
        Ok(launch) => {
            plan.push(Action::update(&labelled(claim, &launch)));
            status.provider_id = Some(machine_provider_id(ctx, &machine_name(claim)));
            status.image_id = wanted_image(view, claim);
            status.capacity = quantities(&launch.instance_type.capacity);
            status.allocatable = quantities(&launch.instance_type.allocatable());
            let what = format!(
                "{} {} in {} at ${:.4}/h",
                launch.offering.capacity_type.label(),
                launch.instance_type.name,
                launch.offering.zone,
                launch.offering.price
            );
            set(
                status,
                "Launched",
                "True",
                "Launched",
                format!("launched {what}"),
                now,
            );
            for (type_, reason, message) in [
                (
                    "Registered",
                    "NodeNotFound",
                    "Node not registered with cluster",
                ),
                (
                    "Initialized",
                    "NodeNotFound",
                    "Node not registered with cluster",
                ),
                ("Ready", "NotLaunched", "waiting for the node to register"),
            ] {
                set(status, type_, "Unknown", reason, message.into(), now);
            }
            plan.push(Action::Record(EventNote::normal(
                COMPONENT,
                reference(claim),
                "Launched",
                format!("Launched {what}"),
            )));
        }
        Err(why) => {
            memory
                .launch_failures
                .insert(pool_of(claim).to_string(), (now, why.clone()));
            plan.push(Action::Record(EventNote::warning(
                COMPONENT,
                reference(claim),
                "LaunchFailed",
                why,
            )));
            plan.push(Action::Delete(reference(claim)));
        }
    }
}

/// The Node the claim's machine registers: the claim's labels, the pool's taints and startup
/// taints, and `karpenter.sh/unregistered` until Karpenter registers it.
fn booted_node(
    claim: &NodeClaim,
    view: &View<'_>,
    ctx: &Context<'_>,
    now: Timestamp,
) -> Option<Node> {
    let labels = claim.metadata.labels.clone().unwrap_or_default();
    let mut instance = cloud::catalog_entry(labels.get(labels::INSTANCE_TYPE)?)?;
    let name = machine_name(claim);
    let version = claim.status.as_ref()?.image_id.clone().unwrap_or_default();
    // A claim launches only with its class (it is not Launched without one).
    let class = view.classes.get(claim.spec.node_class_ref.name.as_str())?;
    if let Some(max_pods) = class.spec.max_pods.and_then(|m| u32::try_from(m).ok()) {
        instance.pods = max_pods;
    }
    let image = super::node_classes::image_name(class, &version);
    let mut node = machine_node(
        &Machine {
            member: ctx.member,
            name: name.clone(),
            instance: &instance,
            region: ctx.region,
            zone: labels.get(labels::ZONE).map_or("", String::as_str),
            ordinal: 1024 + fnv1a64(name.as_bytes()) as u32 % 60_000,
            image: &image,
            kubernetes_version: ctx.kubernetes_version,
            capacity_type: labels
                .get(labels::CAPACITY_TYPE)
                .map_or("on-demand", String::as_str),
            labels: labels.clone(),
        },
        now,
    );
    let spec = node.spec.get_or_insert_default();
    spec.provider_id = Some(machine_provider_id(ctx, &name));
    let mut taints: Vec<Taint> = claim.spec.taints.clone();
    taints.extend(claim.spec.startup_taints.iter().cloned());
    taints.push(Taint {
        key: UNREGISTERED_TAINT.into(),
        effect: "NoExecute".into(),
        ..Default::default()
    });
    spec.taints = Some(taints);
    Some(node)
}

/// Registers `node` for `claim`: the claim's labels, the finalizer, the claim as owner, and
/// no unregistered taint.
fn register(claim: &NodeClaim, node: &Node) -> Node {
    let mut out = node.clone();
    let meta = &mut out.metadata;
    let labels = meta.labels.get_or_insert_default();
    labels.extend(claim.metadata.labels.clone().unwrap_or_default());
    labels.insert(REGISTERED_LABEL.into(), "true".into());
    let finalizers = meta.finalizers.get_or_insert_default();
    if !finalizers.iter().any(|f| f == TERMINATION_FINALIZER) {
        finalizers.push(TERMINATION_FINALIZER.into());
    }
    meta.owner_references = Some(vec![OwnerReference {
        api_version: "karpenter.sh/v1".into(),
        kind: "NodeClaim".into(),
        name: claim.metadata.name.clone().unwrap_or_default(),
        uid: claim.metadata.uid.clone().unwrap_or_default(),
        block_owner_deletion: Some(true),
        controller: None,
    }]);
    if let Some(taints) = out.spec.as_mut().and_then(|s| s.taints.as_mut()) {
        taints.retain(|t| t.key != UNREGISTERED_TAINT);
    }
    out
}

/// Whether `node` carries label `key` (with any value).
fn node_label(node: &Node, key: &str) -> bool {
    node.metadata
        .labels
        .as_ref()
        .is_some_and(|l| l.contains_key(key))
}

/// Whether `node` carries a taint with `key`.
fn has_taint(node: &Node, key: &str) -> bool {
    node.spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .is_some_and(|t| t.iter().any(|t| t.key == key))
}

/// The kubelet posts the status it registered with, if the node has none yet (a create does
/// not store a status).
fn post_status(
    claim: &NodeClaim,
    node: &Node,
    view: &View<'_>,
    ctx: &Context<'_>,
    plan: &mut Plan,
    now: Timestamp,
) {
    let posted = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| !c.is_empty());
    if !posted && let Some(status) = booted_node(claim, view, ctx, now).and_then(|n| n.status) {
        plan.push(Action::write_status(node, &status));
    }
}

/// `node` once its start-up agents are done: no startup taints, labelled initialized.
fn initialize(claim: &NodeClaim, node: &Node) -> Node {
    let mut out = node.clone();
    out.metadata
        .labels
        .get_or_insert_default()
        .insert(INITIALIZED_LABEL.into(), "true".into());
    if let Some(taints) = out.spec.as_mut().and_then(|s| s.taints.as_mut()) {
        taints.retain(|t| {
            !claim
                .spec
                .startup_taints
                .iter()
                .any(|s| s.key == t.key && s.effect == t.effect)
        });
    }
    out
}

/// A fingerprint of the workload pods on a node (DaemonSet pods do not count).
fn pod_set(view: &View<'_>, node: &str) -> u64 {
    let mut keys: Vec<String> = view
        .pods_on(node)
        .iter()
        .filter(|p| !flotilla_nodes::pod::owned_by(p, "DaemonSet"))
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .map(|p| p.metadata.uid.clone().unwrap_or_default())
        .collect();
    keys.sort();
    fnv1a64(keys.join(",").as_bytes())
}

/// `Consolidatable` once no pod arrived or left for the pool's `consolidateAfter`; cleared
/// under `Never`. Returns when it will become true, if it is not yet.
fn consolidatable(
    pool: &NodePool,
    status: &mut NodeClaimStatus,
    initialized: Timestamp,
    now: Timestamp,
) -> Option<Timestamp> {
    let disruption = pool.spec.disruption.clone().unwrap_or_default();
    let after = disruption.consolidate_after.as_deref().unwrap_or("0s");
    let Some(after) = go_duration::parse(after) else {
        clear(status, "Consolidatable");
        return None;
    };
    let base = status
        .last_pod_event_time
        .as_ref()
        .map_or(initialized, |t| t.0.max(initialized));
    let at = base.checked_add(after).unwrap_or(Timestamp::MAX);
    if now >= at {
        let policy = disruption.consolidation_policy.unwrap_or_default().as_str();
        set(
            status,
            "Consolidatable",
            "True",
            "Consolidatable",
            format!(
                "no pod arrived or left for consolidateAfter ({}); policy {policy}",
                go_duration::format(after)
            ),
            now,
        );
        None
    } else {
        clear(status, "Consolidatable");
        Some(at)
    }
}

/// The claim's `Drifted` condition now.
fn drift(
    claim: &NodeClaim,
    pool: &NodePool,
    view: &View<'_>,
    node: Option<&Node>,
    status: &mut NodeClaimStatus,
    now: Timestamp,
) {
    let requirements = from_api::requirements(&pool.spec.template.spec.requirements).ok();
    let labels = claim.metadata.labels.clone().unwrap_or_default();
    let mismatch = requirements.and_then(|r| {
        r.iter()
            .find(|(key, requirement)| match labels.get(*key) {
                Some(value) => !requirement.has(value),
                None => !requirement.allows_absence(),
            })
            .map(|(key, _)| format!("label {key:?}"))
    });
    let kubelet = node
        .and_then(|n| n.status.as_ref())
        .and_then(|s| s.node_info.as_ref())
        .map(|i| i.kubelet_version.clone());
    let context = DriftContext {
        node_class: view
            .classes
            .get(claim.spec.node_class_ref.name.as_str())
            .copied(),
        requirement_mismatch: mismatch.as_deref(),
        kubelet_version: kubelet.as_deref(),
    };
    // The claim's recorded image is what its node runs.
    match drifted(claim, pool, context) {
        Some(why) => set(status, "Drifted", "True", why.reason(), why.message(), now),
        None => clear(status, "Drifted"),
    }
}

/// The pool that owns `claim` (its `karpenter.sh/nodepool` label).
fn pool_of(claim: &NodeClaim) -> &str {
    claim
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(metrics::POOL_LABEL))
        .map_or("", String::as_str)
}

/// The claim condition saying its instance is being deleted.
const INSTANCE_TERMINATING: &str = "InstanceTerminating";

/// Finalizes a claim being deleted: stamps its termination time, deletes its node, and
/// releases the claim once the node is gone.
fn finalize(claim: &NodeClaim, view: &View<'_>, plan: &mut Plan, now: Timestamp) {
    if !claim
        .metadata
        .finalizers
        .iter()
        .flatten()
        .any(|f| f == TERMINATION_FINALIZER)
    {
        return;
    }
    let deleted = claim
        .metadata
        .deletion_timestamp
        .as_ref()
        .map_or(now, |t| t.0);
    let stamped = claim
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(TERMINATION_TIMESTAMP_ANNOTATION));
    match view.node_of(claim) {
        Some(_) if !stamped && claim.spec.termination_grace_period.is_some() => {
            if let Some(at) =
                termination_time(deleted, claim.spec.termination_grace_period.as_deref())
            {
                let mut out = claim.clone();
                out.metadata
                    .annotations
                    .get_or_insert_default()
                    .insert(TERMINATION_TIMESTAMP_ANNOTATION.into(), at.to_string());
                plan.push(Action::update(&out));
            }
        }
        Some(node) if node.metadata.deletion_timestamp.is_none() => {
            plan.push(Action::Delete(crate::objects::ObjectRef::of(node)));
        }
        Some(_) => {}
        None if !claim_is(claim, INSTANCE_TERMINATING) => {
            // The node is gone: the instance's deletion starts, and the claim says so before
            // it lets go (Karpenter's InstanceTerminating condition).
            let mut status = claim.status.clone().unwrap_or_default();
            let instance = status.provider_id.clone().unwrap_or_default();
            set(
                &mut status,
                INSTANCE_TERMINATING,
                "True",
                INSTANCE_TERMINATING,
                format!("terminating instance {instance}"),
                now,
            );
            plan.push(super::status_write(claim, &status));
            plan.wake(now);
        }
        None => {
            let mut out = claim.clone();
            if let Some(f) = out.metadata.finalizers.as_mut() {
                f.retain(|f| f != TERMINATION_FINALIZER);
            }
            plan.push(Action::update(&out));
            plan.observe(&metrics::NODECLAIMS_TERMINATED, &[pool_of(claim)], 1.0);
            plan.push(Action::Record(EventNote::normal(
                COMPONENT,
                reference(claim),
                "InstanceTerminated",
                "the instance is terminated and the claim released".into(),
            )));
        }
    }
}

/// One pass over every claim at `now`.
/// `marks`: the disruption controller's changes to claims' `DisruptionReason` condition.
pub fn reconcile(
    view: &View<'_>,
    ctx: &Context<'_>,
    memory: &mut Memory,
    marks: &Marks,
    now: Timestamp,
) -> Plan {
    let mut plan = Plan::default();
    let mut seen = std::collections::HashMap::new();
    for claim in &view.state.node_claims {
        let name = claim.metadata.name.clone().unwrap_or_default();
        if claim.metadata.deletion_timestamp.is_some() {
            finalize(claim, view, &mut plan, now);
            continue;
        }
        let mut status = claim.status.clone().unwrap_or_default();
        let node = view.node_of(claim);
        match true_since(claim, "Launched") {
            None => launch(claim, view, ctx, memory, &mut status, &mut plan, now),
            Some(launched) => match node {
                None => {
                    let boots = launched.checked_add(BOOT_DELAY).unwrap_or(Timestamp::MAX);
                    let unlabelled = !claim
                        .metadata
                        .labels
                        .as_ref()
                        .is_some_and(|l| l.contains_key(labels::INSTANCE_TYPE));
                    if unlabelled {
                        // The launch's label write lost a race; the launch is deterministic.
                        if let Ok(launch) = cloud::launch(claim, ctx.cloud) {
                            plan.push(Action::update(&labelled(claim, &launch)));
                        }
                    } else if now >= boots {
                        if let Some(node) = booted_node(claim, view, ctx, now) {
                            plan.push(Action::create(&node));
                        }
                    } else {
                        plan.wake(boots);
                    }
                }
                Some(node)
                    if !node_label(node, REGISTERED_LABEL)
                        || has_taint(node, UNREGISTERED_TAINT) =>
                {
                    plan.push(Action::update(&register(claim, node)));
                    post_status(claim, node, view, ctx, &mut plan, now);
                }
                Some(node) if !node_label(node, INITIALIZED_LABEL) => {
                    post_status(claim, node, view, ctx, &mut plan, now);
                    status.node_name = node.metadata.name.clone();
                    set(
                        &mut status,
                        "Registered",
                        "True",
                        "Registered",
                        String::new(),
                        now,
                    );
                    let registered = true_since(claim, "Registered").unwrap_or(now);
                    let ready_at = registered.checked_add(STARTUP_DELAY).unwrap_or(now);
                    if now >= ready_at && flotilla_nodes::pool_status::node_ready(node) {
                        plan.push(Action::update(&initialize(claim, node)));
                    } else {
                        // Until the node is ready, look again at least every start-up delay.
                        plan.wake(ready_at.max(now.checked_add(STARTUP_DELAY).unwrap_or(now)));
                    }
                }
                Some(_) if !claim_is(claim, "Initialized") => {
                    if let Some(created) = &claim.metadata.creation_timestamp {
                        let took = now.duration_since(created.0).as_secs_f64().max(0.0);
                        plan.observe(&metrics::PROVISIONING_DURATION, &[pool_of(claim)], took);
                    }
                    set(
                        &mut status,
                        "Initialized",
                        "True",
                        "Initialized",
                        String::new(),
                        now,
                    );
                    set(&mut status, "Ready", "True", "Ready", String::new(), now);
                }
                Some(node) => {
                    let node_name = node.metadata.name.as_deref().unwrap_or_default();
                    let fingerprint = pod_set(view, node_name);
                    if memory
                        .pod_sets
                        .get(&name)
                        .is_some_and(|f| *f != fingerprint)
                    {
                        status.last_pod_event_time = Some(Time(now));
                    }
                    seen.insert(name.clone(), fingerprint);
                    if let Some(pool) = view.pool_of(&claim.metadata) {
                        let initialized = true_since(claim, "Initialized").unwrap_or(now);
                        if let Some(at) = consolidatable(pool, &mut status, initialized, now) {
                            plan.wake(at);
                        }
                        drift(claim, pool, view, Some(node), &mut status, now);
                        let class = view.classes.get(claim.spec.node_class_ref.name.as_str());
                        if let Some(writes) = restamp(claim, &pool.spec, class.map(|c| &c.spec)) {
                            let mut restamped = claim.clone();
                            restamped
                                .metadata
                                .annotations
                                .get_or_insert_default()
                                .extend(writes);
                            plan.push(Action::update(&restamped));
                        }
                    }
                }
            },
        }
        match marks.get(&name) {
            Some(Some((reason, message))) => set(
                &mut status,
                "DisruptionReason",
                "True",
                reason.as_str(),
                message.clone(),
                now,
            ),
            Some(None) => clear(&mut status, "DisruptionReason"),
            None => {}
        }
        if expired(claim, now) {
            let lifetime = claim.spec.expire_after.clone().unwrap_or_default();
            plan.push(Action::Record(EventNote::normal(
                COMPONENT,
                reference(claim),
                "Expired",
                format!("the claim reached its expireAfter of {lifetime}; deleting it (expiration ignores disruption budgets)"),
            )));
            plan.push(Action::Delete(reference(claim)));
            continue;
        }
        if let Some(at) = expires_at(claim) {
            plan.wake(at);
        }
        if claim.status.as_ref() != Some(&status) {
            plan.push(super::status_write(claim, &status));
        }
    }
    memory.pod_sets = seen;
    plan
}
