//! One candidate set → a command or a rejection (Karpenter's `computeConsolidation`): simulate
//! without the candidates; every candidate pod must schedule; no new node means delete, one
//! means replace if strictly cheaper, more means no.

use super::candidate::Candidate;
use super::command::{Action, Command, Method, Rejection};
use super::simulation::Simulator;
use crate::scheduling::instance_types::unmet_min_values;
use crate::scheduling::labels;
use crate::scheduling::scheduler::InstanceTypeOption;
use crate::scheduling::{CapacityType, NewClaim, Requirement};

/// Single-node spot-to-spot consolidation needs at least this many cheaper instance types, and
/// keeps only that many cheapest, so that the replacement is not the next thing to consolidate
/// (Karpenter's `MinInstanceTypesForSpotToSpotConsolidation`).
pub const MIN_SPOT_TO_SPOT_TYPES: usize = 15;

/// Switches of consolidation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConsolidationOptions {
    /// Allow replacing spot nodes with spot nodes (Karpenter's `SpotToSpotConsolidation`
    /// feature gate).
    pub spot_to_spot: bool,
}

/// Karpenter's feature gate that switches spot-to-spot consolidation on.
pub const SPOT_TO_SPOT_GATE: &str = "SpotToSpotConsolidation";

impl ConsolidationOptions {
    /// The options Karpenter's `--feature-gates` value `gates` sets
    /// (`SpotToSpotConsolidation=true`, comma-separated `Name=true|false`; empty: none). A gate
    /// Flotilla does not model is refused, naming the ones it does, rather than ignored.
    pub fn from_feature_gates(gates: &str) -> Result<Self, String> {
        let mut options = ConsolidationOptions::default();
        for gate in gates.split(',').map(str::trim).filter(|g| !g.is_empty()) {
            let Some((name, value)) = gate.split_once('=') else {
                return Err(format!(
                    "feature gate {gate:?} is not of the form Name=true|false"
                ));
            };
            let on = match value.trim() {
                "true" => true,
                "false" => false,
                other => {
                    return Err(format!(
                        "feature gate {name}: {other:?} is not true or false"
                    ));
                }
            };
            match name.trim() {
                SPOT_TO_SPOT_GATE => options.spot_to_spot = on,
                other => {
                    return Err(format!(
                        "feature gate {other} is not modelled by Flotilla's simulated Karpenter \
                         (supported: {SPOT_TO_SPOT_GATE})"
                    ));
                }
            }
        }
        Ok(options)
    }
}

/// Whether the claim could launch as `capacity_type`: its requirements allow it and some option
/// has an available offering of it.
fn possible(simulator: &Simulator<'_>, claim: &NewClaim, capacity_type: CapacityType) -> bool {
    let requirements = &claim.requirements;
    let allowed = requirements
        .get(labels::CAPACITY_TYPE)
        .is_none_or(|r| r.has(capacity_type.label()));
    allowed
        && claim.instance_type_options.iter().any(|option| {
            simulator
                .instance_type(&option.name, requirements)
                .is_some_and(|it| {
                    it.compatible_offerings(requirements)
                        .any(|o| o.capacity_type == capacity_type)
                })
        })
}

/// The command for `candidates` by `method`, or why there is none: the candidates' pods
/// (with the cluster's pending pods) are rescheduled without them; every candidate pod must
/// schedule (pending ones need not); no new claim → delete; exactly one → replace with only
/// the options whose worst launch price is below the candidates' total, pinned to spot when it
/// could launch as spot or on-demand (by its requirements and its options' offerings); more →
/// rejected. Spot candidates replaced by spot need
/// `options.spot_to_spot`, and a single one at least [`MIN_SPOT_TO_SPOT_TYPES`] cheaper types.
pub fn compute_consolidation(
    simulator: &mut Simulator<'_>,
    candidates: &[&Candidate],
    method: Method,
    options: &ConsolidationOptions,
) -> Result<Command, Rejection> {
    let results = simulator.simulate(candidates);
    for pod in candidates.iter().flat_map(|c| &c.pods) {
        if let Some(reason) = results.unschedulable.get(&pod.name) {
            return Err(Rejection::PodUnschedulable {
                pod: pod.name.clone(),
                reason: reason.clone(),
            });
        }
    }
    let candidates_price: f64 = candidates.iter().map(|c| c.price).sum();
    let mut new_claims = results.new_claims;
    let action = match new_claims.len() {
        0 => Action::Delete,
        1 => {
            let mut claim = new_claims.remove(0);
            let all_spot = candidates
                .iter()
                .all(|c| c.capacity_type == CapacityType::Spot);
            if all_spot && possible(simulator, &claim, CapacityType::Spot) {
                spot_to_spot(
                    simulator,
                    &mut claim,
                    candidates.len(),
                    candidates_price,
                    options,
                )?;
            } else {
                let cheapest = claim.cheapest_price();
                retain_cheaper(simulator, &mut claim, candidates_price).map_err(|shortfall| {
                    shortfall.unwrap_or(Rejection::NotCheaper {
                        candidates_price,
                        cheapest,
                    })
                })?;
                if possible(simulator, &claim, CapacityType::OnDemand)
                    && possible(simulator, &claim, CapacityType::Spot)
                {
                    // Priced as spot launches: an on-demand fallback could cost more than the
                    // candidates.
                    pin_to_spot(simulator, &mut claim);
                }
            }
            Action::Replace(claim)
        }
        n => return Err(Rejection::TooManyReplacements(n)),
    };
    Ok(Command {
        method,
        candidates: candidates.iter().map(|c| c.node.clone()).collect(),
        action,
        candidates_price,
        scores: Vec::new(),
    })
}

