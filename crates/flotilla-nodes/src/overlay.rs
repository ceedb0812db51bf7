//! Karpenter's NodeOverlay: price changes to the instance types and offerings an overlay's
//! requirements match, per pool, as the scheduler and consolidation see them (the cloud still
//! launches and bills at the real price).
//!
//! Overlays apply highest weight first (absent weight counts as 0), and among equal weights
//! the name later in the alphabet first. The first overlay to change an offering's price for
//! a pool wins. An overlay that matches an offering already changed by an overlay of the same
//! weight conflicts, and is not applied anywhere (Karpenter's `ValidationSucceeded=False`,
//! reason `Conflict`).
//!
//! An overlay matches an instance type for a pool when the pool's name
//! (`karpenter.sh/nodepool`), its template labels and the type's labels together are
//! compatible with the overlay's requirements (a custom key none of them defines does not
//! match), and then applies to the offerings whose zone and capacity type its requirements
//! allow. The result is one catalog for the scheduler: a type whose price changes for some
//! pools appears once per such pool (restricted to it by `karpenter.sh/nodepool`) and once for
//! every other pool.

use std::collections::{BTreeMap, BTreeSet};

use flotilla_api::nodes::NodeSelectorRequirementWithMinValues;

use crate::scheduling::requirements::Undefined;
use crate::scheduling::{InstanceType, NodePool, Operator, Requirement, Requirements};
use crate::scheduling::{from_api, labels};

/// How an overlay changes a price.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PriceChange {
    /// `price`: this price instead.
    Set(f64),
    /// `priceAdjustment: ±N`: this much more (or less).
    Add(f64),
    /// `priceAdjustment: ±N%`: this many percent more (or less).
    Percent(f64),
}

impl PriceChange {
    /// The change of `price` (an unsigned decimal), if it parses.
    pub fn price(price: &str) -> Option<Self> {
        price.parse().ok().map(PriceChange::Set)
    }

    /// The change of `priceAdjustment` (`+0.1`, `-0.05`, `+10%`, `-15%`), if it parses.
    pub fn adjustment(adjustment: &str) -> Option<Self> {
        if !adjustment.starts_with(['+', '-']) {
            return None;
        }
        match adjustment.strip_suffix('%') {
            Some(percent) => percent.parse().ok().map(PriceChange::Percent),
            None => adjustment.parse().ok().map(PriceChange::Add),
        }
    }

    /// `price` changed, never below zero (Karpenter's `AdjustedPrice`).
    pub fn apply(self, price: f64) -> f64 {
        let changed = match self {
            PriceChange::Set(p) => p,
            PriceChange::Add(delta) => price + delta,
            PriceChange::Percent(percent) => price * (1.0 + percent / 100.0),
        };
        changed.max(0.0)
    }
}

/// A NodeOverlay as the scheduler needs it.
#[derive(Clone, Debug, PartialEq)]
pub struct Overlay {
    /// Its name.
    pub name: String,
    /// `spec.weight` (absent: 0).
    pub weight: i32,
    /// `spec.requirements`.
    pub requirements: Requirements,
    /// `spec.price` or `spec.priceAdjustment`; `None` changes nothing.
    pub price: Option<PriceChange>,
}

impl Overlay {
    /// The overlay `overlay` describes, or why it cannot apply (a requirement or price the
    /// API's validation would have refused).
    pub fn from_api(overlay: &flotilla_api::nodes::NodeOverlay) -> Result<Self, String> {
        let spec = &overlay.spec;
        let items: Vec<NodeSelectorRequirementWithMinValues> = spec
            .requirements
            .iter()
            .map(|r| NodeSelectorRequirementWithMinValues {
                key: r.key.clone(),
                operator: r.operator,
                values: r.values.clone(),
                min_values: None,
            })
            .collect();
        let requirements = from_api::requirements(&items).map_err(|e| e.to_string())?;
        let price = match (&spec.price, &spec.price_adjustment) {
            (Some(price), _) => Some(
                PriceChange::price(price)
                    .ok_or_else(|| format!("price {price:?} is not a decimal"))?,
            ),
            (None, Some(adjustment)) => {
                Some(PriceChange::adjustment(adjustment).ok_or_else(|| {
                    format!("priceAdjustment {adjustment:?} is not a signed amount or percentage")
                })?)
            }
            (None, None) => None,
        };
        Ok(Overlay {
            name: overlay.metadata.name.clone().unwrap_or_default(),
            weight: spec.weight.unwrap_or(0),
            requirements,
            price,
        })
    }
}

