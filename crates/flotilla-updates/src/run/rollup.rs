//! Roll-up: the state of a group from its members, of a stage from its groups, of the run from
//! its stages — the rules of AKS Fleet Manager as pure functions over states.

use flotilla_api::updates::update_run::UpdateState;

/// The state of a segment from its children, before gates, failure thresholds and stop are
/// applied:
/// - no children, or all Skipped: Skipped;
/// - all final (Completed, Skipped or Failed): Completed (thresholds decide on Failed);
/// - any Running or Stopping: Running;
/// - otherwise, any Pending: Pending (the segment holds: its other children have not
///   started or are done);
/// - all NotStarted: NotStarted; a mix of NotStarted and final children: Running.
pub fn children(states: impl IntoIterator<Item = UpdateState>) -> UpdateState {
    let (mut any, mut all_skipped, mut all_final, mut all_not_started) = (false, true, true, true);
    let (mut running, mut pending) = (false, false);
    for state in states {
        any = true;
        all_skipped &= state == UpdateState::Skipped;
        all_final &= state.is_final();
        all_not_started &= state == UpdateState::NotStarted;
        running |= matches!(state, UpdateState::Running | UpdateState::Stopping);
        pending |= state == UpdateState::Pending;
    }
    match () {
        _ if !any || all_skipped => UpdateState::Skipped,
        _ if all_final => UpdateState::Completed,
        _ if running => UpdateState::Running,
        _ if pending => UpdateState::Pending,
        _ if all_not_started => UpdateState::NotStarted,
        _ => UpdateState::Running,
    }
}

/// Whether failures break a threshold.
pub fn over_threshold(failures: u32, allowed: u32) -> bool {
    failures > allowed
}

/// The run's state from its stages' roll-up and the requested action:
/// a failed stage fails the run; all stages final completes it (Skipped when all skipped);
/// otherwise a stop makes it Stopping while upgrades are in flight and Stopped after, a run
/// not started is NotStarted, and a holding stage makes it Pending.
pub fn run(stages: UpdateState, failed: bool, stop: bool, in_flight: bool) -> UpdateState {
    match () {
        _ if failed => UpdateState::Failed,
        _ if stages.is_final() => stages,
        _ if stop && in_flight => UpdateState::Stopping,
        _ if stop => UpdateState::Stopped,
        _ => stages,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use UpdateState::*;

    #[test]
    fn children_roll_up_as_the_reference_says() {
        let cases: &[(&[UpdateState], UpdateState)] = &[
            (&[], Skipped),
            (&[Skipped, Skipped], Skipped),
            (&[Completed, Skipped], Completed),
            (&[Completed, Failed], Completed),
            (&[Running, Pending], Running),
            (&[Pending, NotStarted], Pending),
            (&[Pending, Pending], Pending),
            (&[Pending, Completed], Pending),
            (&[NotStarted, NotStarted], NotStarted),
            (&[Completed, NotStarted], Running),
            (&[Stopping, Completed], Running),
        ];
        for (states, want) in cases {
            assert_eq!(children(states.iter().copied()), *want, "{states:?}");
        }
    }

    #[test]
    fn the_run_fails_stops_or_follows_its_stages() {
        assert_eq!(run(Running, true, false, true), Failed);
        assert_eq!(run(Completed, false, true, false), Completed);
        assert_eq!(run(Running, false, true, true), Stopping);
        assert_eq!(run(Pending, false, true, false), Stopped);
        assert_eq!(run(Pending, false, false, false), Pending);
        assert!(over_threshold(1, 0));
        assert!(!over_threshold(1, 1));
    }
}