/// Spot candidates replaced by a spot node (Karpenter's `computeSpotToSpotConsolidation`).
fn spot_to_spot(
    simulator: &Simulator<'_>,
    claim: &mut NewClaim,
    candidate_count: usize,
    candidates_price: f64,
    options: &ConsolidationOptions,
) -> Result<(), Rejection> {
    if !options.spot_to_spot {
        return Err(Rejection::SpotToSpotDisabled);
    }
    pin_to_spot(simulator, claim);
    let cheapest = claim.cheapest_price();
    retain_cheaper(simulator, claim, candidates_price).map_err(|shortfall| {
        shortfall.unwrap_or(Rejection::NotCheaper {
            candidates_price,
            cheapest,
        })
    })?;
    if candidate_count > 1 {
        return Ok(());
    }
    let found = claim.instance_type_options.len();
    if found < MIN_SPOT_TO_SPOT_TYPES {
        return Err(Rejection::TooFewCheaperSpotTypes {
            needed: MIN_SPOT_TO_SPOT_TYPES,
            found,
        });
    }
    let keep = MIN_SPOT_TO_SPOT_TYPES.max(min_values_prefix(simulator, claim));
    claim.instance_type_options.truncate(keep);
    Ok(())
}

/// Restricts the claim to spot and re-prices its options, dropping those with no spot offering.
fn pin_to_spot(simulator: &Simulator<'_>, claim: &mut NewClaim) {
    claim.requirements.add(
        labels::CAPACITY_TYPE,
        Requirement::single(CapacityType::Spot.label()),
    );
    let requirements = &claim.requirements;
    claim.instance_type_options = claim
        .instance_type_options
        .iter()
        .filter_map(|option| {
            let offering = simulator
                .instance_type(&option.name, requirements)?
                .cheapest_offering(requirements)?;
            Some(InstanceTypeOption {
                name: option.name.clone(),
                price: offering.price,
            })
        })
        .collect();
    claim.instance_type_options.sort_by(|a, b| {
        a.price
            .total_cmp(&b.price)
            .then_with(|| a.name.cmp(&b.name))
    });
}

/// Keeps the options whose worst launch price under the claim's requirements is below
/// `max_price` (Karpenter's `filterByPrice`), checking the pool's `minValues` still hold.
/// `Err(None)` when no option is left; `Err(Some(_))` when `minValues` break.
pub(super) fn retain_cheaper(
    simulator: &Simulator<'_>,
    claim: &mut NewClaim,
    max_price: f64,
) -> Result<(), Option<Rejection>> {
    let requirements = &claim.requirements;
    claim.instance_type_options.retain(|option| {
        simulator
            .instance_type(&option.name, requirements)
            .and_then(|it| it.worst_launch_price(requirements))
            .is_some_and(|worst| worst < max_price)
    });
    if claim.instance_type_options.is_empty() {
        return Err(None);
    }
    let options = claim
        .instance_type_options
        .iter()
        .filter_map(|o| simulator.instance_type(&o.name, requirements));
    match unmet_min_values(&claim.requirements, options) {
        Some(shortfall) => Err(Some(Rejection::MinValues(shortfall))),
        None => Ok(()),
    }
}

/// The fewest cheapest options that still meet the pool's `minValues` (0 without any).
fn min_values_prefix(simulator: &Simulator<'_>, claim: &NewClaim) -> usize {
    if claim
        .requirements
        .iter()
        .all(|(_, r)| r.min_values().is_none())
    {
        return 0;
    }
    let types: Vec<_> = claim
        .instance_type_options
        .iter()
        .filter_map(|o| simulator.instance_type(&o.name, &claim.requirements))
        .collect();
    (1..=types.len())
        .find(|&k| unmet_min_values(&claim.requirements, types[..k].iter().copied()).is_none())
        .unwrap_or(types.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feature_gates_read_as_karpenter_writes_them() {
        let on = ConsolidationOptions { spot_to_spot: true };
        let cases: [(&str, Result<ConsolidationOptions, &str>); 6] = [
            ("", Ok(ConsolidationOptions::default())),
            ("SpotToSpotConsolidation=true", Ok(on)),
            (" SpotToSpotConsolidation=true , ", Ok(on)),
            (
                "SpotToSpotConsolidation=false",
                Ok(ConsolidationOptions::default()),
            ),
            (
                "NodeRepair=true",
                Err(
                    "feature gate NodeRepair is not modelled by Flotilla's simulated Karpenter (supported: SpotToSpotConsolidation)",
                ),
            ),
            (
                "SpotToSpotConsolidation",
                Err("feature gate \"SpotToSpotConsolidation\" is not of the form Name=true|false"),
            ),
        ];
        for (gates, expected) in cases {
            assert_eq!(
                ConsolidationOptions::from_feature_gates(gates),
                expected.map_err(String::from),
                "{gates:?}"
            );
        }
    }
}
