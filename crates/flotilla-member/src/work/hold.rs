//! When the applier writes a Work's new status: at once, except for one intermediate status.
//!
//! A Work whose manifests were just applied, and which waits only for workloads the applier
//! watches ([`Progress::AwaitingWorkloads`]: a Deployment's pods starting), usually becomes
//! available seconds later. Writing "Applied, not yet Available" and then "Available" costs
//! two Work writes, and the hub's work generator mirrors each into the binding: two binding
//! writes more, and a pass of every controller watching them. At thousands of members those
//! writes were a tenth of the hub's load during a rollout.
//!
//! So that one status is held back for at most [`SETTLE`]: if the workloads become available
//! within it (their watch brings the check, [`super::flips`]), a single write reports both;
//! otherwise the held status is written when [`SETTLE`] runs out. Nothing else waits: a
//! failure, drift, differences, a loss of availability, or any status of a Work that already
//! reported being applied for its generation is written at once. Rollouts never wait on it
//! either, since they wait for availability, which is never held.

use flotilla_api::conditions::find;
use flotilla_api::placement::work::WorkStatus;
use jiff::{SignedDuration, Timestamp};

use super::outcome::APPLIED;
use super::pace::{Progress, WORKLOAD_BACKSTOP, progress};

/// The longest a Work's first "applied, awaiting workloads" status is held back: until the
/// clock's first check of such a Work ([`WORKLOAD_BACKSTOP`]), which comes anyway when its
/// workloads are slower. So the check that ends a hold is never one more than the applier
/// would have made without it; and when the workloads are quicker, one write is saved.
pub const SETTLE: SignedDuration = WORKLOAD_BACKSTOP;

/// What to do with the status a check of a Work computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    /// It equals the stored status: nothing to write.
    Unchanged,
    /// Write it now.
    Write,
    /// Hold it until this time, when the Work must be checked again (and its status
    /// written, unless it settled in the meantime).
    HoldUntil(Timestamp),
}

/// What to do at `now` with the status `after` computed over the stored `before`, given the
/// end of a hold already begun for this Work (`held_until`, if any).
pub fn report(
    before: &WorkStatus,
    after: &WorkStatus,
    held_until: Option<Timestamp>,
    now: Timestamp,
) -> Report {
    if after == before {
        return Report::Unchanged;
    }
    if progress(after) != Progress::AwaitingWorkloads || applied_already(before, after) {
        return Report::Write;
    }
    match held_until {
        None => Report::HoldUntil(now.checked_add(SETTLE).unwrap_or(now)),
        Some(until) if now < until => Report::HoldUntil(until),
        Some(_) => Report::Write,
    }
}

