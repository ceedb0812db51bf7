//! Provisioning (reference §4): pods the scheduler marked unschedulable are placed, in the
//! scheduling simulation, on existing nodes, on claims still in flight, or on new claims from
//! the pools (highest weight first, within their limits); every new claim is created for the
//! cloud to launch on its cheapest compatible offering. Pending pods are collected in
//! Karpenter's batch window first (`flotilla_nodes::batch`), so pods created moments apart are
//! provisioned together.

use std::collections::HashMap;

use flotilla_api::nodes::node_claim::ResourceRequirements;
use flotilla_api::nodes::{
    AKSNodeClass, AZURE_GROUP, DEFAULT_NODE_CLASS, NODEPOOL_LABEL, NodeClaim, NodeClaimSpec,
    NodeClassReference, NodePool, TERMINATION_FINALIZER,
};
use flotilla_nodes::batch;
use flotilla_nodes::drift::launch_annotations;
use flotilla_nodes::expiration::expire_after;
use flotilla_nodes::scheduling::from_api::{self, pool_model};
use flotilla_nodes::scheduling::from_k8s::{self, resources_from_list};
use flotilla_nodes::scheduling::requirements::Undefined;
use flotilla_nodes::scheduling::scheduler::instance_type_options;
use flotilla_nodes::scheduling::{
    ExistingNode, InstanceType, NewClaim, Operator, Requirement, Requirements, Resources,
    Scheduler, SchedulingOptions, SimPod, labels, taints,
};
use flotilla_nodes::static_capacity::{self, StaticClaim, StaticDecision};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use super::cloud;
use super::memory::Memory;
use super::view::{View, pool_label};
use super::{COMPONENT, Context, reference};
use crate::actions::{Action, EventNote, Plan};
use crate::ids::fnv1a64;
use crate::objects::ObjectRef;

/// Whether the scheduler has marked `pod` unschedulable (and it still waits).
fn unschedulable(pod: &Pod) -> bool {
    crate::scheduler::is_pending(pod)
        && !flotilla_nodes::pod::owned_by(pod, "DaemonSet")
        && pod
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .and_then(|c| c.iter().find(|c| c.type_ == "PodScheduled"))
            .is_some_and(|c| c.status == "False" && c.reason.as_deref() == Some("Unschedulable"))
}

/// What the pods bound to a node request.
fn requested(pods: &[&Pod]) -> Resources {
    pods.iter()
        .filter(|p| !crate::pod_state::is_terminal(p))
        .filter_map(|p| from_k8s::pod_requests(p).ok())
        .fold(Resources::ZERO, |sum, r| sum + r)
}

/// The scheduler's view of a node; a Karpenter node whose kubelet has not posted its status
/// yet holds what its claim launched, and until initialized its startup taints do not count
/// (something will remove them).
fn existing(node: &Node, view: &View<'_>) -> Option<ExistingNode> {
    let name = node.metadata.name.as_deref().unwrap_or_default();
    let pods = view.pods_on(name);
    let mut out = from_k8s::existing_node(node, requested(pods)).ok()?;
    out.bound = pods
        .iter()
        .filter(|p| !crate::pod_state::is_terminal(p))
        .map(|p| from_k8s::bound_pod(p))
        .collect();
    if let (false, Some(claim)) = (out.initialized, view.claim_of(node)) {
        let startup = from_api::taints(&claim.spec.startup_taints);
        out.taints.retain(|t| !startup.contains(t));
        if out.allocatable == Resources::ZERO
            && let Some(status) = claim.status.as_ref()
        {
            out.allocatable = resources_from_list(&status.allocatable).ok()?;
        }
    }
    Some(out)
}

