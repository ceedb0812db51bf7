//! Reading the scheduler's model from Karpenter's own kinds: a NodePool's template as a
//! [`NodePool`](super::model::NodePool) the scheduler launches from, and a NodeClaim's
//! requirements.

use flotilla_api::nodes::{NodePool, NodeSelectorRequirementWithMinValues, RequirementOperator};

use super::from_k8s::{ConversionError, remaining_limits};
use super::model;
use super::requirements::{Operator, Requirement, Requirements};
use super::resources::Resources;
use super::taints::Taint;

/// The scheduler's operator for a Karpenter requirement operator.
fn operator(op: RequirementOperator) -> Operator {
    match op {
        RequirementOperator::In => Operator::In,
        RequirementOperator::NotIn => Operator::NotIn,
        RequirementOperator::Exists => Operator::Exists,
        RequirementOperator::DoesNotExist => Operator::DoesNotExist,
        RequirementOperator::Gt => Operator::Gt,
        RequirementOperator::Lt => Operator::Lt,
        RequirementOperator::Gte => Operator::Gte,
        RequirementOperator::Lte => Operator::Lte,
    }
}

/// A pool's or claim's requirements (with `minValues`), ANDed.
pub fn requirements(
    items: &[NodeSelectorRequirementWithMinValues],
) -> Result<Requirements, ConversionError> {
    let mut out = Requirements::new();
    for item in items {
        let mut requirement = Requirement::new(operator(item.operator), &item.values)?;
        if let Some(min) = item.min_values.and_then(|m| u32::try_from(m).ok()) {
            requirement = requirement.with_min_values(min);
        }
        out.add(&item.key, requirement);
    }
    Ok(out)
}

/// `requirements` as a claim's `spec.requirements`: each key's expressions, the first of them
/// carrying the key's `minValues`.
pub fn to_api(requirements: &Requirements) -> Vec<NodeSelectorRequirementWithMinValues> {
    requirements
        .iter()
        .flat_map(|(key, requirement)| {
            requirement
                .expressions()
                .into_iter()
                .enumerate()
                .map(
                    move |(i, (op, values))| NodeSelectorRequirementWithMinValues {
                        key: key.to_string(),
                        operator: api_operator(op),
                        values,
                        min_values: requirement
                            .min_values()
                            .filter(|_| i == 0)
                            .and_then(|m| i32::try_from(m).ok()),
                    },
                )
        })
        .collect()
}

/// The Karpenter operator for a scheduler operator.
fn api_operator(op: Operator) -> RequirementOperator {
    match op {
        Operator::In => RequirementOperator::In,
        Operator::NotIn => RequirementOperator::NotIn,
        Operator::Exists => RequirementOperator::Exists,
        Operator::DoesNotExist => RequirementOperator::DoesNotExist,
        Operator::Gt => RequirementOperator::Gt,
        Operator::Lt => RequirementOperator::Lt,
        Operator::Gte => RequirementOperator::Gte,
        Operator::Lte => RequirementOperator::Lte,
    }
}

/// Taints the scheduler understands (unknown effects are dropped: they block nothing).
pub fn taints(items: &[k8s_openapi::api::core::v1::Taint]) -> Vec<Taint> {
    items.iter().filter_map(Taint::from_k8s).collect()
}

/// The `limits` key that caps how many nodes a pool has (Karpenter counts them as a resource).
pub const NODES_LIMIT: &str = "nodes";

