//! When the applier looks at a Work again: soon while it is not yet applied and available
//! (the member is still rolling it out, or something failed and may succeed on a retry), and
//! at a steady period once it is, to notice drift on the member (KubeFleet re-checks applied
//! Works periodically too).
//!
//! The quick checks back off from [`FIRST_RETRY`], doubling up to [`STEADY`], so a Work that
//! cannot be applied is retried without hammering the member. A Work that is applied and only
//! waiting for its resources to become available (a Service's load balancer, a CRD being
//! established) is looked at every [`FIRST_RETRY`] for its first [`PROMPT_CHECKS`] checks
//! instead: those usually finish within seconds, and backing off at once (1, 3, 7 s) made
//! availability, and so the whole rollout, seconds late. After those it backs off like any
//! other. A Work waiting only for workloads whose status the applier watches on the member
//! ([`WATCHED_WORKLOADS`]: a Deployment's pods starting) needs no prompt checks: the
//! workload becoming available brings the next check ([`super::flips`]), and the clock only
//! backs that up, from [`WORKLOAD_BACKSTOP`].

use flotilla_api::conditions::is_true;
use flotilla_api::placement::work::WorkStatus;
use jiff::{SignedDuration, Timestamp};

use super::outcome::{APPLIED, AVAILABLE, DIFF_REPORTED};

/// The workload kinds (group, kind) whose status the applier watches on the member, so a
/// change to it brings the check of the Work that placed it at once.
pub const WATCHED_WORKLOADS: [(&str, &str); 3] = [
    ("apps", "Deployment"),
    ("apps", "StatefulSet"),
    ("apps", "DaemonSet"),
];

/// The period of checks of a settled Work.
pub const STEADY: SignedDuration = SignedDuration::from_secs(60);
/// The first quick check after a Work is found unsettled.
pub const FIRST_RETRY: SignedDuration = SignedDuration::from_secs(1);

/// The first check of a Work awaiting only watched workloads, backing up their watch;
/// doubling, up to [`STEADY`], after that. Its first status is held until then
/// ([`super::hold::SETTLE`]).
pub const WORKLOAD_BACKSTOP: SignedDuration = SignedDuration::from_secs(10);

/// How many checks, [`FIRST_RETRY`] apart, a Work waiting for availability gets before it
/// backs off.
pub const PROMPT_CHECKS: u32 = 10;

/// How far a Work has got, as far as the pace of its checks goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Applied and available, or its differences reported: nothing more to do.
    Settled,
    /// Applied; some of its resources, not all of them watched workloads, are not available
    /// yet.
    Progressing,
    /// Applied; only watched workloads ([`WATCHED_WORKLOADS`]) are not available yet: their
    /// watch brings the next check.
    AwaitingWorkloads,
    /// Not applied (or not reported): something failed or is still to be done.
    Unsettled,
}

/// How often a Work is being checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    /// Settled: every [`STEADY`].
    Steady,
    /// Waiting for availability: every [`FIRST_RETRY`]; this many such checks so far.
    Prompt(u32),
    /// Not settled: again after this delay.
    Retrying(SignedDuration),
}

impl Pace {
    /// The pace after a check that found the Work at `progress`, `previous` being the pace
    /// before it (`None` for a first check, or after the Work's spec changed).
    pub fn next(previous: Option<Pace>, progress: Progress) -> Pace {
        match (progress, previous) {
            (Progress::Settled, _) => Pace::Steady,
            (Progress::Progressing, Some(Pace::Prompt(n))) if n < PROMPT_CHECKS => {
                Pace::Prompt(n + 1)
            }
            (Progress::Progressing, Some(Pace::Steady) | None) => Pace::Prompt(1),
            (Progress::AwaitingWorkloads, Some(Pace::Prompt(_) | Pace::Steady) | None) => {
                Pace::Retrying(WORKLOAD_BACKSTOP)
            }
            (_, Some(Pace::Retrying(delay))) => {
                Pace::Retrying(delay.checked_mul(2).unwrap_or(STEADY).min(STEADY))
            }
            (_, Some(Pace::Prompt(_) | Pace::Steady) | None) => Pace::Retrying(FIRST_RETRY),
        }
    }