/// The scheduler's view of a claim whose node has not registered: its labels and single-valued
/// requirements, and what it will hold (as launched, or as the cloud would launch it).
fn in_flight(claim: &NodeClaim, ctx: &Context<'_>) -> Option<ExistingNode> {
    let requirements = from_api::requirements(&claim.spec.requirements).ok()?;
    let mut labels = claim.metadata.labels.clone().unwrap_or_default();
    for (key, requirement) in requirements.iter() {
        if let Some(values) = requirement.values().filter(|v| v.len() == 1) {
            labels
                .entry(key.to_string())
                .or_insert_with(|| values.iter().next().cloned().unwrap_or_default());
        }
    }
    let allocatable = match claim.status.as_ref().filter(|s| !s.allocatable.is_empty()) {
        Some(status) => resources_from_list(&status.allocatable).ok()?,
        None => cloud::launch(claim, ctx.cloud)
            .ok()?
            .instance_type
            .allocatable(),
    };
    Some(ExistingNode {
        name: claim.metadata.name.clone().unwrap_or_default(),
        pool: labels.get(NODEPOOL_LABEL).cloned(),
        labels,
        taints: from_api::taints(&claim.spec.taints),
        allocatable,
        requested: Resources::ZERO,
        initialized: false,
        bound: Vec::new(),
    })
}

/// What the DaemonSets that would run on a new node of `pool` request.
fn daemon_overhead(pool: &flotilla_nodes::scheduling::NodePool, daemons: &[SimPod]) -> Resources {
    let template = pool
        .requirements
        .intersection(&Requirements::from_labels(&pool.labels));
    daemons
        .iter()
        .filter(|d| taints::untolerated(&pool.taints, &d.tolerations).is_none())
        .filter(|d| {
            d.requirement_terms.is_empty()
                || d.requirement_terms
                    .iter()
                    .any(|t| template.compatible(t, Undefined::AllowWellKnown).is_ok())
        })
        .fold(Resources::ZERO, |sum, d| sum + d.requests)
}

/// The pods of the member's DaemonSets, as the scheduler sees them.
fn daemon_pods(view: &View<'_>) -> Vec<SimPod> {
    view.state
        .daemon_sets
        .iter()
        .filter_map(|ds| {
            let template = ds.spec.template.clone();
            let pod = Pod {
                metadata: ObjectMeta {
                    name: ds.metadata.name.clone(),
                    namespace: ds.metadata.namespace.clone(),
                    ..Default::default()
                },
                spec: template.spec,
                status: None,
            };
            from_k8s::sim_pod(&pod).ok()
        })
        .collect()
}

/// The capacity a claim counts against its pool's limits: what it launched, or, before its
/// launch, what the cloud will launch for it (else a claim created in one pass would be
/// invisible to the next, which would launch past the limits).
fn claimed_capacity(claim: &NodeClaim, ctx: &Context<'_>) -> Option<Resources> {
    match claim.status.as_ref().filter(|s| !s.capacity.is_empty()) {
        Some(status) => resources_from_list(&status.capacity).ok(),
        None => Some(cloud::launch(claim, ctx.cloud).ok()?.instance_type.capacity),
    }
}

/// Whether `pool` is static (`spec.replicas`): its node count is fixed, pods do not grow it and
/// consolidation does not shrink it.
pub fn is_static(pool: &NodePool) -> bool {
    pool.spec.replicas.is_some()
}

