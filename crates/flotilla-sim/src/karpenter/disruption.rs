//! The disruption controller (reference §2): the command queue, then one decision.
//!
//! - **Queue.** A claim marked `DisruptionReason` has its node tainted `karpenter.sh/disrupted`
//!   and names its replacements in [`REPLACEMENTS_ANNOTATION`]; once every replacement is
//!   `Initialized` the claim is deleted (termination drains the node). A replacement that
//!   vanishes, or one that has not initialized within [`QUEUE_TIMEOUT`], abandons the command.
//!   Taints left on unmarked nodes are removed.
//! - **Decision.** Candidates are the initialized Karpenter nodes no rule rejects; the methods
//!   run in Karpenter's order — Emptiness, Drift, multi-node, then single-node consolidation —
//!   and the first that yields a command wins. Drift starts at once; the others wait
//!   [`VALIDATION_DELAY`] and are re-checked against the cluster as it then is.
//!
//! Every step is explained: events on claims and pools say which method chose a node and why,
//! and which budget, annotation or PodDisruptionBudget blocked one.

use std::collections::BTreeMap;

use flotilla_api::nodes::{
    ConsolidationPolicy, DISRUPTED_TAINT, DO_NOT_DISRUPT_ANNOTATION, DisruptionReason, NodeClaim,
    NodePool,
};
use flotilla_nodes::budget::{Limit, allowed_disruptions};
use flotilla_nodes::consolidation::{
    self, Candidate, Cluster, Method, PoolTotals, Simulator, compute_consolidation,
    multi_node_consolidation, single_node_consolidation,
};
use flotilla_nodes::disruption::candidate::{Class, NodeFacts, PodFacts, rejection};
use flotilla_nodes::disruption::methods::{self, Remaining};
use flotilla_nodes::expiration::lifetime;
use flotilla_nodes::pdb::Budgets;
use flotilla_nodes::pool_status::{counts, in_pool};
use flotilla_nodes::scheduling::{
    CapacityType, ExistingNode, NewClaim, Requirement, Requirements, SimPod, from_k8s, labels,
};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Node, Taint};

use super::claims::{claim_is, true_since};
use super::memory::{Memory, Proposal};
use super::provisioner::{claim_for, claim_name, cluster_nodes, pool_models};
use super::view::View;
use super::{COMPONENT, Context, metrics, reference};
use crate::actions::{Action, EventNote, Plan};
use crate::objects::ObjectRef;

/// How long a consolidation or emptiness decision waits before it is re-checked and started.
pub const VALIDATION_DELAY: SignedDuration = SignedDuration::from_secs(15);
/// How long a command waits for its replacements to initialize before it is abandoned.
pub const QUEUE_TIMEOUT: SignedDuration = SignedDuration::from_mins(10);
/// How long a missing replacement may take to appear before the command is abandoned.
const REPLACEMENT_GRACE: SignedDuration = SignedDuration::from_secs(30);
/// The annotation naming a disrupted claim's replacement claims.
pub const REPLACEMENTS_ANNOTATION: &str = "karpenter.flotilla.dev/replacements";

/// What this pass decides about claims' `DisruptionReason` condition: set it (reason and
/// message) or clear it. The claims controller writes it with the rest of the status.
pub type Marks = BTreeMap<String, Option<(DisruptionReason, String)>>;

/// Whether a node carries the disrupted taint.
pub(super) fn tainted(node: &Node) -> bool {
    node.spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .is_some_and(|t| t.iter().any(|t| t.key == DISRUPTED_TAINT))
}

/// `node` with the disrupted taint added or removed.
pub(super) fn with_taint(node: &Node, on: bool) -> Node {
    let mut out = node.clone();
    let taints = out
        .spec
        .get_or_insert_default()
        .taints
        .get_or_insert_default();
    taints.retain(|t| t.key != DISRUPTED_TAINT);
    if on {
        taints.push(Taint {
            key: DISRUPTED_TAINT.into(),
            effect: "NoSchedule".into(),
            ..Default::default()
        });
    }
    out
}

