//! Rules of the node auto-provisioning kinds that their schemas cannot express: Karpenter's
//! CEL rules (a budget's `schedule` and `duration` come together, the schedule is valid cron,
//! requirements are well formed, template labels stay out of the restricted domains (Karpenter's
//! and the AKS provider's), a pool's
//! node class kind and group never change, a claim's spec never changes, an overlay's price
//! rules).

use flotilla_apimachinery::FieldError;
use flotilla_apimachinery::cron::Schedule;
use serde_json::Value;

use super::common::{immutable, spec};
use super::path::Path;
use crate::nodes::{
    Budget, NODEPOOL_LABEL, NodeClaimSpec, NodeOverlaySpec, NodePoolSpec,
    NodeSelectorRequirementWithMinValues, RequirementOperator,
};

/// Validates a `NodePool`.
pub(crate) fn validate_node_pool(new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Some(pool) = spec::<NodePoolSpec>(new) else {
        return errors;
    };
    let template = Path::new("spec").child("template");
    if let Some(metadata) = pool.template.metadata.as_ref() {
        let at = template.child("metadata").child("labels");
        for key in metadata.labels.keys() {
            if let Some(why) = restricted_label(key, true) {
                errors.push(FieldError::invalid(
                    at.clone(),
                    Value::from(key.as_str()),
                    why,
                ));
            }
        }
    }
    let requirements = template.child("spec").child("requirements");
    requirement_rules(&pool.template.spec.requirements, &requirements, &mut errors);
    // A claim's requirements name its pool; a pool's may not.
    for (i, requirement) in pool.template.spec.requirements.iter().enumerate() {
        if let Some(why) = restricted_label(&requirement.key, false) {
            errors.push(FieldError::invalid(
                requirements.index(i).child("key"),
                Value::from(requirement.key.as_str()),
                why,
            ));
        }
    }
    class_ref_rules(
        new.pointer("/spec/template/spec/nodeClassRef"),
        &template.child("spec").child("nodeClassRef"),
        &mut errors,
    );
    let budgets = Path::new("spec").child("disruption").child("budgets");
    for (i, budget) in pool
        .disruption
        .iter()
        .flat_map(|d| d.budgets.iter().flatten())
        .enumerate()
    {
        budget_rules(budget, &budgets.index(i), &mut errors);
    }
    static_pool_rules(&pool, old, &mut errors);
    if let Some(old) = old {
        let class_ref = "/spec/template/spec/nodeClassRef";
        for key in ["group", "kind"] {
            let field = |object: &Value| object.pointer(&format!("{class_ref}/{key}")).cloned();
            immutable(
                &template.child("spec").child("nodeClassRef").child(key),
                field(new).as_ref(),
                field(old).as_ref(),
                &mut errors,
            );
        }
    }
    errors
}

/// A static pool's rules, with Karpenter's messages: `replicas` is set or unset for the pool's
/// life, and a static pool takes no limits but `nodes` and no weight.
fn static_pool_rules(pool: &NodePoolSpec, old: Option<&Value>, errors: &mut Vec<FieldError>) {
    let at = Path::new("spec");
    let invalid = |message: &str| FieldError::invalid(at.clone(), Value::from("object"), message);
    if let Some(old) = old.and_then(spec::<NodePoolSpec>)
        && old.replicas.is_some() != pool.replicas.is_some()
    {
        errors.push(invalid(
            "Cannot transition NodePool between static (replicas set) and dynamic (replicas unset) provisioning modes",
        ));
    }
    if pool.replicas.is_none() {
        return;
    }
    if pool.limits.keys().any(|k| k != "nodes") {
        errors.push(invalid(
            "only 'limits.nodes' is supported on static NodePools",
        ));
    }
    if pool.weight.is_some() {
        errors.push(invalid("'weight' is not supported on static NodePools"));
    }
}

/// Labels of the `karpenter.azure.com` domain a pool's template may set: the SKU labels the
/// AKS provider derives from instance types, and the node class.
const AZURE_KARPENTER_LABELS: [&str; 13] = [
    "aksnodeclass",
    "sku-name",
    "sku-family",
    "sku-series",
    "sku-version",
    "sku-cpu",
    "sku-memory",
    "sku-networking-accelerated",
    "sku-storage-premium-capable",
    "sku-storage-ephemeralos-maxsize",
    "sku-gpu-name",
    "sku-gpu-manufacturer",
    "sku-gpu-count",
];