/// Static pools (`flotilla_nodes::static_capacity`): claims launched from the template or
/// removed until each pool holds its `replicas`, within `limits.nodes`.
fn static_pools(view: &View<'_>, ctx: &Context<'_>, now: Timestamp) -> Plan {
    let mut plan = Plan::default();
    for (name, pool) in &view.pools {
        let Some(replicas) = pool.spec.replicas else {
            continue;
        };
        let Ok(class) = view.class_of(pool) else {
            continue;
        };
        if pool.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let claims: Vec<&NodeClaim> = view
            .state
            .node_claims
            .iter()
            .filter(|c| c.metadata.deletion_timestamp.is_none())
            .filter(|c| pool_label(&c.metadata) == Some(*name))
            .collect();
        let seen: Vec<StaticClaim> = claims
            .iter()
            .map(|c| StaticClaim {
                name: c.metadata.name.clone().unwrap_or_default(),
                launched: c
                    .status
                    .as_ref()
                    .is_some_and(|s| s.provider_id.as_ref().is_some_and(|id| !id.is_empty())),
                pods: view.node_of(c).map_or(0, |node| {
                    let node = node.metadata.name.as_deref().unwrap_or_default();
                    view.pods_on(node)
                        .iter()
                        .filter(|p| !crate::pod_state::is_terminal(p))
                        .filter(|p| !flotilla_nodes::pod::owned_by(p, "DaemonSet"))
                        .count()
                }),
            })
            .collect();
        let node_limit = pool
            .spec
            .limits
            .get("nodes")
            .and_then(|q| q.0.parse::<u64>().ok());
        let replicas = u64::try_from(replicas).unwrap_or(0);
        match static_capacity::decide(replicas, node_limit, &seen) {
            StaticDecision::Hold => {}
            StaticDecision::Launch(count) => {
                let Some(new) = static_claim(pool, name, ctx) else {
                    continue;
                };
                for i in 0..count {
                    let claim = claim_for(
                        &new,
                        pool,
                        class,
                        &claim_name(&new, &format!("{now}-{i}")),
                        ctx.catalog,
                    );
                    plan.push(Action::create(&claim));
                }
                plan.push(Action::Record(EventNote::normal(
                    COMPONENT,
                    reference(*pool),
                    "Provisioned",
                    format!(
                        "created {count} NodeClaim(s) to hold the static pool at {replicas} node(s)"
                    ),
                )));
            }
            StaticDecision::Remove(names) => {
                for claim in claims
                    .iter()
                    .filter(|c| names.contains(c.metadata.name.as_ref().unwrap_or(&String::new())))
                {
                    plan.push(Action::Delete(reference(*claim)));
                }
                plan.push(Action::Record(EventNote::normal(
                    COMPONENT,
                    reference(*pool),
                    "Deprovisioned",
                    format!(
                        "deleting NodeClaim(s) {} to bring the static pool down to {replicas} node(s)",
                        names.join(", ")
                    ),
                )));
            }
        }
    }
    plan
}

/// A claim of static pool `pool` (named `name`): its template's requirements, and every
/// compatible instance type as an option, cheapest first, for the cloud to launch the cheapest.
fn static_claim(pool: &NodePool, name: &str, ctx: &Context<'_>) -> Option<NewClaim> {
    let model = pool_model(pool, Resources::ZERO, 0, Resources::ZERO).ok()?;
    let mut requirements = model
        .requirements
        .intersection(&Requirements::from_labels(&model.labels));
    requirements.add(labels::NODE_POOL, Requirement::single(name));
    let compatible = ctx.catalog.iter().filter(|it| it.compatible(&requirements));
    let options = instance_type_options(compatible, &requirements);
    (!options.is_empty()).then(|| NewClaim {
        pool: name.to_string(),
        requirements,
        instance_type_options: options,
        requests: Resources::ZERO,
        pods: Vec::new(),
    })
}

/// The pools the provisioner launches from, as the scheduler sees them (pools being deleted,
/// static, or whose node class is missing, launch nothing).
pub fn pool_models(
    view: &View<'_>,
    ctx: &Context<'_>,
) -> Vec<flotilla_nodes::scheduling::NodePool> {
    let daemons = daemon_pods(view);
    let mut in_use: HashMap<&str, (Resources, u64)> = HashMap::new();
    for claim in &view.state.node_claims {
        if let Some(pool) = pool_label(&claim.metadata)
            && let Some(capacity) = claimed_capacity(claim, ctx)
        {
            let used = in_use.entry(pool).or_insert((Resources::ZERO, 0));
            used.0 += capacity;
            used.1 += 1;
        }
    }
    view.pools
        .iter()
        .filter(|(_, pool)| pool.metadata.deletion_timestamp.is_none() && !is_static(pool))
        .filter(|(_, pool)| view.class_of(pool).is_ok())
        .filter_map(|(name, pool)| {
            let (used, nodes) = in_use.get(name).copied().unwrap_or((Resources::ZERO, 0));
            let mut model = pool_model(pool, used, nodes, Resources::ZERO).ok()?;
            model.daemon_overhead = daemon_overhead(&model, &daemons);
            Some(model)
        })
        .collect()
}

