//! PickAll: every cluster that passes the filters is picked. There is no scoring; picked
//! clusters record zero scores, as KubeFleet's do.

use super::binding::Bindings;
use super::decision::{Decision, ScheduledCondition};
use super::filter::Filters;
use super::outcome::{Outcome, Verdict, bind_picked, picked, rejected};
use super::score::Score;
use super::sweep;
use super::{SchedulingInput, cluster_name};

/// One PickAll cycle.
pub(crate) fn schedule(input: &SchedulingInput<'_>, bindings: &Bindings<'_>) -> Decision {
    let filters = Filters::new(input.policy, input.now, input.eligibility);
    let active = bindings.active_by_cluster();
    let verdicts = sweep::in_chunks(input.clusters, |_, chunk| {
        chunk
            .iter()
            .map(|cluster| {
                let name = cluster_name(cluster);
                if let Some(binding) = active.get(name) {
                    Verdict::Kept(binding)
                } else if let Some(rejection) = filters.reject(cluster) {
                    Verdict::Rejected(rejected(name, rejection.text()))
                } else {
                    Verdict::Passed(name)
                }
            })
            .collect::<Vec<_>>()
    });
    let mut outcome = Outcome::new(bindings);
    let mut passed = Vec::new();
    for verdict in verdicts.into_iter().flatten() {
        match verdict {
            Verdict::Kept(binding) => outcome.keep(binding),
            Verdict::Rejected(decision) => outcome.reject(decision),
            Verdict::Passed(name) => passed.push(picked(name, Some(Score::default().recorded()))),
        }
    }
    passed.sort_by(|a, b| a.cluster_name.cmp(&b.cluster_name));
    bind_picked(&mut outcome, passed, bindings, input.policy_snapshot);
    let found = outcome.placed() + bindings.active();
    outcome.finish(ScheduledCondition::new(true, found), false)
}