/// The replacement claims a disrupted claim waits for.
fn replacements_of(claim: &NodeClaim) -> Vec<String> {
    claim
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(REPLACEMENTS_ANNOTATION))
        .map(|v| {
            v.split(',')
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// An event on a claim.
fn claim_event(claim: &NodeClaim, reason: &str, message: String) -> Action {
    Action::Record(EventNote::normal(
        COMPONENT,
        reference(claim),
        reason,
        message,
    ))
}

/// Works the queue: deletes claims whose replacements are ready, abandons commands whose
/// replacements are gone or late, and removes stray taints.
fn queue(view: &View<'_>, marks: &mut Marks, plan: &mut Plan, now: Timestamp) {
    let claims: BTreeMap<&str, &NodeClaim> = view
        .state
        .node_claims
        .iter()
        .map(|c| (c.metadata.name.as_deref().unwrap_or_default(), c))
        .collect();
    for claim in &view.state.node_claims {
        let node = view.node_of(claim);
        let Some(since) = true_since(claim, "DisruptionReason") else {
            if let Some(node) =
                node.filter(|n| tainted(n) && n.metadata.deletion_timestamp.is_none())
                && claim.metadata.deletion_timestamp.is_none()
            {
                plan.push(Action::update(&with_taint(node, false)));
            }
            continue;
        };
        if claim.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let wanted = replacements_of(claim);
        let missing: Vec<&String> = wanted
            .iter()
            .filter(|n| !claims.contains_key(n.as_str()))
            .collect();
        let ready = wanted.iter().all(|n| {
            claims
                .get(n.as_str())
                .is_some_and(|c| claim_is(c, "Initialized"))
        });
        let age = now.duration_since(since);
        let abandon = if !missing.is_empty() && age >= REPLACEMENT_GRACE {
            Some(format!("replacement NodeClaim {} is gone", missing[0]))
        } else if !ready && age >= QUEUE_TIMEOUT {
            Some(format!(
                "replacements did not initialize within {}",
                QUEUE_TIMEOUT.as_secs() / 60
            ))
        } else {
            None
        };
        if let Some(why) = abandon {
            marks.insert(claim.metadata.name.clone().unwrap_or_default(), None);
            if let Some(node) = node {
                plan.push(Action::update(&with_taint(node, false)));
            }
            plan.push(Action::Record(EventNote::warning(
                COMPONENT,
                reference(claim),
                "DisruptionAbandoned",
                format!("disruption abandoned: {why}; the node stays"),
            )));
        } else if ready {
            let reason = claim
                .status
                .as_ref()
                .and_then(|s| flotilla_api::conditions::find(&s.conditions, "DisruptionReason"))
                .map(|c| c.reason.clone())
                .unwrap_or_default();
            plan.push(claim_event(
                claim,
                "DisruptionTerminating",
                format!("Disrupting NodeClaim: {reason}"),
            ));
            plan.push(Action::Delete(reference(claim)));
        } else {
            // Replacements initializing wake the pass themselves; time alone matters only
            // for the deadlines above, which are still ahead.
            let deadline = if missing.is_empty() {
                QUEUE_TIMEOUT
            } else {
                REPLACEMENT_GRACE
            };
            plan.wake(since.checked_add(deadline).unwrap_or(now));
        }
    }
}

/// A Karpenter node as disruption sees it, with its pool, claim and price.
struct Node_<'s> {
    facts: NodeFacts,
    pool: Option<&'s NodePool>,
    claim: &'s NodeClaim,
    node: &'s Node,
    sim_pods: Vec<SimPod>,
    instance_type: String,
    capacity_type: CapacityType,
    zone: String,
}

/// The Karpenter nodes of the member, as disruption sees them.
fn nodes<'s>(
    view: &View<'s>,
    ctx: &Context<'_>,
    budgets: &Budgets,
    now: Timestamp,
) -> Vec<Node_<'s>> {
    view.state
        .nodes
        .iter()
        .filter_map(|node| {
            let claim = view.claim_of(node)?;
            let name = node.metadata.name.clone().unwrap_or_default();
            let pool = view.pool_of(&claim.metadata);
            let labels_of = claim.metadata.labels.clone().unwrap_or_default();
            let label = |k: &str| labels_of.get(k).cloned().unwrap_or_default();
            let instance_type = label(labels::INSTANCE_TYPE);
            let zone = label(labels::ZONE);
            let capacity_type = CapacityType::from_label(&label(labels::CAPACITY_TYPE))
                .unwrap_or(CapacityType::OnDemand);
            // The price its pool sees (a NodeOverlay may change it for some pools).
            let mut of_pool = Requirements::new();
            of_pool.add(
                labels::NODE_POOL,
                Requirement::single(&label(labels::NODE_POOL)),
            );
            let price = ctx
                .catalog
                .iter()
                .find(|it| it.name == instance_type && it.requirements.intersects(&of_pool).is_ok())
                .and_then(|it| {
                    it.offerings
                        .iter()
                        .find(|o| o.zone == zone && o.capacity_type == capacity_type)
                })
                .map_or(0.0, |o| o.price);
            let pods = view.pods_on(&name);
            let node_annotation = node
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(DO_NOT_DISRUPT_ANNOTATION))
                .map(String::as_str);
            let pool_annotation = pool
                .and_then(|p| p.spec.template.metadata.as_ref())
                .and_then(|m| m.annotations.get(DO_NOT_DISRUPT_ANNOTATION))
                .map(String::as_str);
            let facts = NodeFacts {
                name: name.clone(),
                claim: claim.metadata.name.clone().unwrap_or_default(),
                pool: pool.and_then(|p| p.metadata.name.clone()),
                initialized: claim_is(claim, "Initialized"),
                deleting: node.metadata.deletion_timestamp.is_some()
                    || claim.metadata.deletion_timestamp.is_some(),
                queued: claim_is(claim, "DisruptionReason") || tainted(node),
                nominated: false,
                do_not_disrupt: node_annotation == Some("true") || pool_annotation == Some("true"),
                consolidatable: claim_is(claim, "Consolidatable"),
                drifted_since: true_since(claim, "Drifted"),
                pods: pods
                    .iter()
                    .map(|p| PodFacts::from_pod(p, budgets).0)
                    .collect(),
                created: claim
                    .metadata
                    .creation_timestamp
                    .as_ref()
                    .map_or(now, |t| t.0),
                lifetime: claim.spec.expire_after.as_deref().and_then(lifetime),
                price,
            };
            let sim_pods = pods
                .iter()
                .zip(&facts.pods)
                .filter(|(_, f)| f.reschedulable())
                .filter_map(|(p, _)| from_k8s::sim_pod(p).ok())
                .collect();
            Some(Node_ {
                facts,
                pool,
                claim,
                node,
                sim_pods,
                instance_type,
                capacity_type,
                zone,
            })
        })
        .collect()
}

