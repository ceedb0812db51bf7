//! How often one placement, or one staged update run, may take a pass. A pass reads, compares
//! and writes a status of a few hundred bytes per cluster (megabytes at 10,000 clusters), and
//! every binding change wakes it; unpaced, a large placement or run spends its time on its
//! status for one binding at a time. So passes of one object are at least [`PER_CLUSTER`] ×
//! its clusters apart (100 ms at 1,000 clusters, a second at 10,000), and each pass takes in
//! every change since the last. This is a CPU budget, not a rule of placement or of runs, so
//! it counts real time, not the hub's clock.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// The least time between two passes of one object, per cluster of its placement.
const PER_CLUSTER: Duration = Duration::from_micros(100);

/// When each paced object may next take a pass, by key.
#[derive(Default)]
pub(crate) struct Pacing(Mutex<HashMap<String, Instant>>);

impl Pacing {
    /// How long object `key` must still wait before its next pass, if at all.
    pub fn wait(&self, key: &str) -> Option<Duration> {
        let due = *self.0.lock().expect("pacing lock").get(key)?;
        let now = Instant::now();
        (now < due).then(|| due - now)
    }

    /// Records that object `key`, of a placement with `clusters` clusters, takes a pass now.
    pub fn taken(&self, key: &str, clusters: usize) {
        let gap = PER_CLUSTER.saturating_mul(u32::try_from(clusters).unwrap_or(u32::MAX));
        let mut due = self.0.lock().expect("pacing lock");
        due.insert(key.to_string(), Instant::now() + gap);
    }

    /// Forgets object `key` (it finished or is gone).
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
        assert_eq!(pacing.wait("run"), None, "a first pass is never held");
        pacing.taken("run", 10_000);
        let wait = pacing.wait("run").expect("too soon");
        assert!(
            wait > Duration::from_millis(900) && wait <= Duration::from_secs(1),
            "{wait:?}"
        );
        assert_eq!(pacing.wait("other"), None, "objects are paced apart");
        pacing.taken("tiny", 0);
        assert_eq!(
            pacing.wait("tiny"),
            None,
            "an empty placement is never held"
        );
        pacing.forget("run");
        assert_eq!(pacing.wait("run"), None);
    }
}