    /// How long until the next check.
    pub fn delay(self) -> SignedDuration {
        match self {
            Pace::Steady => STEADY,
            Pace::Prompt(_) => FIRST_RETRY,
            Pace::Retrying(delay) => delay,
        }
    }
}

/// When the next check of a Work is due at `pace`, and no later than `not_after` (the end of
/// a hold of its status, [`super::hold`]), given the check already scheduled for it (if any),
/// and whether that is a new deadline to schedule. A check still to come no later than the
/// pace asks for is kept rather than joined by another, so a Work's scheduled checks never
/// multiply, however often it is reconciled in between.
pub fn next_check(
    scheduled: Option<Timestamp>,
    now: Timestamp,
    pace: Pace,
    not_after: Option<Timestamp>,
) -> (Timestamp, bool) {
    let paced = now.checked_add(pace.delay()).unwrap_or(now);
    let due = not_after.map_or(paced, |end| end.clamp(now, paced));
    match scheduled {
        Some(at) if at > now && at <= due => (at, false),
        _ => (due, true),
    }
}

/// How far a Work with `status` has got: settled when every manifest is applied and
/// available, or, under ReportDiff, every difference reported; progressing when applied and
/// waiting for availability.
pub fn progress(status: &WorkStatus) -> Progress {
    let conditions = &status.conditions;
    let applied = is_true(conditions, APPLIED);
    if (applied && is_true(conditions, AVAILABLE)) || is_true(conditions, DIFF_REPORTED) {
        Progress::Settled
    } else if !applied {
        Progress::Unsettled
    } else if status
        .manifest_conditions
        .iter()
        .filter(|m| !is_true(&m.conditions, AVAILABLE))
        .all(|m| is_watched(&m.identifier.group, &m.identifier.kind))
    {
        Progress::AwaitingWorkloads
    } else {
        Progress::Progressing
    }
}