/// The scheduler's view of every node and in-flight claim, leaving out nodes on their way out
/// and those named in `without`.
pub fn cluster_nodes(view: &View<'_>, ctx: &Context<'_>, without: &[&str]) -> Vec<ExistingNode> {
    let nodes = view
        .state
        .nodes
        .iter()
        .filter(|n| !flotilla_nodes::pool_status::node_leaving(n))
        .filter(|n| !without.contains(&n.metadata.name.as_deref().unwrap_or_default()))
        .filter_map(|n| existing(n, view));
    let claims = view
        .state
        .node_claims
        .iter()
        .filter(|c| c.metadata.deletion_timestamp.is_none() && view.node_of(c).is_none())
        .filter_map(|c| in_flight(c, ctx));
    nodes.chain(claims).collect()
}

/// The NodeClaim for a claim the scheduler planned from `pool`, named `name`: the pool's
/// template (labels, annotations, taints, startup taints, node class, lifetime, termination
/// grace period), the scheduler's requirements narrowed to its instance-type options, the
/// hash annotations drift compares, the pool as owner, and the termination finalizer.
pub fn claim_for(
    new: &NewClaim,
    pool: &NodePool,
    class: &AKSNodeClass,
    name: &str,
    catalog: &[InstanceType],
) -> NodeClaim {
    let template = &pool.spec.template;
    let metadata = template.metadata.clone().unwrap_or_default();
    let mut labels = metadata.labels.clone();
    labels.insert(NODEPOOL_LABEL.into(), new.pool.clone());
    let mut annotations = metadata.annotations.clone();
    annotations.extend(launch_annotations(&pool.spec, &class.spec));
    if super::node_overlays::price_overlaid(catalog, new) {
        annotations.insert(
            super::node_overlays::PRICE_OVERLAY_APPLIED_ANNOTATION.into(),
            "true".into(),
        );
    }
    let mut requirements = new.requirements.clone();
    let options: Vec<&str> = new
        .instance_type_options
        .iter()
        .map(|o| o.name.as_str())
        .collect();
    if let Ok(types) = Requirement::new(Operator::In, &options) {
        requirements.add(labels::INSTANCE_TYPE, types);
    }
    let requests = [
        (
            "cpu",
            flotilla_apimachinery::quantity::format_cpu(new.requests.cpu_millis.max(0) as u64),
        ),
        (
            "memory",
            flotilla_apimachinery::quantity::format_memory(new.requests.memory_bytes.max(0) as u64),
        ),
        ("pods", new.requests.pods.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| {
        (
            k.to_string(),
            k8s_openapi::apimachinery::pkg::api::resource::Quantity(v),
        )
    })
    .collect();
    let spec = NodeClaimSpec {
        taints: template.spec.taints.clone(),
        startup_taints: template.spec.startup_taints.clone(),
        requirements: from_api::to_api(&requirements),
        resources: Some(ResourceRequirements { requests }),
        node_class_ref: template.spec.node_class_ref.clone().unwrap_or_else(|| {
            NodeClassReference {
                group: AZURE_GROUP.into(),
                kind: "AKSNodeClass".into(),
                name: DEFAULT_NODE_CLASS.into(),
            }
        }),
        termination_grace_period: template.spec.termination_grace_period.clone(),
        expire_after: Some(expire_after(&pool.spec).text),
    };
    let mut claim = NodeClaim::new(name, spec);
    claim.metadata.labels = Some(labels);
    claim.metadata.annotations = Some(annotations);
    claim.metadata.finalizers = Some(vec![TERMINATION_FINALIZER.into()]);
    claim.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "karpenter.sh/v1".into(),
        kind: "NodePool".into(),
        name: pool.metadata.name.clone().unwrap_or_default(),
        uid: pool.metadata.uid.clone().unwrap_or_default(),
        block_owner_deletion: Some(true),
        controller: None,
    }]);
    claim
}

