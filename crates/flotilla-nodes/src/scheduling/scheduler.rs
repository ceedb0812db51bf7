//! Karpenter's provisioning scheduler (`provisioning/scheduling/scheduler.go`): places pods on
//! existing nodes, on claims it is already planning, or on new claims from the pools, and says
//! why the rest cannot be placed.
//!
//! Pods go largest first (CPU, then memory, descending). Each pod tries, in order:
//! 1. existing nodes, initialized ones first, then by name; the first with room, tolerated
//!    taints and matching labels takes it;
//! 2. the claims planned so far, fewest pods first (then oldest first); the first that stays
//!    compatible with some instance type holding all of its pods takes it;
//! 3. a new claim from the first pool (highest weight, then name) whose taints it tolerates,
//!    whose requirements are compatible with its own, and which has an instance type within
//!    the pool's remaining limits with room for the daemon overhead and the pod.
//!
//! A pod with several required node-affinity terms tries them in order and keeps the first that
//! places it (Karpenter relaxes to the next term after a failed pass; here the next term is tried
//! at once). A pod's `DoNotSchedule` topology spread constraints and required pod affinity and
//! anti-affinity ([`super::topology`]) are checked at every place it could go, and narrow an
//! open claim to the domain they choose. Preferences (preferred affinities, `ScheduleAnyway`),
//! the inverse of anti-affinity terms of pods already placed, host ports and volume limits are
//! not modelled.

use std::collections::{BTreeMap, BTreeSet};

use super::claim::{Catalog, OpenFailure, PlannedClaim, Template};
use super::compatibility::{Compatibility, SetId};
use super::instance_types::InstanceType;
use super::labels;
use super::model::{ExistingNode, NodePool, SimPod, ports_clash};
use super::requirements::{Operator, Requirement, Requirements};
use super::resources::Resources;
use super::taints::untolerated;
use super::topology::{HOSTNAME, PodSelector, affinity_domains, spread_domain};

/// At most this many instance-type options are kept for a claim, the cheapest (Karpenter's
/// `MaxInstanceTypes`).
pub const MAX_INSTANCE_TYPES: usize = 600;

/// How a scheduling run treats special cases.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedulingOptions {
    /// Report pods placed on an uninitialized existing node as unschedulable (a consolidation
    /// simulation must not count on a node that may never become ready).
    pub uninitialized_nodes_are_errors: bool,
}

/// An instance type a new claim may launch, with the price of its cheapest compatible offering.
#[derive(Clone, Debug, PartialEq)]
pub struct InstanceTypeOption {
    /// The instance type name.
    pub name: String,
    /// The price per hour of its cheapest available offering compatible with the claim.
    pub price: f64,
}

/// A node the pods need launched.
#[derive(Clone, Debug, PartialEq)]
pub struct NewClaim {
    /// The pool it comes from.
    pub pool: String,
    /// The pool's requirements (its labels and name included) narrowed by every pod's.
    pub requirements: Requirements,
    /// The instance types able to hold all of its pods, cheapest first (then by name), at most
    /// [`MAX_INSTANCE_TYPES`].
    pub instance_type_options: Vec<InstanceTypeOption>,
    /// The daemon overhead plus its pods' requests.
    pub requests: Resources,
    /// Its pods, in placement order.
    pub pods: Vec<String>,
}

impl NewClaim {
    /// The price of the cheapest option, what the launch would most likely cost.
    pub fn cheapest_price(&self) -> Option<f64> {
        self.instance_type_options.first().map(|o| o.price)
    }
}

/// Where each pod goes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Results {
    /// Existing node name → the pods placed on it, in placement order.
    pub existing: BTreeMap<String, Vec<String>>,
    /// The nodes to launch, in the order they were planned.
    pub new_claims: Vec<NewClaim>,
    /// Pod name → why it cannot be placed.
    pub unschedulable: BTreeMap<String, String>,
}

/// A scheduler over a set of pools and an instance-type catalog. It remembers the requirement
/// algebra it has worked out, so reusing one across runs (as consolidation does for each
/// simulation) makes later runs cheaper; each run is still a pure function of its inputs.
pub struct Scheduler<'a> {
    /// The pools, highest weight first, then by name, each with its template requirements.
    pools: Vec<Template<'a>>,
    catalog: Catalog<'a>,
    /// The zones and capacity types the catalog offers: topology domains a new claim can reach.
    offered: BTreeMap<&'static str, BTreeSet<String>>,
}

