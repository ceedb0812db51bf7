//! Overlay precedence, conflicts, matching and the per-pool catalog.

use super::*;
use crate::scheduling::{CapacityType, Offering, Resources};
use proptest::prelude::*;

fn instance_type(name: &str, family: &str, price: f64) -> InstanceType {
    let offering = |zone: &str, capacity_type, price| Offering {
        zone: zone.into(),
        capacity_type,
        price,
        available: true,
    };
    InstanceType::new(
        name,
        &[("karpenter.azure.com/sku-family", family)],
        Resources::new(4000, 16 << 30, 110, 0),
        Resources::ZERO,
        vec![
            offering("z1", CapacityType::OnDemand, price),
            offering("z1", CapacityType::Spot, price * 0.7),
            offering("z2", CapacityType::OnDemand, price),
        ],
    )
}

fn catalog() -> Vec<InstanceType> {
    vec![instance_type("d4", "D", 0.2), instance_type("e4", "E", 0.3)]
}

fn requirements(items: &[(&str, Operator, &[&str])]) -> Requirements {
    let mut r = Requirements::new();
    for (key, op, values) in items {
        r.add(key, Requirement::new(*op, values).unwrap());
    }
    r
}

fn overlay(name: &str, weight: i32, reqs: Requirements, price: &str) -> Overlay {
    Overlay {
        name: name.into(),
        weight,
        requirements: reqs,
        price: PriceChange::adjustment(price).or_else(|| PriceChange::price(price)),
    }
}

/// The price pool `pool` sees for `type_name` in zone `zone` as `capacity_type`.
fn seen(
    result: &Overlaid,
    pool: &str,
    type_name: &str,
    zone: &str,
    capacity_type: CapacityType,
) -> f64 {
    let mut claim = Requirements::new();
    claim.add(labels::NODE_POOL, Requirement::single(pool));
    let entries: Vec<&InstanceType> = result
        .instance_types
        .iter()
        .filter(|it| it.name == type_name && it.requirements.intersects(&claim).is_ok())
        .collect();
    assert_eq!(entries.len(), 1, "{type_name} for {pool}: {entries:?}");
    entries[0]
        .offerings
        .iter()
        .find(|o| o.zone == zone && o.capacity_type == capacity_type)
        .unwrap()
        .price
}

#[test]
fn price_changes_parse_and_apply_as_karpenter() {
    let cases = [
        ("+10%", 1.0, 1.1),
        ("-15%", 1.0, 0.85),
        ("-100%", 1.0, 0.0),
        ("+0.5", 1.0, 1.5),
        ("-0.25", 1.0, 0.75),
        ("-2", 1.0, 0.0),
    ];
    for (adjustment, price, expected) in cases {
        let change = PriceChange::adjustment(adjustment).unwrap();
        assert!(
            (change.apply(price) - expected).abs() < 1e-12,
            "{adjustment}"
        );
    }
    assert_eq!(PriceChange::price("0.01").unwrap().apply(5.0), 0.01);
    assert_eq!(PriceChange::adjustment("10%"), None);
}

#[test]
fn the_heaviest_overlay_wins_and_equal_weights_conflict() {
    let pools = [NodePool::new("default")];
    let d = requirements(&[("karpenter.azure.com/sku-family", Operator::In, &["D"])]);
    let result = apply(
        &catalog(),
        &pools,
        &[
            overlay("light", 1, d.clone(), "+100%"),
            overlay("heavy", 10, d.clone(), "-50%"),
        ],
    );
    assert_eq!(
        seen(&result, "default", "d4", "z1", CapacityType::OnDemand),
        0.1
    );
    assert_eq!(
        seen(&result, "default", "e4", "z1", CapacityType::OnDemand),
        0.3
    );
    assert!(result.conflicts.is_empty());
    assert_eq!(result.changed["heavy"], 3);
    assert_eq!(result.changed["light"], 0);

    // Equal weights: "b" goes first (later name), "a" conflicts and is not applied at all,
    // not even to e4, which "b" does not match.
    let result = apply(
        &catalog(),
        &pools,
        &[
            overlay("a", 5, Requirements::new(), "0.01"),
            overlay("b", 5, d, "0.02"),
        ],
    );
    assert_eq!(result.conflicts, BTreeSet::from(["a".to_string()]));
    assert_eq!(
        seen(&result, "default", "d4", "z2", CapacityType::OnDemand),
        0.02
    );
    assert_eq!(
        seen(&result, "default", "e4", "z2", CapacityType::OnDemand),
        0.3
    );
}

#[test]
fn overlays_match_pools_offerings_and_template_labels() {
    let pools = [
        NodePool::new("default"),
        NodePool {
            labels: [("team".to_string(), "ml".to_string())].into(),
            ..NodePool::new("ml")
        },
    ];
    let spot_in_ml = requirements(&[
        (labels::NODE_POOL, Operator::In, &["ml"]),
        (labels::CAPACITY_TYPE, Operator::In, &["spot"]),
    ]);
    let team = requirements(&[("team", Operator::In, &["ml"])]);
    let result = apply(
        &catalog(),
        &pools,
        &[
            overlay("spot", 2, spot_in_ml, "-50%"),
            overlay("team", 1, team, "+1"),
        ],
    );
    // Only ml's spot offerings are halved; ml's others get team's +1 (a custom label the
    // default pool does not define, so it is left alone).
    assert!((seen(&result, "ml", "d4", "z1", CapacityType::Spot) - 0.07).abs() < 1e-12);
    assert!((seen(&result, "ml", "d4", "z1", CapacityType::OnDemand) - 1.2).abs() < 1e-12);
    assert_eq!(
        seen(&result, "default", "d4", "z1", CapacityType::Spot),
        0.2 * 0.7
    );
    assert_eq!(
        seen(&result, "default", "d4", "z1", CapacityType::OnDemand),
        0.2
    );
    // d4 and e4 each appear once for ml and once for everyone else.
    assert_eq!(result.instance_types.len(), 4);
}

proptest! {
    /// Whatever the overlays, every pool sees every instance type exactly once, with every
    /// offering, never at a negative price.
    #[test]
    fn every_pool_sees_each_type_once(
        overlays in prop::collection::vec(
            (0i32..3, prop::option::of(0usize..3), prop::option::of(0usize..2), -100i32..100),
            0..6,
        ),
    ) {
        let pools = [NodePool::new("p0"), NodePool::new("p1"), NodePool::new("p2")];
        let overlays: Vec<Overlay> = overlays
            .iter()
            .enumerate()
            .map(|(i, &(weight, pool, family, percent))| {
                let mut r = Requirements::new();
                if let Some(p) = pool {
                    r.add(labels::NODE_POOL, Requirement::single(&format!("p{p}")));
                }
                if let Some(f) = family {
                    r.add("karpenter.azure.com/sku-family", Requirement::single(["D", "E"][f]));
                }
                Overlay {
                    name: format!("o{i}"),
                    weight,
                    requirements: r,
                    price: Some(PriceChange::Percent(f64::from(percent))),
                }
            })
            .collect();
        let result = apply(&catalog(), &pools, &overlays);
        for pool in &pools {
            for it in catalog() {
                for offering in &it.offerings {
                    let price = seen(&result, &pool.name, &it.name, &offering.zone, offering.capacity_type);
                    prop_assert!(price >= 0.0);
                }
            }
        }
    }
}