/// The catalog the pools see, and which overlays could not apply.
#[derive(Clone, Debug, PartialEq)]
pub struct Overlaid {
    /// The instance types, with per-pool variants where an overlay changed prices.
    pub instance_types: Vec<InstanceType>,
    /// The overlays not applied because they conflict with one of the same weight.
    pub conflicts: BTreeSet<String>,
    /// How many offerings (over all pools) each applied overlay changed.
    pub changed: BTreeMap<String, usize>,
}

/// One offering's change for one pool: by which overlay, and the lowest weight that matched it.
struct Change<'o> {
    overlay: &'o Overlay,
    lowest_weight: i32,
}

/// Applies `overlays` to `instance_types` for each of `pools`.
pub fn apply(
    instance_types: &[InstanceType],
    pools: &[NodePool],
    overlays: &[Overlay],
) -> Overlaid {
    let mut ordered: Vec<&Overlay> = overlays.iter().filter(|o| o.price.is_some()).collect();
    ordered.sort_by(|a, b| b.weight.cmp(&a.weight).then_with(|| b.name.cmp(&a.name)));
    let pool_requirements: Vec<Requirements> = pools
        .iter()
        .map(|pool| {
            let mut r = Requirements::from_labels(&pool.labels);
            r.add(labels::NODE_POOL, Requirement::single(&pool.name));
            r
        })
        .collect();
    // (type, pool, offering) → change.
    let mut changes: BTreeMap<(usize, usize, usize), Change<'_>> = BTreeMap::new();
    let mut conflicts = BTreeSet::new();
    let mut changed = BTreeMap::new();
    for overlay in ordered {
        let mut matched = Vec::new();
        for (p, pool) in pool_requirements.iter().enumerate() {
            for (t, it) in instance_types.iter().enumerate() {
                let labels = pool.intersection(&it.requirements);
                if labels
                    .compatible(&overlay.requirements, Undefined::Deny)
                    .is_err()
                {
                    continue;
                }
                for (o, offering) in it.offerings.iter().enumerate() {
                    if offering.compatible(&overlay.requirements) {
                        matched.push((t, p, o));
                    }
                }
            }
        }
        let conflict = matched.iter().any(|key| {
            changes
                .get(key)
                .is_some_and(|c| c.lowest_weight == overlay.weight)
        });
        if conflict {
            conflicts.insert(overlay.name.clone());
            continue;
        }
        let mut count = 0;
        for key in matched {
            changes
                .entry(key)
                .and_modify(|c| c.lowest_weight = overlay.weight)
                .or_insert_with(|| {
                    count += 1;
                    Change {
                        overlay,
                        lowest_weight: overlay.weight,
                    }
                });
        }
        changed.insert(overlay.name.clone(), count);
    }
    Overlaid {
        instance_types: catalog(instance_types, pools, &changes),
        conflicts,
        changed,
    }
}

/// The catalog with `changes` (keyed by type, pool and offering): each changed type once per
/// pool it changed for, and once for the other pools.
fn catalog(
    instance_types: &[InstanceType],
    pools: &[NodePool],
    changes: &BTreeMap<(usize, usize, usize), Change<'_>>,
) -> Vec<InstanceType> {
    let mut out = Vec::with_capacity(instance_types.len());
    for (t, it) in instance_types.iter().enumerate() {
        let mut names: Vec<&str> = Vec::new();
        let mut variant: Option<(usize, InstanceType)> = None;
        for (&(_, p, o), change) in changes.range((t, 0, 0)..(t + 1, 0, 0)) {
            if variant.as_ref().is_none_or(|(pool, _)| *pool != p) {
                out.extend(variant.take().map(|(_, v)| v));
                let name = &pools[p].name;
                let mut fresh = it.clone();
                fresh
                    .requirements
                    .add(labels::NODE_POOL, Requirement::single(name));
                variant = Some((p, fresh));
                names.push(name);
            }
            if let (Some((_, v)), Some(price)) = (variant.as_mut(), change.overlay.price) {
                v.offerings[o].price = price.apply(it.offerings[o].price);
            }
        }
        out.extend(variant.map(|(_, v)| v));
        let mut rest = it.clone();
        if !names.is_empty() {
            let others =
                Requirement::new(Operator::NotIn, &names).expect("NotIn over at least one pool");
            rest.requirements.add(labels::NODE_POOL, others);
        }
        out.push(rest);
    }
    out
}

#[cfg(test)]
mod tests;