/// The index of `selector`'s entry in the run's selector cache, computing which of the run's
/// pods and how many pods bound to each node it matches the first time it is met.
fn matches_of(run: &mut Run<'_>, pods: &[&SimPod], selector: &PodSelector) -> usize {
    if let Some(i) = run.selectors.iter().position(|m| &m.selector == selector) {
        return i;
    }
    let matching = |namespace: &str, labels| selector.matches(namespace, labels);
    run.selectors.push(SelectorMatches {
        selector: selector.clone(),
        pods: pods
            .iter()
            .map(|p| matching(&p.topology.namespace, &p.topology.labels))
            .collect(),
        bound: run
            .nodes
            .iter()
            .map(|slot| {
                let bound = &slot.node.bound;
                bound
                    .iter()
                    .filter(|b| matching(&b.namespace, &b.labels))
                    .count()
            })
            .collect(),
    });
    run.selectors.len() - 1
}

/// A place a pod could go, for topology.
#[derive(Clone, Copy)]
enum Place {
    Node(usize),
    Claim(usize),
    Pool(usize),
}

/// An existing node during a run.
struct NodeSlot<'n> {
    node: &'n ExistingNode,
    requested: Resources,
    pods: Vec<usize>,
}

/// The state of one run.
struct Run<'n> {
    nodes: Vec<NodeSlot<'n>>,
    claims: Vec<PlannedClaim>,
    /// Claim indices, fewest pods first, then oldest first.
    by_fewest_pods: Vec<usize>,
    /// Each pool's remaining limits, in the scheduler's pool order.
    remaining: Vec<Option<Resources>>,
    /// How many more nodes each pool's `limits.nodes` allows, in the same order.
    remaining_nodes: Vec<Option<u64>>,
    /// Each topology selector met so far, with which pods of the run and how many bound pods
    /// of each node it matches (the pods and nodes do not change during a run).
    selectors: Vec<SelectorMatches>,
}

/// Which pods one topology selector matches in a run.
struct SelectorMatches {
    selector: PodSelector,
    /// By pod index among the run's pods.
    pods: Vec<bool>,
    /// By node index among the run's nodes: matching pods already bound there.
    bound: Vec<usize>,
}

/// One topology constraint of the pod being placed, as the run stands: matching pods per
/// domain, and every domain the pod could reach. Computed once per pod, for every place it
/// tries.
struct Counted {
    counts: BTreeMap<String, usize>,
    universe: BTreeSet<String>,
}

impl Run<'_> {
    fn order_key(&self, claim: usize) -> (usize, usize) {
        (self.claims[claim].pods.len(), claim)
    }

    /// Moves the claim at `position` of `by_fewest_pods` back past claims that now have fewer
    /// pods than it.
    fn claim_grew(&mut self, position: usize) {
        let key = self.order_key(self.by_fewest_pods[position]);
        let mut i = position;
        while i + 1 < self.by_fewest_pods.len() && self.order_key(self.by_fewest_pods[i + 1]) < key
        {
            self.by_fewest_pods.swap(i, i + 1);
            i += 1;
        }
    }

    fn add_claim(&mut self, claim: PlannedClaim) {
        self.claims.push(claim);
        let index = self.claims.len() - 1;
        let key = self.order_key(index);
        let position = self
            .by_fewest_pods
            .partition_point(|&c| self.order_key(c) < key);
        self.by_fewest_pods.insert(position, index);
    }
}

