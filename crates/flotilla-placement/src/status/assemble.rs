//! Building condition lists whose `lastTransitionTime` only moves on a real transition.

use flotilla_api::conditions::{NewCondition, set_condition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::Timestamp;

/// The conditions `new`, in order, at `now`. Each keeps the `lastTransitionTime` of the
/// condition of its type in `previous` when that one has the same status and was observed for
/// the same generation: a condition about a new generation is a new observation (the rollout
/// measures the unavailable period from it).
pub(crate) fn assemble(
    previous: &[Condition],
    new: Vec<NewCondition<'_>>,
    now: Timestamp,
) -> Vec<Condition> {
    new.into_iter()
        .map(|condition| {
            let mut slot: Vec<Condition> = previous
                .iter()
                .filter(|c| {
                    c.type_ == condition.type_
                        && c.observed_generation == condition.observed_generation
                })
                .take(1)
                .cloned()
                .collect();
            set_condition(&mut slot, condition, now);
            slot.remove(0)
        })
        .collect()
}

/// The conditions of `previous` whose type is not in `owned`: another controller's, kept as
/// they are.
pub(crate) fn foreign(previous: &[Condition], owned: &[String]) -> Vec<Condition> {
    previous
        .iter()
        .filter(|c| !owned.contains(&c.type_))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new(status: &'static str, generation: i64) -> NewCondition<'static> {
        NewCondition {
            type_: "Applied",
            status,
            reason: "R",
            message: String::new(),
            observed_generation: Some(generation),
        }
    }

    #[test]
    fn transition_time_moves_with_status_or_generation() {
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let t1: Timestamp = "2026-01-01T00:01:00Z".parse().unwrap();
        let first = assemble(&[], vec![new("True", 1)], t0);
        let cases = [
            (new("True", 1), t0),
            (new("False", 1), t1),
            (new("True", 2), t1),
        ];
        for (condition, expected) in cases {
            let next = assemble(&first, vec![condition.clone()], t1);
            assert_eq!(next[0].last_transition_time.0, expected, "{condition:?}");
        }
    }
}
