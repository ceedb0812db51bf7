//! One condition type summed over a binding's Works, and how a failing Work is described.

use flotilla_api::conditions::find;

use super::binding::WorkView;
use super::manifests::{PLACEMENT_LIST_LIMIT, describe_manifest};
use super::{ConditionType, reason};

/// The result of summing one condition type over the Works.
pub(super) enum Summary<'w> {
    /// Some Work has not reported for its generation (the first such).
    Incomplete(&'w WorkView<'w>),
    /// Some Work reports False (the first such).
    Failed(&'w WorkView<'w>),
    /// Every Work reports True; the first whose availability cannot be tracked, if any.
    Done(Option<&'w WorkView<'w>>),
}

/// Sums condition `type_` over `works`: incomplete before failed before done.
pub(super) fn summarize<'w>(works: &[&'w WorkView<'w>], type_: ConditionType) -> Summary<'w> {
    let report = |w: &WorkView<'w>| {
        find(&w.status.conditions, type_.as_str())
            .filter(|c| c.observed_generation == Some(w.generation))
    };
    let has = |w: &WorkView<'w>, status: &str| report(w).is_some_and(|c| c.status == status);
    if let Some(w) = works.iter().find(|w| !has(w, "True") && !has(w, "False")) {
        return Summary::Incomplete(w);
    }
    if let Some(w) = works.iter().find(|w| has(w, "False")) {
        return Summary::Failed(w);
    }
    let untracked =
        |w: &WorkView<'w>| report(w).is_some_and(|c| c.reason == reason::WORK_NOT_TRACKABLE);
    Summary::Done(works.iter().find(|w| untracked(w)).copied())
}

/// Up to [`PLACEMENT_LIST_LIMIT`] entries of `extract` over `works`, in order.
pub(super) fn collect<'w, T>(
    works: &[&'w WorkView<'w>],
    extract: impl Fn(&WorkView<'w>) -> Vec<T>,
) -> Vec<T> {
    works
        .iter()
        .flat_map(|w| extract(w))
        .take(PLACEMENT_LIST_LIMIT)
        .collect()
}

/// Why Work `w` reports `type_` False: its first manifest with that condition False (and
/// how many more), else the Work's own condition message.
pub(super) fn detail(w: &WorkView<'_>, type_: ConditionType) -> String {
    let mut failing = w.status.manifest_conditions.iter().filter_map(|m| {
        find(&m.conditions, type_.as_str())
            .filter(|c| c.status == "False")
            .map(|c| (m, c))
    });
    let Some((manifest, condition)) = failing.next() else {
        return find(&w.status.conditions, type_.as_str())
            .map_or_else(String::new, |c| c.message.clone());
    };
    let more = match failing.count() {
        0 => String::new(),
        n => format!(" (and {n} more)"),
    };
    format!(
        "{}: {}: {}{more}",
        describe_manifest(&manifest.identifier),
        condition.reason,
        condition.message
    )
}