impl<'a> Scheduler<'a> {
    /// A scheduler launching from `pools` with `instance_types`.
    pub fn new(pools: &'a [NodePool], instance_types: &'a [InstanceType]) -> Self {
        let mut catalog = Catalog::new(instance_types);
        let mut ordered: Vec<&NodePool> = pools.iter().collect();
        ordered.sort_by(|a, b| b.weight.cmp(&a.weight).then_with(|| a.name.cmp(&b.name)));
        let pools = ordered
            .into_iter()
            .enumerate()
            .map(|(index, pool)| {
                let mut template = pool
                    .requirements
                    .intersection(&Requirements::from_labels(&pool.labels));
                template.add(labels::NODE_POOL, Requirement::single(&pool.name));
                Template {
                    index,
                    pool,
                    requirements: catalog.compatibility.intern(&template),
                }
            })
            .collect();
        let mut offered: BTreeMap<&'static str, BTreeSet<String>> = BTreeMap::new();
        for offering in instance_types.iter().flat_map(|it| &it.offerings) {
            offered
                .entry(labels::ZONE)
                .or_default()
                .insert(offering.zone.clone());
            offered
                .entry(labels::CAPACITY_TYPE)
                .or_default()
                .insert(offering.capacity_type.label().to_string());
        }
        Scheduler {
            pools,
            catalog,
            offered,
        }
    }

