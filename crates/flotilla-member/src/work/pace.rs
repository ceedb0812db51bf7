//! When the applier looks at a Work again: soon while it is not yet applied and available
//! (the member is still rolling it out, or something failed and may succeed on a retry), and
//! at a steady period once it is, to notice drift on the member (KubeFleet re-checks applied
//! Works periodically too).
//!
//! The quick checks back off from [`FIRST_RETRY`], doubling up to [`STEADY`], so a Work that
//! cannot be applied is retried without hammering the member.

use flotilla_api::conditions::is_true;
use flotilla_api::placement::work::WorkStatus;
use jiff::{SignedDuration, Timestamp};

use super::outcome::{APPLIED, AVAILABLE, DIFF_REPORTED};

/// The period of checks of a settled Work.
pub const STEADY: SignedDuration = SignedDuration::from_secs(60);
/// The first quick check after a Work is found unsettled.
pub const FIRST_RETRY: SignedDuration = SignedDuration::from_secs(1);

/// How often a Work is being checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    /// Settled: every [`STEADY`].
    Steady,
    /// Not settled: again after this delay.
    Retrying(SignedDuration),
}

impl Pace {
    /// The pace after a check that found the Work `settled` or not, `previous` being the
    /// pace before it (`None` for a first check, or after the Work's spec changed).
    pub fn next(previous: Option<Pace>, settled: bool) -> Pace {
        if settled {
            return Pace::Steady;
        }
        match previous {
            Some(Pace::Retrying(delay)) => {
                Pace::Retrying(delay.checked_mul(2).unwrap_or(STEADY).min(STEADY))
            }
            Some(Pace::Steady) | None => Pace::Retrying(FIRST_RETRY),
        }
    }

    /// How long until the next check.
    pub fn delay(self) -> SignedDuration {
        match self {
            Pace::Steady => STEADY,
            Pace::Retrying(delay) => delay,
        }
    }
}

/// When the next check of a Work is due at `pace`, given the check already scheduled for it
/// (if any), and whether that is a new deadline to schedule. A check still to come no later
/// than the pace asks for is kept rather than joined by another, so a Work's scheduled checks
/// never multiply, however often it is reconciled in between.
pub fn next_check(scheduled: Option<Timestamp>, now: Timestamp, pace: Pace) -> (Timestamp, bool) {
    let due = now.checked_add(pace.delay()).unwrap_or(now);
    match scheduled {
        Some(at) if at > now && at <= due => (at, false),
        _ => (due, true),
    }
}

/// Whether a Work with `status` needs nothing more: every manifest applied and available, or,
/// under ReportDiff, every difference reported.
pub fn settled(status: &WorkStatus) -> bool {
    let conditions = &status.conditions;
    (is_true(conditions, APPLIED) && is_true(conditions, AVAILABLE))
        || is_true(conditions, DIFF_REPORTED)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

    fn secs(n: i64) -> SignedDuration {
        SignedDuration::from_secs(n)
    }

    #[test]
    fn backs_off_while_unsettled_and_steadies_once_settled() {
        let mut pace = None;
        let mut delays = Vec::new();
        for _ in 0..8 {
            let next = Pace::next(pace, false);
            delays.push(next.delay().as_secs());
            pace = Some(next);
        }
        assert_eq!(delays, vec![1, 2, 4, 8, 16, 32, 60, 60]);
        let steady = Pace::next(pace, true);
        assert_eq!((steady, steady.delay()), (Pace::Steady, secs(60)));
        // Unsettled again (say, drift): quick checks start over.
        assert_eq!(Pace::next(Some(steady), false), Pace::Retrying(secs(1)));
    }

    #[test]
    fn scheduled_checks_never_multiply() {
        let now: Timestamp = "2026-03-01T10:00:00Z".parse().unwrap();
        let at = |s: i64| now.checked_add(secs(s)).unwrap();
        let quick = Pace::Retrying(secs(4));
        // (already scheduled, pace, expected)
        let cases = [
            (None, Pace::Steady, (at(60), true)),
            (Some(at(2)), quick, (at(2), false)),
            (Some(at(4)), quick, (at(4), false)),
            (Some(at(30)), quick, (at(4), true)),
            (Some(at(30)), Pace::Steady, (at(30), false)),
            // Due now or past: that check is this one, or is gone.
            (Some(at(0)), Pace::Steady, (at(60), true)),
            (Some(at(-5)), quick, (at(4), true)),
        ];
        for (scheduled, pace, expected) in cases {
            assert_eq!(
                next_check(scheduled, now, pace),
                expected,
                "{scheduled:?} {pace:?}"
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
    fn settled_works() {
        let cases = [
            (vec![], false),
            (vec![("Applied", "True")], false),
            (vec![("Applied", "True"), ("Available", "False")], false),
            (vec![("Applied", "False")], false),
            (vec![("Applied", "True"), ("Available", "True")], true),
            (vec![("DiffReported", "True")], true),
            (vec![("DiffReported", "False")], false),
        ];
        for (conditions, expected) in cases {
            assert_eq!(settled(&status(&conditions)), expected, "{conditions:?}");
        }
    }
}
