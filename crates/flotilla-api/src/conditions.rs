//! `metav1.Condition` bookkeeping shared by every controller: a condition's
//! `lastTransitionTime` moves only when its status changes, as Kubernetes' `meta.SetStatusCondition` does.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;

/// The desired content of one condition (everything but its transition time).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCondition<'a> {
    /// Condition type, e.g. `Joined`.
    pub type_: &'a str,
    /// `True`, `False` or `Unknown`.
    pub status: &'a str,
    /// CamelCase reason.
    pub reason: &'a str,
    /// Human-readable explanation.
    pub message: String,
    /// Generation of the object the condition was computed from.
    pub observed_generation: Option<i64>,
}

/// Sets `new` in `conditions` at `now`: the transition time is kept when the status is
/// unchanged. Returns whether anything changed.
pub fn set_condition(
    conditions: &mut Vec<Condition>,
    new: NewCondition<'_>,
    now: Timestamp,
) -> bool {
    let fresh = |transition: Time| Condition {
        type_: new.type_.to_string(),
        status: new.status.to_string(),
        reason: new.reason.to_string(),
        message: new.message.clone(),
        observed_generation: new.observed_generation,
        last_transition_time: transition,
    };
    match conditions.iter_mut().find(|c| c.type_ == new.type_) {
        Some(existing) => {
            let transition = if existing.status == new.status {
                existing.last_transition_time.clone()
            } else {
                Time(now)
            };
            let updated = fresh(transition);
            let changed = *existing != updated;
            *existing = updated;
            changed
        }
        None => {
            conditions.push(fresh(Time(now)));
            true
        }
    }
}

/// The condition of type `type_`, if present.
pub fn find<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Whether the condition of type `type_` is present and `True`.
pub fn is_true(conditions: &[Condition], type_: &str) -> bool {
    find(conditions, type_).is_some_and(|c| c.status == "True")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn joined(status: &str, message: &str) -> NewCondition<'static> {
        NewCondition {
            type_: "Joined",
            status: if status == "True" { "True" } else { "False" },
            reason: "R",
            message: message.into(),
            observed_generation: Some(1),
        }
    }

    #[test]
    fn transition_time_moves_only_with_status() {
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let t1: Timestamp = "2026-01-01T00:01:00Z".parse().unwrap();
        let t2: Timestamp = "2026-01-01T00:02:00Z".parse().unwrap();
        let mut conds = Vec::new();
        assert!(set_condition(&mut conds, joined("True", "a"), t0));
        assert!(!set_condition(&mut conds, joined("True", "a"), t1));
        assert!(set_condition(&mut conds, joined("True", "b"), t1));
        assert_eq!(conds[0].last_transition_time.0, t0);
        assert!(set_condition(&mut conds, joined("False", "b"), t2));
        assert_eq!(conds[0].last_transition_time.0, t2);
        assert_eq!(conds.len(), 1);
        assert!(!is_true(&conds, "Joined"));
        assert!(find(&conds, "Healthy").is_none());
    }
}