    /// The instance-type catalog it launches from.
    pub fn instance_types(&self) -> &'a [InstanceType] {
        self.catalog.instance_types
    }

    /// Places `pods` on `nodes` (with what is already bound to them) or on new claims. Pod names
    /// must be unique.
    pub fn schedule(
        &mut self,
        nodes: &[&ExistingNode],
        pods: &[&SimPod],
        options: SchedulingOptions,
    ) -> Results {
        let (term_ids, term_starts) = self.intern_terms(pods);
        let mut order: Vec<usize> = (0..pods.len()).collect();
        order.sort_by(|&a, &b| {
            let (a, b) = (&pods[a].requests, &pods[b].requests);
            (b.cpu_millis, b.memory_bytes).cmp(&(a.cpu_millis, a.memory_bytes))
        });
        let mut sorted_nodes: Vec<&ExistingNode> = nodes.to_vec();
        sorted_nodes.sort_by(|a, b| (!a.initialized, &a.name).cmp(&(!b.initialized, &b.name)));
        let mut run = Run {
            nodes: sorted_nodes
                .into_iter()
                .map(|node| NodeSlot {
                    node,
                    requested: node.requested,
                    pods: Vec::new(),
                })
                .collect(),
            claims: Vec::new(),
            by_fewest_pods: Vec::new(),
            remaining: self.pools.iter().map(|t| t.pool.remaining).collect(),
            remaining_nodes: self.pools.iter().map(|t| t.pool.remaining_nodes).collect(),
            selectors: Vec::new(),
        };
        let mut unschedulable = BTreeMap::new();
        for index in order {
            let terms = &term_ids[term_starts[index]..term_starts[index + 1]];
            let mut failures = Vec::new();
            for &term in terms {
                match self.place(&mut run, pods, index, term) {
                    Ok(()) => {
                        failures.clear();
                        break;
                    }
                    Err(why) => failures.push(why),
                }
            }
            if !failures.is_empty() {
                unschedulable.insert(pods[index].name.clone(), self.explain(&failures));
            }
        }
        self.results(run, pods, unschedulable, options)
    }

    /// Each pod's requirement terms as ids, flattened: pod `i`'s are
    /// `ids[starts[i]..starts[i + 1]]`, at least one each.
    fn intern_terms(&mut self, pods: &[&SimPod]) -> (Vec<SetId>, Vec<usize>) {
        let mut ids = Vec::with_capacity(pods.len());
        let mut starts = Vec::with_capacity(pods.len() + 1);
        for pod in pods {
            starts.push(ids.len());
            if pod.requirement_terms.is_empty() {
                ids.push(Compatibility::NONE);
            }
            for term in &pod.requirement_terms {
                ids.push(self.catalog.compatibility.intern(term));
            }
        }
        starts.push(ids.len());
        (ids, starts)
    }

    /// Places pod `index` under requirement `term`, or says why no pool can open a claim for it.
    fn place(
        &mut self,
        run: &mut Run<'_>,
        pods: &[&SimPod],
        index: usize,
        term: SetId,
    ) -> Result<(), Vec<(usize, OpenFailure)>> {
        let pod = pods[index];
        let constrained = pod.topology.constrained();
        let views = match constrained {
            true => self.count(run, pods, pod),
            false => Vec::new(),
        };
        let requirements = self.catalog.compatibility.get(term);
        let fitting_node = (0..run.nodes.len()).find(|&i| {
            let slot = &run.nodes[i];
            (slot.requested + pod.requests).fits(&slot.node.allocatable)
                && untolerated(&slot.node.taints, &pod.tolerations).is_none()
                && requirements.matches(&slot.node.labels)
                && !ports_clash(
                    &pod.host_ports,
                    slot.node
                        .bound
                        .iter()
                        .flat_map(|b| &b.host_ports)
                        .chain(slot.pods.iter().flat_map(|&p| &pods[p].host_ports)),
                )
                && (!constrained
                    || self
                        .narrow(run, &views, pod, term, Place::Node(i))
                        .is_some())
        });
        if let Some(i) = fitting_node {
            let slot = &mut run.nodes[i];
            slot.requested += pod.requests;
            slot.pods.push(index);
            return Ok(());
        }
        for position in 0..run.by_fewest_pods.len() {
            let claim_index = run.by_fewest_pods[position];
            let held = run.claims[claim_index].pods.iter();
            if ports_clash(&pod.host_ports, held.flat_map(|&p| &pods[p].host_ports)) {
                continue;
            }
            let term = match constrained {
                false => term,
                true => match self.narrow(run, &views, pod, term, Place::Claim(claim_index)) {
                    Some(narrowed) => self.catalog.compatibility.intern(&narrowed),
                    None => continue,
                },
            };
            let claim = &mut run.claims[claim_index];
            let pool = self.pools[claim.pool].pool;
            if claim.try_add(pool, index, pod, term, &mut self.catalog) {
                run.claim_grew(position);
                return Ok(());
            }
        }
        let mut failures = Vec::new();
        for position in 0..self.pools.len() {
            let template = self.pools[position];
            let pool_index = template.index;
            if run.remaining_nodes[pool_index] == Some(0) {
                failures.push((pool_index, OpenFailure::NodeLimit));
                continue;
            }
            let term = match constrained {
                false => term,
                true => match self.narrow(run, &views, pod, term, Place::Pool(position)) {
                    Some(narrowed) => self.catalog.compatibility.intern(&narrowed),
                    None => {
                        failures.push((pool_index, OpenFailure::Topology));
                        continue;
                    }
                },
            };
            let remaining = run.remaining[pool_index].as_ref();
            match PlannedClaim::open(template, remaining, index, pod, term, &mut self.catalog) {
                Ok(claim) => {
                    if let Some(remaining) = &mut run.remaining[pool_index] {
                        *remaining -= claim.largest_capacity(self.catalog.instance_types);
                    }
                    if let Some(nodes) = &mut run.remaining_nodes[pool_index] {
                        *nodes -= 1;
                    }
                    run.add_claim(claim);
                    return Ok(());
                }
                Err(why) => failures.push((pool_index, why)),
            }
        }
        Err(failures)
    }

    /// The requirements under which `pod` may go to `place` as its topology allows: `term`
    /// narrowed to the domains its spread constraints and pod (anti-)affinity terms choose, or
    /// `None` when they allow no domain there.
    fn narrow(
        &self,
        run: &Run<'_>,
        views: &[Counted],
        pod: &SimPod,
        term: SetId,
        place: Place,
    ) -> Option<Requirements> {
        let compatibility = &self.catalog.compatibility;
        let pod_term = compatibility.get(term).clone();
        let mut narrowed = pod_term.clone();
        let place_requirements = match place {
            Place::Node(_) => None,
            Place::Claim(j) => Some(compatibility.get(run.claims[j].requirements)),
            Place::Pool(t) => Some(compatibility.get(self.pools[t].requirements)),
        };
        let topology = &pod.topology;
        let constraints = topology
            .spread
            .iter()
            .map(|s| (s.key.as_str(), &s.pods, Some(s.max_skew), false))
            .chain(
                topology
                    .affinity
                    .iter()
                    .map(|a| (a.key.as_str(), &a.pods, None, a.anti)),
            );
        for ((key, selector, max_skew, anti), view) in constraints.zip(views) {
            let Counted { counts, universe } = view;
            let hostname = key == HOSTNAME;
            // The domains the place can be in.
            let candidates: Vec<String> = match place {
                Place::Node(i) => node_domain(run.nodes[i].node, key).into_iter().collect(),
                Place::Claim(j) if hostname => vec![claim_host(j)],
                Place::Pool(_) if hostname => vec![NEW_HOST.to_string()],
                _ => universe
                    .iter()
                    .filter(|d| {
                        [place_requirements, Some(&narrowed)]
                            .into_iter()
                            .flatten()
                            .all(|r| r.get(key).is_none_or(|r| r.has(d)))
                    })
                    .cloned()
                    .collect(),
            };
            let allowed: Vec<&str> = match max_skew {
                Some(skew) => {
                    let eligible = universe
                        .iter()
                        .map(String::as_str)
                        .filter(|d| pod_term.get(key).is_none_or(|r| r.has(d)));
                    spread_domain(
                        counts,
                        eligible,
                        candidates.iter().map(String::as_str),
                        skew,
                        hostname,
                    )
                    .into_iter()
                    .collect()
                }
                None => {
                    let self_match = selector.matches(&topology.namespace, &topology.labels);
                    affinity_domains(
                        counts,
                        candidates.iter().map(String::as_str),
                        anti,
                        self_match,
                    )
                }
            };
            if allowed.is_empty() {
                return None;
            }
            if !hostname && matches!(place, Place::Claim(_) | Place::Pool(_)) {
                let requirement = Requirement::new(Operator::In, &allowed).ok()?;
                narrowed.add(key, requirement);
            }
        }
        Some(narrowed)
    }

    /// Each topology constraint of `pod` (its spread constraints, then its affinity terms) as
    /// the run stands.
    fn count(&self, run: &mut Run<'_>, pods: &[&SimPod], pod: &SimPod) -> Vec<Counted> {
        let topology = &pod.topology;
        let constraints = topology
            .spread
            .iter()
            .map(|s| (s.key.as_str(), &s.pods))
            .chain(topology.affinity.iter().map(|a| (a.key.as_str(), &a.pods)));
        constraints
            .map(|(key, selector)| {
                let matches = matches_of(run, pods, selector);
                Counted {
                    counts: self.counts(run, matches, key),
                    universe: self.universe(run, key),
                }
            })
            .collect()
    }

    /// Matching pods per domain of `key` (by the run's selector cache entry `matches`): those
    /// bound to existing nodes, and those this run placed on nodes and on claims whose domain
    /// is decided.
    fn counts(&self, run: &Run<'_>, matches: usize, key: &str) -> BTreeMap<String, usize> {
        let matches = &run.selectors[matches];
        let placed = |indices: &[usize]| indices.iter().filter(|&&i| matches.pods[i]).count();
        let mut counts = BTreeMap::new();
        for (i, slot) in run.nodes.iter().enumerate() {
            if let Some(domain) = node_domain(slot.node, key) {
                *counts.entry(domain).or_insert(0) += matches.bound[i] + placed(&slot.pods);
            }
        }
        for (j, claim) in run.claims.iter().enumerate() {
            let domain = if key == HOSTNAME {
                Some(claim_host(j))
            } else {
                let requirements = self.catalog.compatibility.get(claim.requirements);
                requirements
                    .get(key)
                    .and_then(|r| r.values())
                    .filter(|v| v.len() == 1)
                    .and_then(|v| v.iter().next().cloned())
            };
            if let Some(domain) = domain {
                *counts.entry(domain).or_insert(0) += placed(&claim.pods);
            }
        }
        counts
    }

    /// Every domain of `key` a pod could reach: the catalog's offered zones and capacity
    /// types, the values the pools' templates name, and the existing nodes' labels.
    fn universe(&self, run: &Run<'_>, key: &str) -> BTreeSet<String> {
        let mut domains = self.offered.get(key).cloned().unwrap_or_default();
        for template in &self.pools {
            let requirements = self.catalog.compatibility.get(template.requirements);
            if let Some(values) = requirements.get(key).and_then(|r| r.values()) {
                domains.extend(values.iter().cloned());
            }
        }
        domains.extend(run.nodes.iter().filter_map(|s| node_domain(s.node, key)));
        domains
    }

    /// Why a pod could not be placed under any of its terms: each pool's reason, per term.
    fn explain(&self, failures: &[Vec<(usize, OpenFailure)>]) -> String {
        let per_term: Vec<String> = failures
            .iter()
            .map(|pools| {
                if pools.is_empty() {
                    return "no existing node has room and there is no node pool".to_string();
                }
                let reasons: Vec<String> = pools
                    .iter()
                    .map(|(pool, why)| format!("nodepool {:?}: {why}", self.pools[*pool].pool.name))
                    .collect();
                reasons.join("; ")
            })
            .collect();
        match per_term.as_slice() {
            [only] => only.clone(),
            _ => per_term
                .iter()
                .enumerate()
                .map(|(i, why)| format!("node affinity term {}: {why}", i + 1))
                .collect::<Vec<_>>()
                .join(" | "),
        }
    }

    fn results(
        &self,
        run: Run<'_>,
        pods: &[&SimPod],
        mut unschedulable: BTreeMap<String, String>,
        options: SchedulingOptions,
    ) -> Results {
        let names = |indices: &[usize]| {
            indices
                .iter()
                .map(|&i| pods[i].name.clone())
                .collect::<Vec<_>>()
        };
        let mut existing = BTreeMap::new();
        for slot in run.nodes.iter().filter(|slot| !slot.pods.is_empty()) {
            if options.uninitialized_nodes_are_errors && !slot.node.initialized {
                for pod in names(&slot.pods) {
                    let why = format!(
                        "would schedule against uninitialized node {:?}",
                        slot.node.name
                    );
                    unschedulable.insert(pod, why);
                }
            } else {
                existing.insert(slot.node.name.clone(), names(&slot.pods));
            }
        }
        let new_claims = run
            .claims
            .iter()
            .map(|claim| {
                let requirements = self.catalog.compatibility.get(claim.requirements).clone();
                let types = claim
                    .options
                    .iter()
                    .map(|&i| &self.catalog.instance_types[i as usize]);
                let instance_type_options = instance_type_options(types, &requirements);
                NewClaim {
                    pool: self.pools[claim.pool].pool.name.clone(),
                    requirements,
                    instance_type_options,
                    requests: claim.requests,
                    pods: names(&claim.pods),
                }
            })
            .collect();
        Results {
            existing,
            new_claims,
            unschedulable,
        }
    }
}