/// Each pool's remaining disruptions for `reason` at `now`.
fn remaining(view: &View<'_>, reason: DisruptionReason, now: Timestamp) -> Remaining {
    view.pools
        .iter()
        .map(|(name, pool)| {
            let nodes: Vec<&Node> = view
                .state
                .nodes
                .iter()
                .filter(|n| in_pool(n, name))
                .collect();
            let budgets = pool
                .spec
                .disruption
                .as_ref()
                .and_then(|d| d.budgets.as_deref());
            let allowed = match allowed_disruptions(budgets, counts(&nodes), now).allowed(reason) {
                Limit::Nodes(n) => i64::try_from(n).unwrap_or(i64::MAX),
                Limit::Unlimited => i64::MAX,
            };
            (name.to_string(), allowed)
        })
        .collect()
}

/// Each Balanced pool's totals over all its nodes, candidates or not (Karpenter's
/// `computeNodePoolTotals`): their prices, and their reschedule costs.
fn balanced_totals(all: &[Node_<'_>]) -> BTreeMap<String, PoolTotals> {
    let mut totals: BTreeMap<String, PoolTotals> = BTreeMap::new();
    for node in all {
        let balanced = node.pool.is_some_and(|p| {
            p.spec
                .disruption
                .as_ref()
                .and_then(|d| d.consolidation_policy)
                == Some(ConsolidationPolicy::Balanced)
        });
        if let (true, Some(pool)) = (balanced, &node.facts.pool) {
            let entry = totals.entry(pool.clone()).or_default();
            entry.cost += node.facts.price;
            entry.disruption += node.facts.reschedule_cost();
        }
    }
    totals
}

/// The consolidation candidate for a node, with its pool's `totals` if the pool is Balanced.
fn candidate(node: &Node_<'_>, now: Timestamp, totals: &BTreeMap<String, PoolTotals>) -> Candidate {
    let pool = node.facts.pool.clone().unwrap_or_default();
    Candidate {
        balanced: totals.get(&pool).copied(),
        reschedule_cost: node.facts.reschedule_cost(),
        node: node.facts.name.clone(),
        pool,
        instance_type: node.instance_type.clone(),
        capacity_type: node.capacity_type,
        zone: node.zone.clone(),
        price: node.facts.price,
        pods: node.sim_pods.clone(),
        disruption_cost: node.facts.disruption_cost(now),
    }
}

/// The pods waiting for a node, as the scheduler sees them.
fn pending_pods(view: &View<'_>) -> Vec<SimPod> {
    view.state
        .pods
        .iter()
        .filter(|p| {
            crate::scheduler::is_pending(p) && !flotilla_nodes::pod::owned_by(p, "DaemonSet")
        })
        .filter_map(|p| from_k8s::sim_pod(p).ok())
        .collect()
}

/// A budget table for consolidation (`u32` per pool).
fn as_budgets(remaining: &Remaining) -> BTreeMap<String, u32> {
    remaining
        .iter()
        .map(|(k, v)| (k.clone(), u32::try_from(*v).unwrap_or(u32::MAX)))
        .collect()
}

/// The decision of this pass, if any method yields one.
fn decide(
    view: &View<'_>,
    ctx: &Context<'_>,
    all: &[Node_<'_>],
    memory: &mut Memory,
    plan: &mut Plan,
    now: Timestamp,
) -> Option<Proposal> {
    let graceful: Vec<&Node_<'_>> = all
        .iter()
        .filter(|n| rejection(&n.facts, Class::Graceful, false, now).is_none())
        .collect();
    for n in all
        .iter()
        .filter(|n| n.facts.initialized && !n.facts.deleting && !n.facts.queued)
    {
        let grace = n
            .pool
            .is_some_and(|p| p.spec.template.spec.termination_grace_period.is_some());
        let class = if n.facts.drifted_since.is_some() {
            Class::Eventual
        } else {
            Class::Graceful
        };
        if let Some(why) = rejection(&n.facts, class, grace, now)
            && memory.first_report(format!("blocked/{}/{why}", n.facts.name))
        {
            plan.push(Action::Record(EventNote::normal(
                COMPONENT,
                ObjectRef::of(n.node),
                "DisruptionBlocked",
                format!("Cannot disrupt Node: {why}"),
            )));
        }
    }
    // Static pools keep their count: neither emptiness nor consolidation removes their nodes.
    let never = |pool: &str| {
        view.pools.get(pool).is_some_and(|p| {
            super::provisioner::is_static(p)
                || p.spec
                    .disruption
                    .as_ref()
                    .and_then(|d| d.consolidate_after.as_deref())
                    == Some("Never")
        })
    };
    // Emptiness.
    let mut empty_budget = remaining(view, DisruptionReason::Empty, now);
    let facts: Vec<&NodeFacts> = graceful.iter().map(|n| &n.facts).collect();
    if let Some(command) = methods::emptiness::<NewClaim>(&facts, &never, &mut empty_budget) {
        return Some(Proposal {
            method: "Emptiness".into(),
            reason: command.reason,
            claims: command.claims,
            replacements: Vec::new(),
            explanation: command.explanation,
            decided_at: now,
        });
    }
    let models = pool_models(view, ctx);
    let existing: Vec<ExistingNode> = cluster_nodes(view, ctx, &[]);
    let pending = pending_pods(view);
    let cluster = Cluster {
        pools: &models,
        instance_types: ctx.catalog,
        nodes: &existing,
        pending: &pending,
    };
    // Drift: eventual, so pod-level blocks are waived where the pool sets a grace period.
    let drifting: Vec<&Node_<'_>> = all
        .iter()
        .filter(|n| {
            let grace = n
                .pool
                .is_some_and(|p| p.spec.template.spec.termination_grace_period.is_some());
            rejection(&n.facts, Class::Eventual, grace, now).is_none()
        })
        .collect();
    let mut drift_budget = remaining(view, DisruptionReason::Drifted, now);
    let by_claim: BTreeMap<&str, &Node_<'_>> =
        all.iter().map(|n| (n.facts.claim.as_str(), n)).collect();
    let mut simulator = Simulator::new(cluster);
    let drift_facts: Vec<&NodeFacts> = drifting.iter().map(|n| &n.facts).collect();
    let mut simulate = |facts: &NodeFacts| {
        let node = by_claim
            .get(facts.claim.as_str())
            .ok_or_else(|| "unknown node".to_string())?;
        let cand = candidate(node, now, &BTreeMap::new());
        let results = simulator.simulate(&[&cand]);
        match cand
            .pods
            .iter()
            .find_map(|p| results.unschedulable.get(&p.name).map(|r| (p, r)))
        {
            Some((pod, why)) => Err(format!("pod {} would not schedule: {why}", pod.name)),
            None => Ok(results.new_claims),
        }
    };
    if let Some(command) = methods::drift(&drift_facts, &mut drift_budget, &mut simulate) {
        return Some(Proposal {
            method: "Drift".into(),
            reason: command.reason,
            claims: command.claims,
            replacements: command.replacements,
            explanation: command.explanation,
            decided_at: now,
        });
    }
    // Consolidation: non-empty, consolidatable nodes of pools that allow it.
    let mut consolidatable: Vec<&Node_<'_>> = graceful
        .iter()
        .copied()
        .filter(|n| n.facts.consolidatable && !n.facts.is_empty())
        .filter(|n| {
            n.pool.is_some_and(|p| {
                let d = p.spec.disruption.clone().unwrap_or_default();
                !super::provisioner::is_static(p)
                    && d.consolidate_after.as_deref() != Some("Never")
                    && d.consolidation_policy.unwrap_or_default() != ConsolidationPolicy::WhenEmpty
            })
        })
        .collect();
    consolidatable.sort_by(|a, b| {
        b.facts
            .consolidation_priority()
            .total_cmp(&a.facts.consolidation_priority())
            .then_with(|| a.facts.name.cmp(&b.facts.name))
    });
    let totals = balanced_totals(all);
    let candidates: Vec<Candidate> = consolidatable
        .iter()
        .map(|n| candidate(n, now, &totals))
        .collect();
    let budgets = as_budgets(&remaining(view, DisruptionReason::Underutilized, now));
    let options = ctx.consolidation;
    let mut simulations = 0usize;
    let mut stop = || {
        simulations += 1;
        simulations > 200
    };
    for decision in [
        multi_node_consolidation(cluster, &candidates, &budgets, &options, &mut stop),
        single_node_consolidation(cluster, &candidates, &budgets, &[], &options, &mut stop),
    ] {
        for rejected in &decision.rejected {
            if let [only] = rejected.candidates.as_slice()
                && let Some(n) = consolidatable.iter().find(|n| &n.facts.name == only)
                && memory.first_report(format!("unconsolidatable/{only}/{}", rejected.why))
            {
                plan.push(claim_event(
                    n.claim,
                    "Unconsolidatable",
                    rejected.why.to_string(),
                ));
            }
        }
        count_moves(&decision, &consolidatable, plan);
        if let Some(command) = decision.command {
            approved_events(&command, &consolidatable, view, plan);
            return Some(consolidation_proposal(&command, &consolidatable, now));
        }
    }
    None
}

/// Counts a method's moves in `karpenter_consolidation_moves_total` (the command's, per pool of
/// its candidates, approved; those Balanced pools rejected) and their Balanced scores in
/// `karpenter_consolidation_score`.
fn count_moves(decision: &consolidation::Decision, nodes: &[&Node_<'_>], plan: &mut Plan) {
    let policy = |pool: &str| {
        nodes
            .iter()
            .filter_map(|n| n.pool)
            .find(|p| p.metadata.name.as_deref() == Some(pool))
            .and_then(|p| p.spec.disruption.as_ref())
            .and_then(|d| d.consolidation_policy)
            .unwrap_or_default()
            .as_str()
    };
    for rejected in &decision.rejected {
        if let consolidation::Rejection::Unbalanced(score) = &rejected.why {
            let labels = ["rejected", score.pool.as_str(), "Balanced"];
            plan.observe(&metrics::CONSOLIDATION_MOVES, &labels, 1.0);
            plan.observe(&metrics::CONSOLIDATION_SCORE, &labels, score.value());
        }
    }
    let Some(command) = &decision.command else {
        return;
    };
    let mut pools: Vec<&str> = command
        .candidates
        .iter()
        .filter_map(|name| nodes.iter().find(|n| &n.facts.name == name))
        .filter_map(|n| n.facts.pool.as_deref())
        .collect();
    pools.sort_unstable();
    pools.dedup();
    for pool in pools {
        let labels = ["approved", pool, policy(pool)];
        plan.observe(&metrics::CONSOLIDATION_MOVES, &labels, 1.0);
        if let Some(score) = command.scores.iter().find(|s| s.pool == pool) {
            plan.observe(&metrics::CONSOLIDATION_SCORE, &labels, score.value());
        }
    }
}

/// Karpenter's `ConsolidationApproved` events for a command Balanced pools scored: on the node
/// and its claim for a single node, on each scored pool for several.
fn approved_events(
    command: &consolidation::Command,
    nodes: &[&Node_<'_>],
    view: &View<'_>,
    plan: &mut Plan,
) {
    for score in &command.scores {
        let message = score.to_string();
        if let [only] = command.candidates.as_slice() {
            if let Some(n) = nodes.iter().find(|n| &n.facts.name == only) {
                plan.push(Action::Record(EventNote::normal(
                    COMPONENT,
                    ObjectRef::of(n.node),
                    "ConsolidationApproved",
                    message.clone(),
                )));
                plan.push(claim_event(n.claim, "ConsolidationApproved", message));
            }
        } else if let Some(pool) = view.pools.get(score.pool.as_str()) {
            plan.push(Action::Record(EventNote::normal(
                COMPONENT,
                super::reference(*pool),
                "ConsolidationApproved",
                message,
            )));
        }
    }
}

/// A consolidation command as a proposal.
fn consolidation_proposal(
    command: &consolidation::Command,
    nodes: &[&Node_<'_>],
    now: Timestamp,
) -> Proposal {
    let claims = command
        .candidates
        .iter()
        .filter_map(|name| nodes.iter().find(|n| &n.facts.name == name))
        .map(|n| n.facts.claim.clone())
        .collect();
    let replacements = match &command.action {
        consolidation::Action::Delete => Vec::new(),
        consolidation::Action::Replace(claim) => vec![claim.clone()],
    };
    Proposal {
        method: command.method.to_string(),
        reason: DisruptionReason::Underutilized,
        claims,
        replacements,
        explanation: command.to_string(),
        decided_at: now,
    }
}

/// Re-checks a proposal after the validation delay: its candidates must all still be
/// consolidatable candidates within budget, and (for consolidation) the same kind of command
/// must still hold.
fn validate(
    proposal: &Proposal,
    view: &View<'_>,
    ctx: &Context<'_>,
    all: &[Node_<'_>],
    now: Timestamp,
) -> Result<Proposal, String> {
    let mut budget = remaining(view, proposal.reason, now);
    let mut chosen = Vec::new();
    for claim in &proposal.claims {
        let node = all
            .iter()
            .find(|n| &n.facts.claim == claim)
            .ok_or_else(|| format!("NodeClaim {claim} is gone"))?;
        if let Some(why) = rejection(&node.facts, Class::Graceful, false, now) {
            return Err(format!(
                "node {} is no longer a candidate: {why}",
                node.facts.name
            ));
        }
        // Karpenter re-derives the candidates with the method's ShouldDisrupt, which needs
        // `Consolidatable`: a pod arriving or leaving since the decision restarts
        // consolidateAfter.
        if !node.facts.consolidatable {
            return Err(format!(
                "node {} is no longer consolidatable: a pod arrived or left within consolidateAfter",
                node.facts.name
            ));
        }
        if proposal.reason == DisruptionReason::Empty && !node.facts.is_empty() {
            return Err(format!("node {} is no longer empty", node.facts.name));
        }
        let pool = node.facts.pool.clone().unwrap_or_default();
        match budget.get_mut(&pool) {
            Some(left) if *left > 0 => *left -= 1,
            _ => {
                return Err(format!(
                    "NodePool {pool} has no {} disruptions left",
                    proposal.reason.as_str()
                ));
            }
        }
        chosen.push(node);
    }
    if proposal.reason != DisruptionReason::Underutilized {
        return Ok(proposal.clone());
    }
    let models = pool_models(view, ctx);
    let existing = cluster_nodes(view, ctx, &[]);
    let pending = pending_pods(view);
    let mut simulator = Simulator::new(Cluster {
        pools: &models,
        instance_types: ctx.catalog,
        nodes: &existing,
        pending: &pending,
    });
    // Karpenter's validation does not score Balanced moves again.
    let candidates: Vec<Candidate> = chosen
        .iter()
        .map(|n| candidate(n, now, &BTreeMap::new()))
        .collect();
    let refs: Vec<&Candidate> = candidates.iter().collect();
    let method = if refs.len() > 1 {
        Method::MultiNode
    } else {
        Method::SingleNode
    };
    let command = compute_consolidation(&mut simulator, &refs, method, &ctx.consolidation)
        .map_err(|why| why.to_string())?;
    let replaces = command.replacement_price().is_some();
    if replaces == proposal.replacements.is_empty() {
        return Err("the cluster changed: the command would now be a different kind".into());
    }
    Ok(consolidation_proposal(&command, &chosen, now))
}

/// Karpenter's `consolidation_type` label for a decision's method: `empty`, `single`,
/// `multi`, or nothing for drift.
fn consolidation_type(method: &str) -> &'static str {
    if method == "Emptiness" {
        "empty"
    } else if method.starts_with("single") {
        "single"
    } else if method.starts_with("multi") {
        "multi"
    } else {
        ""
    }
}

/// Starts a command: launches its replacements, marks and taints its candidates, and counts
/// the decision.
fn start(
    proposal: &Proposal,
    view: &View<'_>,
    ctx: &Context<'_>,
    all: &[Node_<'_>],
    marks: &mut Marks,
    plan: &mut Plan,
) {
    let salt = proposal.claims.join(",");
    let mut names = Vec::new();
    for (i, new) in proposal.replacements.iter().enumerate() {
        let Some(pool) = view.pools.get(new.pool.as_str()) else {
            return;
        };
        let Ok(class) = view.class_of(pool) else {
            return;
        };
        let name = claim_name(new, &format!("{salt}/{i}"));
        plan.push(Action::create(&claim_for(
            new,
            pool,
            class,
            &name,
            ctx.catalog,
        )));
        plan.observe(
            &metrics::NODECLAIMS_CREATED,
            &["disruption", &new.pool],
            1.0,
        );
        names.push(name);
    }
    let reason = proposal.reason.as_str().to_lowercase();
    let decision = if names.is_empty() {
        "delete"
    } else {
        "replace"
    };
    plan.observe(
        &metrics::DISRUPTION_DECISIONS,
        &[decision, &reason, consolidation_type(&proposal.method)],
        1.0,
    );
    for claim in &proposal.claims {
        let Some(node) = all.iter().find(|n| &n.facts.claim == claim) else {
            continue;
        };
        let pool = node.pool.and_then(|p| p.metadata.name.as_deref());
        plan.observe(
            &metrics::NODECLAIMS_DISRUPTED,
            &[&reason, pool.unwrap_or_default()],
            1.0,
        );
        let mut annotated = node.claim.clone();
        annotated
            .metadata
            .annotations
            .get_or_insert_default()
            .insert(REPLACEMENTS_ANNOTATION.into(), names.join(","));
        plan.push(Action::update(&annotated));
        plan.push(Action::update(&with_taint(node.node, true)));
        marks.insert(
            claim.clone(),
            Some((
                proposal.reason,
                format!("{}: {}", proposal.method, proposal.explanation),
            )),
        );
        let what = if names.is_empty() {
            format!("Disrupting NodeClaim: {}", proposal.reason.as_str())
        } else {
            format!(
                "Launching NodeClaim(s) {}: {}",
                names.join(", "),
                proposal.reason.as_str()
            )
        };
        plan.push(claim_event(
            node.claim,
            "DisruptionLaunching",
            format!("{what} ({})", proposal.explanation),
        ));
    }
}

/// One disruption pass at `now`: the queue, then the pending proposal or a new decision.
/// `budgets` say what the PodDisruptionBudgets covering each pod allow.
pub fn reconcile(
    view: &View<'_>,
    ctx: &Context<'_>,
    memory: &mut Memory,
    budgets: &Budgets,
    now: Timestamp,
) -> (Plan, Marks) {
    let mut plan = Plan::default();
    let mut marks = Marks::new();
    queue(view, &mut marks, &mut plan, now);
    let all = nodes(view, ctx, budgets, now);
    if let Some(proposal) = memory.pending.take() {
        let due = proposal
            .decided_at
            .checked_add(VALIDATION_DELAY)
            .unwrap_or(now);
        if now < due {
            plan.wake(due);
            memory.pending = Some(proposal);
            return (plan, marks);
        }
        match validate(&proposal, view, ctx, &all, now) {
            Ok(valid) => start(&valid, view, ctx, &all, &mut marks, &mut plan),
            Err(why) => {
                if let Some(pool) = all
                    .iter()
                    .find(|n| proposal.claims.contains(&n.facts.claim))
                    .and_then(|n| n.pool)
                {
                    plan.push(Action::Record(EventNote::normal(
                        COMPONENT,
                        reference(pool),
                        "DisruptionAbandoned",
                        format!(
                            "{} ({}) abandoned after validation: {why}",
                            proposal.method, proposal.explanation
                        ),
                    )));
                }
            }
        }
        return (plan, marks);
    }
    if let Some(proposal) = decide(view, ctx, &all, memory, &mut plan, now) {
        if proposal.reason == DisruptionReason::Drifted {
            start(&proposal, view, ctx, &all, &mut marks, &mut plan);
        } else {
            for claim in &proposal.claims {
                if let Some(node) = all.iter().find(|n| &n.facts.claim == claim) {
                    plan.push(claim_event(
                        node.claim,
                        "DisruptionProposed",
                        format!(
                            "chosen by {}: {}; re-checked in {}s",
                            proposal.method,
                            proposal.explanation,
                            VALIDATION_DELAY.as_secs()
                        ),
                    ));
                }
            }
            plan.wake(
                proposal
                    .decided_at
                    .checked_add(VALIDATION_DELAY)
                    .unwrap_or(now),
            );
            memory.pending = Some(proposal);
        }
    }
    (plan, marks)
}