/// Labels of the `kubernetes.azure.com` domain a pool's template may set: those AKS itself
/// manages on nodes (AKS refuses user-assigned labels of its domain).
const AKS_LABELS: [&str; 9] = [
    "mode",
    "scalesetpriority",
    "fips_enabled",
    "os-sku",
    "cluster",
    "sku-cpu",
    "sku-memory",
    "ebpf-dataplane",
    "cluster-health-monitor-checker-synthetic",
];

/// Why a pool's template may not name label `key`, with the message Karpenter's CRD gives: the
/// `karpenter.sh` domain but the capacity type (and `karpenter.sh/nodepool`, which Karpenter sets
/// itself) and the hostname; for labels (`aks`), also the AKS provider's: the
/// `karpenter.azure.com` and `kubernetes.azure.com` domains but their allowed labels, and
/// `agentpool`.
fn restricted_label(key: &str, aks: bool) -> Option<&'static str> {
    // The domain is what precedes the first slash (the whole key when there is none).
    let (domain, name) = key.split_once('/').unwrap_or((key, ""));
    let unlisted = |list: &[&str]| !key.contains('/') || !list.contains(&name);
    match key {
        NODEPOOL_LABEL => Some("label \"karpenter.sh/nodepool\" is restricted"),
        "kubernetes.io/hostname" => Some("label \"kubernetes.io/hostname\" is restricted"),
        _ if domain.ends_with("karpenter.sh") && unlisted(&["capacity-type"]) => {
            Some("label domain \"karpenter.sh\" is restricted")
        }
        _ if !aks => None,
        "agentpool" => Some("label \"agentpool\" is restricted"),
        _ if domain.ends_with("karpenter.azure.com") && unlisted(&AZURE_KARPENTER_LABELS) => {
            Some("label domain \"karpenter.azure.com\" is restricted")
        }
        _ if domain.ends_with("kubernetes.azure.com") && unlisted(&AKS_LABELS) => {
            Some("label domain \"kubernetes.azure.com\" is restricted")
        }
        _ => None,
    }
}

/// Validates a `NodeOverlay` with the rules and messages of Karpenter's CRD: not both `price`
/// and `priceAdjustment`; `In`/`NotIn` with values and the numeric operators with one
/// non-negative integer; restricted label keys (but `karpenter.sh/nodepool`, which overlays may
/// match); no standard resource in `capacity`. `capacity` itself is refused: Flotilla's
/// simulated members do not model extended resources, so it could not act.
pub(crate) fn validate_node_overlay(new: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Some(overlay) = spec::<NodeOverlaySpec>(new) else {
        return errors;
    };
    let spec = Path::new("spec");
    if overlay.price.is_some() && overlay.price_adjustment.is_some() {
        errors.push(FieldError::invalid(
            spec.clone(),
            Value::Null,
            "cannot set both 'price' and 'priceAdjustment'",
        ));
    }
    let requirements = spec.child("requirements");
    for (i, requirement) in overlay.requirements.iter().enumerate() {
        let values = &requirement.values;
        let why = match requirement.operator {
            RequirementOperator::NotIn if values.is_empty() => {
                Some("requirements with operator 'NotIn' must have a value defined")
            }
            RequirementOperator::In if values.is_empty() => {
                Some("requirements with operator 'In' must have a value defined")
            }
            RequirementOperator::Gt
            | RequirementOperator::Lt
            | RequirementOperator::Gte
            | RequirementOperator::Lte
                if !(values.len() == 1 && values[0].parse::<u64>().is_ok()) =>
            {
                Some(
                    "requirements operator 'Gt', 'Lt', 'Gte' or 'Lte' must have a single positive integer value",
                )
            }
            RequirementOperator::Exists | RequirementOperator::DoesNotExist
                if !values.is_empty() =>
            {
                Some("operators Exists and DoesNotExist take no values")
            }
            _ => None,
        };
        if let Some(why) = why {
            errors.push(FieldError::invalid(
                requirements.index(i).child("values"),
                Value::from(values.clone()),
                why,
            ));
        }
        if requirement.key != NODEPOOL_LABEL
            && let Some(why) = restricted_label(&requirement.key, false)
        {
            errors.push(FieldError::invalid(
                requirements.index(i).child("key"),
                Value::from(requirement.key.as_str()),
                why,
            ));
        }
    }
    if let Some(capacity) = &overlay.capacity {
        let at = spec.child("capacity");
        if capacity
            .keys()
            .any(|k| ["cpu", "memory", "ephemeral-storage", "pods"].contains(&k.as_str()))
        {
            errors.push(FieldError::invalid(
                at,
                Value::from(capacity.keys().cloned().collect::<Vec<_>>()),
                "invalid resource restricted",
            ));
        } else {
            errors.push(FieldError::forbidden(
                at,
                "extended resources are not modelled by Flotilla's simulated members, so a \
                 capacity overlay could not act; only price and priceAdjustment are honoured",
            ));
        }
    }
    errors
}