/// A claim's options among `types` under `requirements`: each type with the price of its
/// cheapest compatible offering (types without one left out), cheapest first, then by name, at
/// most [`MAX_INSTANCE_TYPES`].
pub fn instance_type_options<'t>(
    types: impl IntoIterator<Item = &'t InstanceType>,
    requirements: &Requirements,
) -> Vec<InstanceTypeOption> {
    let mut options: Vec<InstanceTypeOption> = types
        .into_iter()
        .filter_map(|it| {
            Some(InstanceTypeOption {
                name: it.name.clone(),
                price: it.cheapest_offering(requirements)?.price,
            })
        })
        .collect();
    options.sort_by(|a, b| {
        a.price
            .total_cmp(&b.price)
            .then_with(|| a.name.cmp(&b.name))
    });
    options.truncate(MAX_INSTANCE_TYPES);
    options
}

/// The hostname domain of a claim planned in this run (never a node's name).
fn claim_host(claim: usize) -> String {
    format!("\u{1}claim-{claim}")
}

/// The hostname domain of a claim not planned yet.
const NEW_HOST: &str = "\u{1}new";

/// The domain of `key` an existing node is in: its name for hostnames, else its label.
fn node_domain(node: &ExistingNode, key: &str) -> Option<String> {
    if key == HOSTNAME {
        Some(node.name.clone())
    } else {
        node.labels.get(key).cloned()
    }
}

/// Schedules `pods` onto `nodes` or new claims from `pools` in one run: a [`Scheduler`] built
/// for the call.
pub fn schedule(
    pools: &[NodePool],
    instance_types: &[InstanceType],
    nodes: &[ExistingNode],
    pods: &[SimPod],
    options: SchedulingOptions,
) -> Results {
    let nodes: Vec<&ExistingNode> = nodes.iter().collect();
    let pods: Vec<&SimPod> = pods.iter().collect();
    Scheduler::new(pools, instance_types).schedule(&nodes, &pods, options)
}
