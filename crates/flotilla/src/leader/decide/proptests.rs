//! A model of several replicas electing through one lease whose writes are compare-and-swap
//! on the version: whatever the interleaving, stale reads, write delays and clock skew
//! (smaller than lease duration minus renew deadline), no two replicas ever believe they lead
//! at the same instant.

use std::time::Duration;

use proptest::prelude::*;

use super::*;

const CANDIDATES: usize = 3;

/// One attempt: candidate `who` reads the lease `lag` ms before `advance` ms from the last
/// step's instant, decides on what it read, and writes (if it decides to) at that instant;
/// or, with `release`, stops leading and releases.
#[derive(Debug, Clone)]
struct Step {
    who: usize,
    advance: i64,
    lag: i64,
    release: bool,
}

#[derive(Debug, Clone)]
struct Scenario {
    config: LeaseConfig,
    /// Each candidate's clock minus the true time, in ms.
    skews: Vec<i64>,
    steps: Vec<Step>,
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (1u64..=15)
        .prop_flat_map(|lease| (Just(lease), 2..lease * 1000))
        .prop_flat_map(|(lease, renew)| (Just(lease), Just(renew), 1..renew))
        .prop_flat_map(|(lease, renew, retry)| {
            let config = LeaseConfig::new(
                Duration::from_secs(lease),
                Duration::from_millis(renew),
                Duration::from_millis(retry),
            )
            .expect("a valid configuration");
            let margin = (lease * 1000 - renew) as i64;
            let step = (
                0..CANDIDATES,
                0..3 * margin + 2000,
                0..margin + 2000,
                0..20u8,
            )
                .prop_map(|(who, advance, lag, release)| Step {
                    who,
                    advance,
                    lag,
                    release: release == 0,
                });
            (
                Just(config),
                prop::collection::vec(0..margin, CANDIDATES),
                prop::collection::vec(step, 1..80),
            )
        })
        .prop_map(|(config, skews, steps)| Scenario {
            config,
            skews,
            steps,
        })
}

fn local(true_ms: i64, skew: i64) -> Timestamp {
    Timestamp::from_millisecond(1_700_000_000_000 + true_ms + skew).unwrap()
}

fn true_ms(local: Timestamp, skew: i64) -> i64 {
    local.as_millisecond() - 1_700_000_000_000 - skew
}

/// The lease store: every version with the true instant it was written.
#[derive(Default)]
struct Store {
    versions: Vec<(i64, LeaseRecord)>,
}

impl Store {
    /// The lease as read at `t`.
    fn read(&self, t: i64) -> Option<Observed> {
        self.versions
            .iter()
            .enumerate()
            .rev()
            .find(|(_, (written, _))| *written <= t)
            .map(|(i, (_, record))| Observed {
                record: record.clone(),
                resource_version: i.to_string(),
            })
    }

    /// Writes `record` at `t` if the lease is still at `version` (`None`: absent).
    fn compare_and_swap(&mut self, version: Option<&str>, record: LeaseRecord, t: i64) -> bool {
        let current = self.versions.len().checked_sub(1).map(|i| i.to_string());
        if current.as_deref() != version {
            return false;
        }
        self.versions.push((t, record));
        true
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn never_two_leaders(s in scenario()) {
        let names: Vec<String> = (0..CANDIDATES).map(|i| format!("c{i}")).collect();
        let mut store = Store::default();
        let mut now = 0i64;
        let mut last_op = [0i64; CANDIDATES];
        // Each candidate's leading intervals [from, until) in true ms.
        let mut leading: Vec<Vec<(i64, i64)>> = vec![Vec::new(); CANDIDATES];
        for step in &s.steps {
            now += step.advance;
            let who = step.who;
            let skew = s.skews[who];
            let read_at = (now - step.lag).max(last_op[who]);
            last_op[who] = now;
            let observed = store.read(read_at);
            if step.release {
                // The shell stops its controllers before it reads the lease to release it.
                for interval in &mut leading[who] {
                    interval.1 = interval.1.min(read_at);
                }
                let released = observed
                    .as_ref()
                    .and_then(|o| release(o, &names[who], local(read_at, skew)));
                if let Some(w) = released {
                    store.compare_and_swap(w.resource_version.as_deref(), w.record, now);
                }
                continue;
            }
            match decide(observed.as_ref(), &names[who], local(read_at, skew), &s.config) {
                Action::Wait { holder, until } => {
                    prop_assert_ne!(&holder, &names[who]);
                    prop_assert!(until > local(read_at, skew));
                    prop_assert!(until <= local(read_at, skew) + s.config.retry_period());
                }
                Action::Write(w) => {
                    let until = true_ms(w.leading_until.expect("a leading write"), skew);
                    let previous = observed.as_ref().map(|o| o.record.clone());
                    let version = w.resource_version.as_deref();
                    if store.compare_and_swap(version, w.record.clone(), now) {
                        if let Some(previous) = previous {
                            let changed_hands = previous.holder != w.record.holder;
                            prop_assert_eq!(
                                w.record.transitions,
                                previous.transitions + i32::from(changed_hands)
                            );
                        }
                        if now < until {
                            leading[who].push((now, until));
                        }
                    }
                }
            }
        }
        for a in 0..CANDIDATES {
            for b in a + 1..CANDIDATES {
                for &(a_from, a_until) in &leading[a] {
                    for &(b_from, b_until) in &leading[b] {
                        prop_assert!(
                            a_from.max(b_from) >= a_until.min(b_until),
                            "c{} led [{}, {}) and c{} led [{}, {}) at once",
                            a, a_from, a_until, b, b_from, b_until
                        );
                    }
                }
            }
        }
    }
}
