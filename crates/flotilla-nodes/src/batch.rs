//! Karpenter's provisioning batch window: pending pods are provisioned together once no new one
//! arrived for the idle duration (1 s) or the window has been open for the maximum duration
//! (10 s), so a Deployment's pods, created over several moments, get nodes chosen for all of
//! them at once rather than for whichever arrived first.

use jiff::{SignedDuration, Timestamp};

/// How long without a change to the pending pods closes the window (Karpenter's
/// `BATCH_IDLE_DURATION` default).
pub const IDLE: SignedDuration = SignedDuration::from_secs(1);

/// The longest a window stays open (Karpenter's `BATCH_MAX_DURATION` default).
pub const MAX: SignedDuration = SignedDuration::from_secs(10);

/// An open window: when it opened, when the pending pods last changed, and which they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// When the first pending pod of the window was seen.
    pub opened: Timestamp,
    /// When the set of pending pods last changed.
    pub changed: Timestamp,
    /// A fingerprint of the set of pending pods.
    pub pods: u64,
}

/// What to do with the pending pods now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Keep collecting until this instant.
    Wait(Timestamp),
    /// Provision every pending pod now (the window closes).
    Provision,
}

/// The window after seeing the pending pods `pods` (a fingerprint) at `now`, and what to do:
/// a window opens on the first sight of pending pods, restarts its idle wait whenever the set
/// changes, and closes when the idle or the maximum duration has passed.
pub fn observe(window: Option<Window>, pods: u64, now: Timestamp) -> (Window, Decision) {
    let window = match window {
        None => Window {
            opened: now,
            changed: now,
            pods,
        },
        Some(w) if w.pods != pods => Window {
            changed: now,
            pods,
            ..w
        },
        Some(w) => w,
    };
    let close = (window.changed + IDLE).min(window.opened + MAX);
    let decision = if now >= close {
        Decision::Provision
    } else {
        Decision::Wait(close)
    };
    (window, decision)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + secs).unwrap()
    }

    /// A table row: its name, the `(second, fingerprint)` sightings, the decisions wanted.
    type Case<'a> = (&'a str, &'a [(i64, u64)], &'a [Decision]);

    /// Feeds `(second, fingerprint)` sightings in order; returns the decisions.
    fn run(sightings: &[(i64, u64)]) -> Vec<Decision> {
        let mut window = None;
        sightings
            .iter()
            .map(|&(s, pods)| {
                let (w, decision) = observe(window, pods, at(s));
                window = (decision != Decision::Provision).then_some(w);
                decision
            })
            .collect()
    }

    #[test]
    fn the_window_closes_after_a_quiet_second_or_ten_seconds() {
        use Decision::*;
        let cases: &[Case] = &[
            ("first sight waits a second", &[(0, 1)], &[Wait(at(1))]),
            (
                "unchanged for a second provisions",
                &[(0, 1), (1, 1)],
                &[Wait(at(1)), Provision],
            ),
            (
                "a change restarts the idle wait",
                &[(0, 1), (0, 2), (1, 2), (2, 2)],
                &[Wait(at(1)), Wait(at(1)), Provision, Wait(at(3))],
            ),
            (
                "a change just before the idle end delays it",
                &[(0, 1), (1, 2), (2, 2)],
                &[Wait(at(1)), Wait(at(2)), Provision],
            ),
            (
                "pods changing every second still close at ten",
                &[(0, 1), (1, 2), (2, 3), (9, 4), (10, 5)],
                &[
                    Wait(at(1)),
                    Wait(at(2)),
                    Wait(at(3)),
                    Wait(at(10)),
                    Provision,
                ],
            ),
        ];
        for (name, sightings, want) in cases {
            assert_eq!(run(sightings), *want, "{name}");
        }
    }

    proptest::proptest! {
        /// Whatever the sightings, a window never waits past ten seconds after it opened, and
        /// never provisions before a second without change or ten seconds have passed.
        #[test]
        fn waits_are_bounded(changes in proptest::collection::vec((0i64..4, 0u64..3), 1..20)) {
            let mut window: Option<Window> = None;
            let mut now = 0;
            for (gap, pods) in changes {
                now += gap;
                let (w, decision) = observe(window, pods, at(now));
                match decision {
                    Decision::Wait(until) => {
                        proptest::prop_assert!(until <= w.opened + MAX);
                        proptest::prop_assert!(until > at(now));
                        window = Some(w);
                    }
                    Decision::Provision => {
                        proptest::prop_assert!(at(now) >= (w.changed + IDLE).min(w.opened + MAX));
                        window = None;
                    }
                }
            }
        }
    }
}