/// Validates a `NodeClaim`: well-formed requirements, and a spec that never changes.
pub(crate) fn validate_node_claim(new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(claim) = spec::<NodeClaimSpec>(new) {
        requirement_rules(
            &claim.requirements,
            &Path::new("spec").child("requirements"),
            &mut errors,
        );
    }
    class_ref_rules(
        new.pointer("/spec/nodeClassRef"),
        &Path::new("spec").child("nodeClassRef"),
        &mut errors,
    );
    if let Some(old) = old {
        immutable(
            &Path::new("spec"),
            new.get("spec"),
            old.get("spec"),
            &mut errors,
        );
    }
    errors
}

/// A node class reference names its group, kind and name (Karpenter's CEL rules, with their
/// messages); the schema's pattern keeps a `/` out of the group.
fn class_ref_rules(class_ref: Option<&Value>, path: &Path, errors: &mut Vec<FieldError>) {
    for key in ["group", "kind", "name"] {
        if let Some(value) = class_ref.and_then(|r| r.get(key))
            && value.as_str() == Some("")
        {
            errors.push(FieldError::invalid(
                path.child(key),
                value.clone(),
                format!("{key} may not be empty"),
            ));
        }
    }
}

/// A budget's `schedule` and `duration` are set together, and the schedule is valid cron.
fn budget_rules(budget: &Budget, path: &Path, errors: &mut Vec<FieldError>) {
    match (&budget.schedule, &budget.duration) {
        (Some(_), None) => errors.push(FieldError::required(
            path.child("duration"),
            "a budget with a schedule needs a duration: how long it stays active each time the schedule fires",
        )),
        (None, Some(_)) => errors.push(FieldError::required(
            path.child("schedule"),
            "a budget with a duration needs a schedule: when its window opens",
        )),
        _ => {}
    }
    if let Some(schedule) = &budget.schedule
        && let Err(error) = Schedule::parse(schedule)
    {
        errors.push(FieldError::invalid(
            path.child("schedule"),
            Value::from(schedule.as_str()),
            error.to_string(),
        ));
    }
}

/// Requirements: known operators with the right number of values, integers for the numeric
/// operators, and `minValues` no more than the values of an `In`.
fn requirement_rules(
    requirements: &[NodeSelectorRequirementWithMinValues],
    path: &Path,
    errors: &mut Vec<FieldError>,
) {
    for (i, requirement) in requirements.iter().enumerate() {
        let path = path.index(i);
        let values = &requirement.values;
        let value_path = path.child("values");
        match requirement.operator {
            RequirementOperator::In | RequirementOperator::NotIn => {
                if values.is_empty() && requirement.operator == RequirementOperator::In {
                    errors.push(FieldError::required(
                        value_path,
                        "operator In needs at least one value",
                    ));
                }
            }
            RequirementOperator::Exists | RequirementOperator::DoesNotExist => {
                if !values.is_empty() {
                    errors.push(FieldError::invalid(
                        value_path,
                        Value::from(values.clone()),
                        "operators Exists and DoesNotExist take no values",
                    ));
                }
            }
            RequirementOperator::Gt
            | RequirementOperator::Lt
            | RequirementOperator::Gte
            | RequirementOperator::Lte => {
                let single_integer = values.len() == 1 && values[0].parse::<u64>().is_ok();
                if !single_integer {
                    errors.push(FieldError::invalid(
                        value_path,
                        Value::from(values.clone()),
                        "operators Gt, Lt, Gte and Lte take exactly one non-negative integer",
                    ));
                }
            }
        }
        if let Some(min) = requirement.min_values
            && requirement.operator == RequirementOperator::In
            && usize::try_from(min).is_ok_and(|min| min > values.len())
        {
            errors.push(FieldError::invalid(
                path.child("minValues"),
                Value::from(min),
                format!(
                    "minValues ({min}) is more than the {} value(s) the requirement allows",
                    values.len()
                ),
            ));
        }
    }
}
