//! How often one run may take a pass. A pass reads, compares and writes the run's status, a
//! few hundred bytes per cluster (megabytes at 10,000 clusters), and every binding change
//! wakes the run; unpaced, a large run spends its time on its status for one binding at a
//! time. So a run's passes are at least [`PER_CLUSTER`] × its clusters apart (100 ms at 1,000
//! clusters, a second at 10,000), and each pass takes in every change since the last. This is
//! a CPU budget, not a rule of the run, so it counts real time, not the hub's clock.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// The least time between two passes of a run, per cluster of its placement.
const PER_CLUSTER: Duration = Duration::from_micros(100);

/// When each run last took a pass.
#[derive(Default)]
pub(super) struct Pacing(Mutex<HashMap<String, Instant>>);

impl Pacing {
    /// How long run `key` (of a placement with `clusters` clusters) must still wait before
    /// its next pass, if at all.
    pub fn wait(&self, key: &str, clusters: usize) -> Option<Duration> {
        let gap = PER_CLUSTER.saturating_mul(u32::try_from(clusters).unwrap_or(u32::MAX));
        let last = self.0.lock().expect("pacing lock");
        let due = *last.get(key)? + gap;
        let now = Instant::now();
        (now < due).then(|| due - now)
    }

    /// Records that run `key` takes a pass now.
    pub fn taken(&self, key: &str) {
        let mut last = self.0.lock().expect("pacing lock");
        last.insert(key.to_string(), Instant::now());
    }

    /// Forgets run `key` (it finished or is gone).
    pub fn forget(&self, key: &str) {
        self.0.lock().expect("pacing lock").remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_are_spaced_by_the_size_of_the_run() {
        let pacing = Pacing::default();
        assert_eq!(
            pacing.wait("run", 10_000),
            None,
            "a first pass is never held"
        );
        assert_eq!(pacing.wait("run", 10_000), None, "only a pass taken counts");
        pacing.taken("run");
        let wait = pacing.wait("run", 10_000).expect("too soon");
        assert!(
            wait > Duration::from_millis(900) && wait <= Duration::from_secs(1),
            "{wait:?}"
        );
        assert_eq!(pacing.wait("other", 10_000), None, "runs are paced apart");
        pacing.taken("tiny");
        assert_eq!(pacing.wait("tiny", 0), None, "an empty run is never held");
        pacing.forget("run");
        assert_eq!(pacing.wait("run", 10_000), None);
    }
}
