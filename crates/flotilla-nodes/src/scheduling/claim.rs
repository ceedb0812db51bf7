//! A node claim the scheduler plans to launch: the pool it comes from, the requirements its pods
//! narrowed it to, and the instance types still able to hold all of its pods (Karpenter's
//! in-flight `scheduling.NodeClaim`).

use std::fmt;

use super::compatibility::{Compatibility, SetId, TypeSet};
use super::instance_types::{InstanceType, MinValuesShortfall, unmet_min_values};
use super::model::{NodePool, SimPod};
use super::requirements::{Incompatibility, Requirements, Undefined};
use super::resources::Resources;
use super::taints::{Taint, untolerated};

/// The instance-type catalog with what the scheduler derives from it.
pub(super) struct Catalog<'a> {
    pub(super) instance_types: &'a [InstanceType],
    /// Each instance type's allocatable resources, by catalog index.
    allocatable: Vec<Resources>,
    pub(super) compatibility: Compatibility<'a>,
    /// Reused for the options an attempt would leave, to avoid an allocation per attempt.
    scratch: Vec<u32>,
}

impl<'a> Catalog<'a> {
    /// The catalog of `instance_types`.
    pub(super) fn new(instance_types: &'a [InstanceType]) -> Self {
        assert!(
            u32::try_from(instance_types.len()).is_ok(),
            "fewer than 2^32 instance types"
        );
        Catalog {
            instance_types,
            allocatable: instance_types
                .iter()
                .map(InstanceType::allocatable)
                .collect(),
            compatibility: Compatibility::new(instance_types),
            scratch: Vec::new(),
        }
    }
}

/// The options among `candidates` that are in `compatible` (all, if `None`) and whose
/// allocatable holds `requests`, written to `out`; returns the component-wise largest
/// allocatable among them.
fn narrow(
    candidates: impl Iterator<Item = u32>,
    compatible: Option<&TypeSet>,
    requests: Resources,
    allocatable: &[Resources],
    out: &mut Vec<u32>,
) -> Resources {
    out.clear();
    let mut largest = Resources::ZERO;
    for index in candidates {
        let room = &allocatable[index as usize];
        if compatible.is_none_or(|set| set.contains(index)) && requests.fits(room) {
            out.push(index);
            largest = largest.max(room);
        }
    }
    largest
}

/// Why a pool cannot open a claim for a pod.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum OpenFailure {
    Untolerated(Taint),
    Incompatible(Box<Incompatibility>),
    NoCompatibleType(Requirements),
    ExceedsLimits(Resources),
    NodeLimit,
    NoRoom(Resources),
    MinValues(MinValuesShortfall),
    Topology,
}

impl fmt::Display for OpenFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenFailure::Untolerated(t) => {
                write!(
                    f,
                    "did not tolerate taint {}={}:{:?}",
                    t.key, t.value, t.effect
                )
            }
            OpenFailure::Incompatible(why) => write!(f, "incompatible requirements, {why}"),
            OpenFailure::NoCompatibleType(requirements) => {
                write!(
                    f,
                    "no instance type is compatible with requirements {requirements}"
                )
            }
            OpenFailure::ExceedsLimits(remaining) => write!(
                f,
                "every compatible instance type with room exceeds the pool's remaining limits ({remaining})"
            ),
            OpenFailure::NodeLimit => write!(f, "the pool has as many nodes as its limits.nodes"),
            OpenFailure::NoRoom(requests) => write!(
                f,
                "no compatible instance type has room for {requests} (daemon overhead included)"
            ),
            OpenFailure::MinValues(shortfall) => shortfall.fmt(f),
            OpenFailure::Topology => write!(
                f,
                "a new node would break the pod's topology spread or required pod (anti-)affinity"
            ),
        }
    }
}

/// A pool as the scheduler launches from it.
#[derive(Clone, Copy)]
pub(super) struct Template<'p> {
    /// Its index among the scheduler's pools.
    pub(super) index: usize,
    pub(super) pool: &'p NodePool,
    /// The pool's requirements, with its labels and its name as requirements.
    pub(super) requirements: SetId,
}

/// A claim being planned.
#[derive(Clone, Debug)]
pub(super) struct PlannedClaim {
    /// The index of its pool among the scheduler's pools.
    pub(super) pool: usize,
    pub(super) requirements: SetId,
    /// Catalog indices of the instance types that can still hold every pod, in catalog order.
    pub(super) options: Vec<u32>,
    /// Daemon overhead plus the pods' requests.
    pub(super) requests: Resources,
    /// The component-wise largest allocatable among the options: a quick upper bound.
    largest: Resources,
    /// The indices of its pods among the scheduled pods.
    pub(super) pods: Vec<usize>,
}

