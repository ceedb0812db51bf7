//! Which changes of a watched workload ([`super::pace::WATCHED_WORKLOADS`]) should bring a
//! check of the Work that placed it: only those that flip the workload's availability.
//!
//! A Deployment's status changes several times while its pods start (observed generation,
//! replica counts, conditions), and a check of the Work reads and compares every manifest on
//! the member. At 10,000 members a check for each of those changes was most of the applier's
//! load, and only the last one, the workload becoming available, changes what the Work
//! reports. The first sighting of a workload brings no check either: the applier has just
//! created or applied it, and its check is already under way. The clock still checks a Work
//! awaiting its workloads, at a slow pace ([`super::pace::WORKLOAD_BACKSTOP`]), so the counts
//! in its message are refreshed now and then.

use std::collections::HashMap;
use std::mem;

/// The availability last seen of each watched workload, by uid.
#[derive(Debug, Default)]
pub struct AvailabilityFlips {
    /// Each workload's availability, as last seen.
    seen: HashMap<String, bool>,
    /// During a relist (the watch started again), what was seen before it: a workload listed
    /// again is compared with it, one not listed again is forgotten when the relist ends.
    before_relist: HashMap<String, bool>,
}

impl AvailabilityFlips {
    /// Records that workload `uid` is seen `available` now, and says whether that is a flip:
    /// its availability changed since it was last seen.
    pub fn observe(&mut self, uid: &str, available: bool) -> bool {
        let previous = self
            .seen
            .insert(uid.to_owned(), available)
            .or_else(|| self.before_relist.remove(uid));
        previous.is_some_and(|was| was != available)
    }

    /// Forgets workload `uid`: it was deleted.
    pub fn forget(&mut self, uid: &str) {
        self.seen.remove(uid);
    }

    /// The watch lists every workload again: what it lists is compared with what was seen.
    pub fn relist_started(&mut self) {
        self.before_relist = mem::take(&mut self.seen);
    }

    /// The relist is complete: workloads it did not list are gone.
    pub fn relist_done(&mut self) {
        self.before_relist.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn only_flips_wake() {
        let mut flips = AvailabilityFlips::default();
        // (uid, available, a flip?)
        let steps = [
            ("a", false, false), // first sighting: just applied
            ("a", false, false), // replica counts moving
            ("a", true, true),   // available
            ("a", true, false),  // a condition's time updated
            ("b", true, false),
            ("a", false, true), // a new rollout on the member
        ];
        for (i, (uid, available, flip)) in steps.into_iter().enumerate() {
            assert_eq!(flips.observe(uid, available), flip, "step {i}");
        }
        flips.forget("a");
        assert!(!flips.observe("a", true), "a recreated workload is new");
    }

    #[test]
    fn a_relist_compares_with_what_was_seen() {
        let mut flips = AvailabilityFlips::default();
        flips.observe("same", true);
        flips.observe("flipped", false);
        flips.observe("gone", false);
        flips.relist_started();
        assert!(!flips.observe("same", true));
        assert!(flips.observe("flipped", true), "flipped while disconnected");
        assert!(!flips.observe("new", false));
        flips.relist_done();
        assert!(!flips.observe("gone", true), "not listed again: forgotten");
        assert!(flips.observe("flipped", false), "relisted objects are kept");
    }

    proptest! {
        /// Whatever the sequence, a workload wakes its Work exactly when its availability
        /// differs from the last time it was seen, never on a first sighting.
        #[test]
        fn wakes_exactly_on_changes(events in proptest::collection::vec((0..4u8, any::<bool>()), 0..64)) {
            let mut flips = AvailabilityFlips::default();
            let mut last: HashMap<u8, bool> = HashMap::new();
            for (uid, available) in events {
                let expected = last.insert(uid, available).is_some_and(|was| was != available);
                prop_assert_eq!(flips.observe(&uid.to_string(), available), expected);
            }
        }
    }
}