/// The scheduler's view of `pool`: its weight, template requirements, labels and taints (not
/// its startup taints), what its `limits` leave after `in_use` (the capacity of its nodes and
/// in-flight claims, `nodes_in_use` of them), and the `daemon_overhead` every new node starts
/// with.
pub fn pool_model(
    pool: &NodePool,
    in_use: Resources,
    nodes_in_use: u64,
    daemon_overhead: Resources,
) -> Result<model::NodePool, ConversionError> {
    let template = &pool.spec.template;
    let labels = template
        .metadata
        .as_ref()
        .map(|m| m.labels.clone())
        .unwrap_or_default();
    let remaining = if pool.spec.limits.is_empty() {
        None
    } else {
        Some(remaining_limits(&pool.spec.limits, in_use)?)
    };
    let remaining_nodes = match pool.spec.limits.get(NODES_LIMIT) {
        Some(limit) => {
            let nodes = limit
                .0
                .parse::<u64>()
                .map_err(|_| ConversionError::Quantity {
                    resource: NODES_LIMIT.to_string(),
                    value: limit.0.clone(),
                })?;
            Some(nodes.saturating_sub(nodes_in_use))
        }
        None => None,
    };
    Ok(model::NodePool {
        name: pool.metadata.name.clone().unwrap_or_default(),
        weight: pool.spec.weight.unwrap_or(0),
        requirements: requirements(&template.spec.requirements)?,
        labels,
        taints: taints(&template.spec.taints),
        remaining,
        remaining_nodes,
        daemon_overhead,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_api::nodes::NodePoolSpec;
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

    fn requirement(
        key: &str,
        op: RequirementOperator,
        values: &[&str],
        min: Option<i32>,
    ) -> NodeSelectorRequirementWithMinValues {
        NodeSelectorRequirementWithMinValues {
            key: key.into(),
            operator: op,
            values: values.iter().map(|v| v.to_string()).collect(),
            min_values: min,
        }
    }

    #[test]
    fn a_pool_reads_as_the_scheduler_model() {
        let mut spec = NodePoolSpec {
            weight: Some(30),
            ..Default::default()
        };
        spec.template.spec.requirements = vec![
            requirement(
                "karpenter.sh/capacity-type",
                RequirementOperator::In,
                &["spot"],
                None,
            ),
            requirement(
                "karpenter.azure.com/sku-cpu",
                RequirementOperator::Lt,
                &["9"],
                None,
            ),
            requirement(
                "karpenter.azure.com/sku-family",
                RequirementOperator::Exists,
                &[],
                Some(2),
            ),
        ];
        spec.limits = [("cpu".to_string(), Quantity("100".into()))].into();
        let pool = NodePool::new("spot", spec);
        let model = pool_model(&pool, Resources::new(40_000, 0, 0, 0), 0, Resources::ZERO).unwrap();
        assert_eq!(model.name, "spot");
        assert_eq!(model.weight, 30);
        assert!(
            model
                .requirements
                .get("karpenter.sh/capacity-type")
                .unwrap()
                .has("spot")
        );
        assert!(
            !model
                .requirements
                .get("karpenter.azure.com/sku-cpu")
                .unwrap()
                .has("16")
        );
        assert_eq!(
            model
                .requirements
                .get("karpenter.azure.com/sku-family")
                .unwrap()
                .min_values(),
            Some(2)
        );
        let remaining = model.remaining.unwrap();
        assert_eq!(remaining.cpu_millis, 60_000);
        assert_eq!(remaining.memory_bytes, i64::MAX);
    }

    #[test]
    fn requirements_read_back_as_what_they_allow() {
        let written = [
            requirement("cpu", RequirementOperator::Gt, &["2"], None),
            requirement("cpu", RequirementOperator::Lt, &["9"], None),
            requirement("zone", RequirementOperator::NotIn, &["a"], None),
            requirement("family", RequirementOperator::In, &["D", "E"], Some(2)),
            requirement("gpu", RequirementOperator::DoesNotExist, &[], None),
        ];
        let read = requirements(&written).unwrap();
        let round_trip = requirements(&to_api(&read)).unwrap();
        assert_eq!(round_trip, read);
        for (value, allowed) in [("2", false), ("3", true), ("8", true), ("9", false)] {
            assert_eq!(
                round_trip.get("cpu").unwrap().has(value),
                allowed,
                "{value}"
            );
        }
    }

    #[test]
    fn a_pool_without_limits_is_unlimited_and_bad_values_are_errors() {
        let pool = NodePool::new("default", NodePoolSpec::default());
        assert_eq!(
            pool_model(&pool, Resources::ZERO, 0, Resources::ZERO)
                .unwrap()
                .remaining,
            None
        );
        let bad = [requirement("x", RequirementOperator::Gt, &["a"], None)];
        assert!(requirements(&bad).is_err());
        let bad = [requirement("x", RequirementOperator::In, &[], None)];
        assert!(requirements(&bad).is_err());
    }
}
