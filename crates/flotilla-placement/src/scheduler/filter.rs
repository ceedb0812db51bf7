//! The filter plugins that look at one cluster at a time, in KubeFleet's profile order:
//! required cluster affinity, cluster eligibility, taints and tolerations. (Same-placement
//! affinity and topology spread need the whole cycle; see `pick_n` and `topology`.)

use flotilla_api::cluster::MemberCluster;
use flotilla_api::cluster::eligibility::{self, EligibilityWindows};
use flotilla_api::cluster::member_cluster::Taint;
use flotilla_api::placement::policy::{
    ClusterSelectorTerm, PlacementPolicy, PropertySelectorOperator, PropertySelectorRequirement,
    Toleration, TolerationOperator,
};
use flotilla_apimachinery::quantity::parse_milli;
use k8s_openapi::jiff::Timestamp;

use super::cluster_labels;
use super::labels::LabelMatcher;
use super::property::{Property, Reading};
use super::reason::{PropertyMismatch, Rejection, TermMismatch};

/// The filters of a PickAll or PickN policy, compiled once per cycle.
pub(crate) struct Filters<'p> {
    required: Vec<RequiredTerm<'p>>,
    tolerations: &'p [Toleration],
    now: Timestamp,
    windows: EligibilityWindows,
}

/// One required cluster selector term: its label selector and property expressions, ANDed.
struct RequiredTerm<'p> {
    labels: Option<LabelMatcher>,
    expressions: Vec<Expression<'p>>,
}

/// One property expression, with its property resolved and its value parsed.
struct Expression<'p> {
    requirement: &'p PropertySelectorRequirement,
    property: Property<'p>,
    wanted: Wanted<'p>,
}

/// The value of a property expression.
enum Wanted<'p> {
    /// Exactly one value, a quantity: its thousandths and its text.
    Value(i128, &'p str),
    /// Not exactly one value.
    WrongCount(usize),
    /// One value that is not a quantity.
    NotAQuantity(&'p str),
}

impl<'p> Wanted<'p> {
    fn of(values: &'p [String]) -> Self {
        match values {
            [value] => match parse_milli(value) {
                Some(milli) => Wanted::Value(milli, value),
                None => Wanted::NotAQuantity(value),
            },
            _ => Wanted::WrongCount(values.len()),
        }
    }
}

impl<'p> Filters<'p> {
    /// Compiles the filters of `policy`.
    pub fn new(policy: &'p PlacementPolicy, now: Timestamp, windows: EligibilityWindows) -> Self {
        let terms = policy
            .affinity
            .as_ref()
            .and_then(|a| a.cluster_affinity.as_ref())
            .and_then(|a| {
                a.required_during_scheduling_ignored_during_execution
                    .as_ref()
            })
            .map_or(&[][..], |s| &s.cluster_selector_terms);
        let required = terms.iter().map(RequiredTerm::new).collect();
        Self {
            required,
            tolerations: policy.tolerations.as_deref().unwrap_or_default(),
            now,
            windows,
        }
    }

    /// Why `cluster` is filtered out, or `None` if it passes. Properties are read only when a
    /// term's label selector matches.
    pub fn reject<'a>(&'a self, cluster: &'a MemberCluster) -> Option<Rejection<'a>> {
        if let Some(mismatches) = self.affinity_mismatch(cluster) {
            return Some(Rejection::Affinity(mismatches));
        }
        if let Err(why) = eligibility::check(cluster, self.now, &self.windows) {
            return Some(Rejection::Ineligible(why));
        }
        let taints = cluster.spec.taints.as_deref().unwrap_or_default();
        untolerated(taints, self.tolerations).map(Rejection::Taint)
    }

    /// `None` if the cluster matches a required term (or there are none); otherwise why it
    /// fails each term.
    fn affinity_mismatch<'a>(
        &'a self,
        cluster: &'a MemberCluster,
    ) -> Option<Vec<TermMismatch<'a>>> {
        let mut mismatches = Vec::new();
        for term in &self.required {
            match term.mismatch(cluster) {
                None => return None,
                Some(m) => mismatches.push(m),
            }
        }
        (!mismatches.is_empty()).then_some(mismatches)
    }
}

impl<'p> RequiredTerm<'p> {
    fn new(term: &'p ClusterSelectorTerm) -> Self {
        let expressions = term
            .property_selector
            .as_ref()
            .map_or(&[][..], |s| &s.match_expressions)
            .iter()
            .map(|requirement| Expression {
                requirement,
                property: Property::parse(&requirement.name),
                wanted: Wanted::of(&requirement.values),
            })
            .collect();
        Self {
            labels: term.label_selector.as_ref().map(LabelMatcher::new),
            expressions,
        }
    }

    /// `None` if the cluster matches the term; otherwise the first part it fails.
    fn mismatch<'a>(&'a self, cluster: &'a MemberCluster) -> Option<TermMismatch<'a>> {
        if let Some(m) = self
            .labels
            .as_ref()
            .and_then(|l| l.mismatch(cluster_labels(cluster)))
        {
            return Some(TermMismatch::Labels(m));
        }
        self.expressions
            .iter()
            .find_map(|e| e.mismatch(e.property.read(cluster)))
            .map(TermMismatch::Property)
    }
}