/// Whether `before` already reports the Work applied for the generation `after` reports on.
fn applied_already(before: &WorkStatus, after: &WorkStatus) -> bool {
    let applied = |status: &WorkStatus| {
        find(&status.conditions, APPLIED)
            .filter(|c| c.status == "True")
            .map(|c| c.observed_generation)
    };
    applied(before).is_some_and(|generation| Some(generation) == applied(after))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_api::placement::work::{ManifestCondition, WorkResourceIdentifier};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
    use proptest::prelude::*;

    fn condition(type_: &str, status: &str, generation: i64) -> Condition {
        Condition {
            type_: type_.into(),
            status: status.into(),
            reason: "Reason".into(),
            message: String::new(),
            observed_generation: Some(generation),
            last_transition_time: Time(Timestamp::UNIX_EPOCH),
        }
    }

    /// A Work status at `generation`: its conditions, and one manifest of `kind` (available
    /// or not).
    fn status(conditions: &[(&str, &str)], generation: i64, kind: (&str, &str)) -> WorkStatus {
        let available = conditions
            .iter()
            .find(|(t, _)| *t == "Available")
            .map_or("Unknown", |(_, s)| *s);
        WorkStatus {
            conditions: conditions
                .iter()
                .map(|(t, s)| condition(t, s, generation))
                .collect(),
            manifest_conditions: vec![ManifestCondition {
                identifier: WorkResourceIdentifier {
                    group: kind.0.into(),
                    kind: kind.1.into(),
                    ..WorkResourceIdentifier::default()
                },
                conditions: vec![
                    condition("Applied", "True", generation),
                    condition("Available", available, generation),
                ],
                ..ManifestCondition::default()
            }],
        }
    }

    const DEPLOYMENT: (&str, &str) = ("apps", "Deployment");
    const SERVICE: (&str, &str) = ("", "Service");

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + secs).unwrap()
    }

    /// When a hold begun at `at(0)` ends.
    fn end() -> Timestamp {
        at(0).checked_add(SETTLE).unwrap()
    }

    /// `secs` after a hold begun at `at(0)` ended.
    fn after_end(secs: i64) -> Timestamp {
        end().checked_add(SignedDuration::from_secs(secs)).unwrap()
    }

    #[test]
    fn only_a_first_applied_status_awaiting_workloads_is_held() {
        let none = WorkStatus::default();
        let awaiting = |generation| {
            status(
                &[("Applied", "True"), ("Available", "False")],
                generation,
                DEPLOYMENT,
            )
        };
        let available = status(&[("Applied", "True"), ("Available", "True")], 1, DEPLOYMENT);
        let failed = status(&[("Applied", "False")], 1, DEPLOYMENT);
        let service = status(&[("Applied", "True"), ("Available", "False")], 1, SERVICE);
        // (before, after, held until, now, expected)
        let cases = [
            (&none, &awaiting(1), None, at(0), Report::HoldUntil(end())),
            // Checked again within the hold (another workload flipped): still held, to the
            // same end.
            (
                &none,
                &awaiting(1),
                Some(end()),
                at(3),
                Report::HoldUntil(end()),
            ),
            (&none, &awaiting(1), Some(end()), end(), Report::Write),
            (
                &none,
                &awaiting(1),
                Some(end()),
                after_end(4),
                Report::Write,
            ),
            // Available within the hold: written at once, both conditions in one write.
            (&none, &available, Some(end()), at(2), Report::Write),
            (&none, &available, None, at(0), Report::Write),
            (&none, &failed, None, at(0), Report::Write),
            (&none, &failed, Some(end()), at(1), Report::Write),
            // Waiting for something other than a watched workload: no watch brings the check.
            (&none, &service, None, at(0), Report::Write),
            // Already reported applied for this generation: a loss of availability, say.
            (&available, &awaiting(1), None, at(0), Report::Write),
            // A new generation applied, its workloads rolling: held like a first apply.
            (
                &available,
                &awaiting(2),
                None,
                at(0),
                Report::HoldUntil(end()),
            ),
            (&failed, &awaiting(1), None, at(0), Report::HoldUntil(end())),
            (&available, &available, None, at(0), Report::Unchanged),
            (
                &awaiting(1),
                &awaiting(1),
                Some(end()),
                after_end(4),
                Report::Unchanged,
            ),
        ];
        for (i, (before, after, held, now, expected)) in cases.into_iter().enumerate() {
            assert_eq!(report(before, after, held, now), expected, "case {i}");
        }
    }

    proptest! {
        /// Over any sequence of checks, a changed status is written no later than SETTLE after
        /// the check that first computed it was held, and a status that does not await
        /// watched workloads is never held.
        #[test]
        fn a_status_is_never_held_longer_than_settle(
            checks in prop::collection::vec((0i64..4, 0u8..4, 1i64..3), 1..30)
        ) {
            let mut stored = WorkStatus::default();
            let mut held_until: Option<Timestamp> = None;
            let mut now = at(0);
            for (gap, state, generation) in checks {
                now = now.checked_add(SignedDuration::from_secs(gap)).unwrap();
                let computed = match state {
                    0 => status(&[("Applied", "True"), ("Available", "False")], generation, DEPLOYMENT),
                    1 => status(&[("Applied", "True"), ("Available", "True")], generation, DEPLOYMENT),
                    2 => status(&[("Applied", "False")], generation, DEPLOYMENT),
                    _ => status(&[("Applied", "True"), ("Available", "False")], generation, SERVICE),
                };
                match report(&stored, &computed, held_until, now) {
                    Report::Unchanged => held_until = None,
                    Report::Write => {
                        stored = computed;
                        held_until = None;
                    }
                    Report::HoldUntil(until) => {
                        prop_assert_eq!(progress(&computed), Progress::AwaitingWorkloads);
                        prop_assert!(until > now && until <= now.checked_add(SETTLE).unwrap());
                        if let Some(previous) = held_until {
                            prop_assert_eq!(until, previous, "a hold is never extended");
                        }
                        held_until = Some(until);
                    }
                }
            }
        }
    }
}