/// A claim name for `new`, stable for the same pool, pods and instant: `<pool>-<5 hex>`.
pub fn claim_name(new: &NewClaim, salt: &str) -> String {
    let seed = format!("{}/{}/{salt}", new.pool, new.pods.join(","));
    format!("{}-{:05x}", new.pool, fnv1a64(seed.as_bytes()) & 0xfffff)
}

/// One provisioning pass at `now`.
pub fn reconcile(view: &View<'_>, ctx: &Context<'_>, memory: &mut Memory, now: Timestamp) -> Plan {
    let mut plan = static_pools(view, ctx, now);
    let pending: Vec<&Pod> = view
        .state
        .pods
        .iter()
        .filter(|p| unschedulable(p))
        .collect();
    if pending.is_empty() {
        memory.batch = None;
        return plan;
    }
    let mut uids: Vec<&str> = pending
        .iter()
        .filter_map(|p| p.metadata.uid.as_deref())
        .collect();
    uids.sort_unstable();
    let (window, decision) = batch::observe(memory.batch, fnv1a64(uids.join(",").as_bytes()), now);
    if let batch::Decision::Wait(until) = decision {
        memory.batch = Some(window);
        plan.wake(until);
        return plan;
    }
    memory.batch = None;
    let pods: Vec<SimPod> = pending
        .iter()
        .filter_map(|p| from_k8s::sim_pod(p).ok())
        .collect();
    let by_key: HashMap<&str, &Pod> = pods
        .iter()
        .map(|s| s.name.as_str())
        .zip(pending.iter().copied())
        .collect();
    let models = pool_models(view, ctx);
    let nodes = cluster_nodes(view, ctx, &[]);
    let mut scheduler = Scheduler::new(&models, ctx.catalog);
    let node_refs: Vec<&ExistingNode> = nodes.iter().collect();
    let pod_refs: Vec<&SimPod> = pods.iter().collect();
    let results = scheduler.schedule(&node_refs, &pod_refs, SchedulingOptions::default());
    for new in &results.new_claims {
        let Some(pool) = view.pools.get(new.pool.as_str()) else {
            continue;
        };
        let Ok(class) = view.class_of(pool) else {
            continue;
        };
        let name = claim_name(new, &now.to_string());
        plan.push(Action::create(&claim_for(
            new,
            pool,
            class,
            &name,
            ctx.catalog,
        )));
        plan.observe(
            &super::metrics::NODECLAIMS_CREATED,
            &["provisioning", &new.pool],
            1.0,
        );
        let cheapest = new
            .instance_type_options
            .first()
            .map(|o| format!("; cheapest option {} at ${:.4}/h", o.name, o.price))
            .unwrap_or_default();
        plan.push(Action::Record(EventNote::normal(
            COMPONENT,
            reference(*pool),
            "Provisioned",
            format!(
                "created NodeClaim {name} for {} pending pod(s) ({} instance-type option(s){cheapest})",
                new.pods.len(),
                new.instance_type_options.len()
            ),
        )));
        for key in &new.pods {
            if let Some(pod) = by_key.get(key.as_str()) {
                plan.push(Action::Record(EventNote::normal(
                    COMPONENT,
                    ObjectRef::of(*pod),
                    "Nominated",
                    format!("Pod should schedule on: nodeclaim/{name}"),
                )));
            }
        }
    }
    for (key, why) in &results.unschedulable {
        let Some(pod) = by_key.get(key.as_str()) else {
            continue;
        };
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        if memory.first_report(format!("unschedulable/{uid}/{why}")) {
            plan.push(Action::Record(EventNote::warning(
                COMPONENT,
                ObjectRef::of(*pod),
                "FailedScheduling",
                format!("Failed to schedule pod, {why}"),
            )));
        }
    }
    plan
}