impl<'p> Expression<'p> {
    /// `None` if `reading` satisfies the expression; otherwise why not. A cluster that does not
    /// report the property never satisfies it.
    fn mismatch<'a>(&'a self, reading: Reading<'a>) -> Option<PropertyMismatch<'a>> {
        let name = self.requirement.name.as_str();
        let (actual, text) = match reading {
            Reading::Value { milli, text } => (milli, text),
            Reading::Missing => return Some(PropertyMismatch::Missing { name }),
            Reading::NotAQuantity(actual) => {
                return Some(PropertyMismatch::NotAQuantity { name, actual });
            }
            Reading::UnknownResource => return Some(PropertyMismatch::UnknownResource { name }),
        };
        let (wanted_milli, wanted) = match self.wanted {
            Wanted::Value(milli, text) => (milli, text),
            Wanted::WrongCount(count) => {
                return Some(PropertyMismatch::WrongValueCount { name, count });
            }
            Wanted::NotAQuantity(wanted) => {
                return Some(PropertyMismatch::WantedNotAQuantity { name, wanted });
            }
        };
        let operator = self.requirement.operator;
        let holds = match operator {
            PropertySelectorOperator::Gt => actual > wanted_milli,
            PropertySelectorOperator::Ge => actual >= wanted_milli,
            PropertySelectorOperator::Eq => actual == wanted_milli,
            PropertySelectorOperator::Ne => actual != wanted_milli,
            PropertySelectorOperator::Lt => actual < wanted_milli,
            PropertySelectorOperator::Le => actual <= wanted_milli,
        };
        (!holds).then_some(PropertyMismatch::Unmet {
            name,
            actual: text,
            operator,
            wanted,
        })
    }
}

/// The first of `taints` that no toleration tolerates.
fn untolerated<'a>(taints: &'a [Taint], tolerations: &[Toleration]) -> Option<&'a Taint> {
    taints
        .iter()
        .find(|taint| !tolerations.iter().any(|t| tolerates(t, taint)))
}

/// KubeFleet's `canTolerationTolerateTaint`: `Exists` with an empty or equal key, or `Equal`
/// with equal key and value; the effect must be equal or empty.
fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    let key = toleration.key.as_deref().unwrap_or_default();
    let keys_match = match toleration.operator.unwrap_or_default() {
        TolerationOperator::Exists => key.is_empty() || key == taint.key,
        TolerationOperator::Equal => {
            key == taint.key
                && toleration.value.as_deref().unwrap_or_default()
                    == taint.value.as_deref().unwrap_or_default()
        }
    };
    keys_match && toleration.effect.is_none_or(|e| e == taint.effect)
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_api::cluster::member_cluster::TaintEffect;

    fn taint(key: &str, value: Option<&str>) -> Taint {
        Taint {
            key: key.into(),
            value: value.map(Into::into),
            effect: TaintEffect::NoSchedule,
        }
    }

    fn toleration(
        key: Option<&str>,
        operator: Option<TolerationOperator>,
        value: Option<&str>,
        effect: Option<TaintEffect>,
    ) -> Toleration {
        Toleration {
            key: key.map(Into::into),
            operator,
            value: value.map(Into::into),
            effect,
        }
    }

    #[test]
    fn tolerations_follow_kubefleet() {
        use TolerationOperator::{Equal, Exists};
        let gpu = taint("gpu", Some("true"));
        let bare = taint("maintenance", None);
        let no_schedule = Some(TaintEffect::NoSchedule);
        let cases = [
            (
                "exists, any key",
                toleration(None, Some(Exists), None, None),
                &gpu,
                true,
            ),
            (
                "exists, same key",
                toleration(Some("gpu"), Some(Exists), None, no_schedule),
                &gpu,
                true,
            ),
            (
                "exists, other key",
                toleration(Some("ssd"), Some(Exists), None, None),
                &gpu,
                false,
            ),
            (
                "equal, same value",
                toleration(Some("gpu"), Some(Equal), Some("true"), None),
                &gpu,
                true,
            ),
            (
                "equal by default",
                toleration(Some("gpu"), None, Some("true"), no_schedule),
                &gpu,
                true,
            ),
            (
                "equal, other value",
                toleration(Some("gpu"), Some(Equal), Some("false"), None),
                &gpu,
                false,
            ),
            (
                "equal, no value on either",
                toleration(Some("maintenance"), None, None, None),
                &bare,
                true,
            ),
            (
                "equal, empty key",
                toleration(None, Some(Equal), Some("true"), None),
                &gpu,
                false,
            ),
        ];
        for (name, t, taint, want) in cases {
            assert_eq!(tolerates(&t, taint), want, "{name}");
        }
        let taints = [gpu.clone(), bare.clone()];
        assert_eq!(untolerated(&taints, &[]), Some(&gpu));
        let only_gpu = [toleration(Some("gpu"), Some(Exists), None, None)];
        assert_eq!(untolerated(&taints, &only_gpu), Some(&bare));
        let all = [toleration(None, Some(Exists), None, None)];
        assert_eq!(untolerated(&taints, &all), None);
    }
}