/// Whether the applier watches the status of member objects of `kind` in `group`.
pub fn is_watched(group: &str, kind: &str) -> bool {
    WATCHED_WORKLOADS.contains(&(group, kind))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_api::placement::work::{ManifestCondition, WorkResourceIdentifier};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

    fn secs(n: i64) -> SignedDuration {
        SignedDuration::from_secs(n)
    }

    fn delays(progress: Progress, checks: usize) -> (Vec<i64>, Option<Pace>) {
        let mut pace = None;
        let mut delays = Vec::new();
        for _ in 0..checks {
            let next = Pace::next(pace, progress);
            delays.push(next.delay().as_secs());
            pace = Some(next);
        }
        (delays, pace)
    }

    #[test]
    fn backs_off_while_unsettled_and_steadies_once_settled() {
        let (delays, pace) = delays(Progress::Unsettled, 8);
        assert_eq!(delays, vec![1, 2, 4, 8, 16, 32, 60, 60]);
        let steady = Pace::next(pace, Progress::Settled);
        assert_eq!((steady, steady.delay()), (Pace::Steady, secs(60)));
        // Unsettled again (say, drift): quick checks start over.
        assert_eq!(
            Pace::next(Some(steady), Progress::Unsettled),
            Pace::Retrying(secs(1))
        );
    }

    #[test]
    fn waits_for_availability_promptly_then_backs_off() {
        let (delays, _) = delays(Progress::Progressing, 14);
        assert_eq!(delays, vec![1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 4, 8]);
        // A failure while waiting backs off at once.
        assert_eq!(
            Pace::next(Some(Pace::Prompt(3)), Progress::Unsettled),
            Pace::Retrying(secs(1))
        );
        assert_eq!(
            Pace::next(Some(Pace::Prompt(3)), Progress::Settled),
            Pace::Steady
        );
    }

    #[test]
    fn scheduled_checks_never_multiply() {
        let now: Timestamp = "2026-03-01T10:00:00Z".parse().unwrap();
        let at = |s: i64| now.checked_add(secs(s)).unwrap();
        let quick = Pace::Retrying(secs(4));
        // (already scheduled, pace, end of a hold, expected)
        let cases = [
            (None, Pace::Steady, None, (at(60), true)),
            (Some(at(2)), quick, None, (at(2), false)),
            (Some(at(4)), quick, None, (at(4), false)),
            (Some(at(30)), quick, None, (at(4), true)),
            (Some(at(30)), Pace::Steady, None, (at(30), false)),
            // Due now or past: that check is this one, or is gone.
            (Some(at(0)), Pace::Steady, None, (at(60), true)),
            (Some(at(-5)), quick, None, (at(4), true)),
            // A held status is checked again when its hold ends, if the pace would wait
            // longer.
            (None, Pace::Retrying(secs(10)), Some(at(5)), (at(5), true)),
            (
                Some(at(10)),
                Pace::Retrying(secs(10)),
                Some(at(5)),
                (at(5), true),
            ),
            (
                Some(at(5)),
                Pace::Retrying(secs(10)),
                Some(at(5)),
                (at(5), false),
            ),
            (None, quick, Some(at(5)), (at(4), true)),
        ];
        for (scheduled, pace, not_after, expected) in cases {
            assert_eq!(
                next_check(scheduled, now, pace, not_after),
                expected,
                "{scheduled:?} {pace:?} {not_after:?}"
            );
        }
    }

    fn status(conditions: &[(&str, &str)]) -> WorkStatus {
        WorkStatus {
            conditions: conditions
                .iter()
                .map(|(type_, status)| Condition {
                    type_: (*type_).into(),
                    status: (*status).into(),
                    reason: "Reason".into(),
                    message: String::new(),
                    observed_generation: None,
                    last_transition_time: Time(Timestamp::UNIX_EPOCH),
                })
                .collect(),
            manifest_conditions: Vec::new(),
        }
    }

    #[test]
    fn a_work_awaiting_only_watched_workloads_leaves_it_to_their_watch() {
        let (delays, _) = delays(Progress::AwaitingWorkloads, 5);
        assert_eq!(delays, vec![10, 20, 40, 60, 60]);
        // Still awaiting them after a failed check: the backoff goes on from where it was.
        assert_eq!(
            Pace::next(Some(Pace::Retrying(secs(2))), Progress::AwaitingWorkloads),
            Pace::Retrying(secs(4))
        );
    }

    #[test]
    fn what_a_work_waits_for() {
        use Progress::*;
        let manifest = |group: &str, kind: &str, available: &str| ManifestCondition {
            identifier: WorkResourceIdentifier {
                group: group.into(),
                kind: kind.into(),
                ..WorkResourceIdentifier::default()
            },
            conditions: status(&[("Applied", "True"), ("Available", available)]).conditions,
            ..ManifestCondition::default()
        };
        let cases = [
            (
                vec![manifest("apps", "Deployment", "False")],
                AwaitingWorkloads,
            ),
            (
                vec![
                    manifest("", "Service", "True"),
                    manifest("apps", "StatefulSet", "False"),
                    manifest("apps", "DaemonSet", "Unknown"),
                ],
                AwaitingWorkloads,
            ),
            (
                vec![
                    manifest("apps", "Deployment", "False"),
                    manifest("", "Service", "False"),
                ],
                Progressing,
            ),
            (
                vec![manifest("example.com", "Deployment", "False")],
                Progressing,
            ),
        ];
        for (manifests, expected) in cases {
            let mut work = status(&[("Applied", "True"), ("Available", "False")]);
            work.manifest_conditions = manifests;
            assert_eq!(progress(&work), expected, "{:?}", work.manifest_conditions);
        }
    }

    #[test]
    fn progress_of_works() {
        use Progress::*;
        let cases = [
            (vec![], Unsettled),
            (vec![("Applied", "True")], AwaitingWorkloads),
            (
                vec![("Applied", "True"), ("Available", "False")],
                AwaitingWorkloads,
            ),
            (vec![("Applied", "False")], Unsettled),
            (vec![("Applied", "True"), ("Available", "True")], Settled),
            (vec![("DiffReported", "True")], Settled),
            (vec![("DiffReported", "False")], Unsettled),
        ];
        for (conditions, expected) in cases {
            assert_eq!(progress(&status(&conditions)), expected, "{conditions:?}");
        }
    }
}