impl PlannedClaim {
    /// A new claim from `template` holding `pod` under requirement term `term`, with the
    /// instance types within the pool's `remaining` limits, compatible with the template's
    /// requirements and the pod's, and with room for the daemon overhead and the pod.
    pub(super) fn open(
        template: Template<'_>,
        remaining: Option<&Resources>,
        pod_index: usize,
        pod: &SimPod,
        term: SetId,
        catalog: &mut Catalog<'_>,
    ) -> Result<PlannedClaim, OpenFailure> {
        let Template {
            index: pool_index,
            pool,
            requirements: pool_requirements,
        } = template;
        if let Some(taint) = untolerated(&pool.taints, &pod.tolerations) {
            return Err(OpenFailure::Untolerated(taint.clone()));
        }
        let Catalog {
            instance_types,
            allocatable,
            compatibility,
            scratch,
        } = catalog;
        let Some(requirements) = compatibility.combine(pool_requirements, term) else {
            let why = compatibility
                .get(pool_requirements)
                .compatible(compatibility.get(term), Undefined::AllowWellKnown)
                .expect_err("combine fails only on incompatible requirements");
            return Err(OpenFailure::Incompatible(Box::new(why)));
        };
        let within_limits = |index: &u32| {
            remaining.is_none_or(|r| instance_types[*index as usize].capacity.fits(r))
        };
        let all = 0..instance_types.len() as u32;
        let requests = pool.daemon_overhead + pod.requests;
        let compatible = compatibility.compatible_types(requirements);
        let largest = narrow(
            all.clone().filter(within_limits),
            Some(compatible),
            requests,
            allocatable,
            scratch,
        );
        if scratch.is_empty() {
            let compatible_types = || all.clone().filter(|i| compatible.contains(*i));
            let would_fit_without_limits =
                || compatible_types().any(|i| requests.fits(&allocatable[i as usize]));
            return Err(match remaining {
                _ if compatible_types().next().is_none() => {
                    OpenFailure::NoCompatibleType(compatibility.get(requirements).clone())
                }
                Some(remaining) if would_fit_without_limits() => {
                    OpenFailure::ExceedsLimits(*remaining)
                }
                _ => OpenFailure::NoRoom(requests),
            });
        }
        if compatibility.has_min_values(requirements)
            && let Some(shortfall) = unmet_min_values(
                compatibility.get(requirements),
                scratch.iter().map(|&i| &instance_types[i as usize]),
            )
        {
            return Err(OpenFailure::MinValues(shortfall));
        }
        Ok(PlannedClaim {
            pool: pool_index,
            requirements,
            options: std::mem::take(scratch),
            requests,
            largest,
            pods: vec![pod_index],
        })
    }

    /// Adds `pod` (under requirement term `term`) if the claim's pool taints are tolerated,
    /// its requirements stay compatible, and some option still holds every pod; narrows the
    /// requirements and options accordingly. Returns whether the pod was added.
    pub(super) fn try_add(
        &mut self,
        pool: &NodePool,
        pod_index: usize,
        pod: &SimPod,
        term: SetId,
        catalog: &mut Catalog<'_>,
    ) -> bool {
        let requests = self.requests + pod.requests;
        if !requests.fits(&self.largest) || untolerated(&pool.taints, &pod.tolerations).is_some() {
            return false;
        }
        let Catalog {
            instance_types,
            allocatable,
            compatibility,
            scratch,
        } = catalog;
        let Some(requirements) = compatibility.combine(self.requirements, term) else {
            return false;
        };
        let narrowed = requirements != self.requirements;
        // Unchanged requirements keep the same compatible types: only the room is checked.
        let compatible = narrowed.then(|| compatibility.compatible_types(requirements));
        let largest = narrow(
            self.options.iter().copied(),
            compatible,
            requests,
            allocatable,
            scratch,
        );
        if scratch.is_empty() {
            return false;
        }
        if compatibility.has_min_values(requirements)
            && unmet_min_values(
                compatibility.get(requirements),
                scratch.iter().map(|&i| &instance_types[i as usize]),
            )
            .is_some()
        {
            return false;
        }
        std::mem::swap(&mut self.options, scratch);
        self.requirements = requirements;
        self.requests = requests;
        self.largest = largest;
        self.pods.push(pod_index);
        true
    }

    /// The component-wise largest capacity among the options: what a launch counts against
    /// the pool's limits (Karpenter's `subtractMax`).
    pub(super) fn largest_capacity(&self, instance_types: &[InstanceType]) -> Resources {
        self.options.iter().fold(Resources::ZERO, |acc, &i| {
            acc.max(&instance_types[i as usize].capacity)
        })
    }
}
