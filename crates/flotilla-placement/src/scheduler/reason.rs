//! The words of every verdict: why a cluster was picked, kept or rejected. Picks and
//! PickFixed verdicts use KubeFleet's messages; rejections name the exact rule that failed.

use std::fmt::{self, Write};

use flotilla_api::cluster::eligibility::Ineligible;
use flotilla_api::cluster::member_cluster::{Taint, TaintEffect};
use flotilla_api::placement::policy::PropertySelectorOperator;

use super::ClusterScore;
use super::labels::LabelMismatch;
use super::topology::Violation;

/// Why a filter rejected a cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Rejection<'a> {
    /// The cluster matches none of the required cluster selector terms (one mismatch per term).
    Affinity(Vec<TermMismatch<'a>>),
    /// The cluster may not receive new placements.
    Ineligible(Ineligible),
    /// A taint of the cluster is not tolerated.
    Taint(&'a Taint),
    /// Placing on the cluster would break a `DoNotSchedule` topology spread constraint.
    Spread(Violation<'a>),
}

/// Why a cluster fails one required cluster selector term.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TermMismatch<'a> {
    /// Its label selector.
    Labels(LabelMismatch<'a>),
    /// One of its property expressions.
    Property(PropertyMismatch<'a>),
}

/// Why a cluster fails a property expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PropertyMismatch<'a> {
    /// The value does not compare as required.
    Unmet {
        /// The property.
        name: &'a str,
        /// The cluster's value.
        actual: &'a str,
        /// The comparison.
        operator: PropertySelectorOperator,
        /// The expression's value.
        wanted: &'a str,
    },
    /// The cluster does not report the property.
    Missing {
        /// The property.
        name: &'a str,
    },
    /// The cluster reports a value that is not a quantity.
    NotAQuantity {
        /// The property.
        name: &'a str,
        /// The cluster's value.
        actual: &'a str,
    },
    /// A `resources.kubernetes-fleet.io/` name without a known capacity and resource.
    UnknownResource {
        /// The property.
        name: &'a str,
    },
    /// The expression does not have exactly one value.
    WrongValueCount {
        /// The property.
        name: &'a str,
        /// How many values it has.
        count: usize,
    },
    /// The expression's value is not a quantity.
    WantedNotAQuantity {
        /// The property.
        name: &'a str,
        /// The expression's value.
        wanted: &'a str,
    },
}

impl Rejection<'_> {
    /// The reason in words. The buffer starts at a typical reason's size, so writing it does not
    /// reallocate (this runs once per rejected cluster).
    pub fn text(&self) -> String {
        let mut text = String::with_capacity(192);
        // Writing to a String cannot fail.
        let _ = write!(text, "{self}");
        text
    }
}

impl fmt::Display for Rejection<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::Affinity(mismatches) => {
                f.write_str("does not match any required cluster selector term: ")?;
                for (i, m) in mismatches.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "clusterSelectorTerms[{i}]: {m}")?;
                }
                Ok(())
            }
            Rejection::Ineligible(why) => write!(f, "not eligible: {why}"),
            Rejection::Taint(taint) => {
                f.write_str("taint ")?;
                write_taint(f, taint)?;
                f.write_str(" is not tolerated")
            }
            Rejection::Spread(v) => write!(
                f,
                "placing here would violate the topology spread constraint on {:?} (maxSkew {}): \
                 domain {}={} already has {} of the placement's clusters and the least loaded \
                 domain has {}, so the skew would become {}",
                v.key, v.max_skew, v.key, v.domain, v.count, v.smallest, v.skew_after
            ),
        }
    }
}

fn write_taint(f: &mut fmt::Formatter<'_>, taint: &Taint) -> fmt::Result {
    let effect = match taint.effect {
        TaintEffect::NoSchedule => "NoSchedule",
    };
    match &taint.value {
        Some(value) if !value.is_empty() => write!(f, "{}={value}:{effect}", taint.key),
        _ => write!(f, "{}:{effect}", taint.key),
    }
}

impl fmt::Display for TermMismatch<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TermMismatch::Labels(m) => m.fmt(f),
            TermMismatch::Property(m) => m.fmt(f),
        }
    }
}

impl fmt::Display for PropertyMismatch<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PropertyMismatch::Unmet {
                name,
                actual,
                operator,
                wanted,
            } => {
                let symbol = match operator {
                    PropertySelectorOperator::Gt => ">",
                    PropertySelectorOperator::Ge => ">=",
                    PropertySelectorOperator::Eq => "=",
                    PropertySelectorOperator::Ne => "!=",
                    PropertySelectorOperator::Lt => "<",
                    PropertySelectorOperator::Le => "<=",
                };
                write!(f, "property {name} is {actual}, not {symbol} {wanted}")
            }
            PropertyMismatch::Missing { name } => {
                write!(f, "property {name} is not reported by the cluster")
            }
            PropertyMismatch::NotAQuantity { name, actual } => {
                write!(f, "property {name} is {actual:?}, which is not a quantity")
            }
            PropertyMismatch::UnknownResource { name } => write!(
                f,
                "property {name} names no resource figure (expected \
                 resources.kubernetes-fleet.io/<total|allocatable|available>-<resource>)"
            ),
            PropertyMismatch::WrongValueCount { name, count } => write!(
                f,
                "the property selector on {name} needs exactly one value, not {count}"
            ),
            PropertyMismatch::WantedNotAQuantity { name, wanted } => write!(
                f,
                "the property selector value {wanted:?} for {name} is not a quantity"
            ),
        }
    }
}

/// A cluster picked this cycle or kept from an earlier one (KubeFleet's messages; PickFixed
/// picks carry no score).
pub(crate) fn picked(cluster: &str, score: Option<ClusterScore>) -> String {
    match score {
        Some(s) => format!(
            "Successfully scheduled resources for placement in \"{cluster}\" (affinity score: {}, \
             topology spread score: {}): picked by scheduling policy",
            s.affinity_score.unwrap_or_default(),
            s.priority_score.unwrap_or_default()
        ),
        None => format!(
            "Successfully scheduled resources for placement in \"{cluster}\": picked by scheduling \
             policy"
        ),
    }
}

/// A cluster that passed the filters but ranked below the clusters picked.
pub(crate) fn not_picked(cluster: &str, score: ClusterScore) -> String {
    format!(
        "Cluster \"{cluster}\" does not score high enough (affinity score: {}, topology spread \
         score: {})",
        score.affinity_score.unwrap_or_default(),
        score.priority_score.unwrap_or_default()
    )
}

/// A cluster the PickN placement did not evaluate because it already has its clusters.
pub(crate) fn not_needed(wanted: usize) -> String {
    format!(
        "not evaluated: the placement already has the {wanted} cluster(s) it asks for; clusters \
         are picked again only when one is lost or the policy changes"
    )
}

/// A binding trimmed because the PickN placement asks for fewer clusters.
pub(crate) fn scaled_down(wanted: usize, had: usize) -> String {
    format!(
        "deselected: the placement asks for {wanted} cluster(s) and had {had}; Scheduled \
         bindings go before Bound ones, lowest score and smallest name first"
    )
}

/// A binding from an older policy snapshot removed while the PickN placement scales down.
pub(crate) fn obsolete_scaled_down(wanted: usize) -> String {
    format!(
        "deselected: its binding follows an older scheduling policy and the placement already \
         has the {wanted} cluster(s) it asks for"
    )
}

/// An obsolete binding whose cluster the current policy does not pick.
pub(crate) fn no_longer_picked(snapshot: &str) -> String {
    format!("the cluster is not picked under scheduling policy snapshot \"{snapshot}\"")
}

/// A Scheduled or Bound binding on a cluster that is gone or leaving.
pub(crate) fn dangling(cluster: &str) -> String {
    format!("cluster \"{cluster}\" has left the fleet or is leaving it")
}

/// A PickFixed cluster that exists but may not receive placements.
pub(crate) fn fixed_ineligible(cluster: &str, why: &Ineligible, kept: bool) -> String {
    let base = format!("Cluster \"{cluster}\" is not eligible for resource placement yet: {why}");
    if kept {
        format!("{base}; the binding it already has is kept")
    } else {
        base
    }
}

/// A PickFixed name with no member cluster.
pub(crate) fn fixed_not_found(cluster: &str) -> String {
    format!("Specified cluster \"{cluster}\" is not found")
}

/// A cluster a PickFixed placement does not name.
pub(crate) fn fixed_not_named(cluster: &str) -> String {
    format!("cluster \"{cluster}\" is not in the placement's clusterNames")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn property_mismatches_read_naturally() {
        let unmet = PropertyMismatch::Unmet {
            name: "kubernetes.azure.com/node-count",
            actual: "3",
            operator: PropertySelectorOperator::Ge,
            wanted: "5",
        };
        assert_eq!(
            unmet.to_string(),
            "property kubernetes.azure.com/node-count is 3, not >= 5"
        );
        let rejection = Rejection::Affinity(vec![
            TermMismatch::Property(unmet),
            TermMismatch::Property(PropertyMismatch::Missing {
                name: "example.com/x",
            }),
        ]);
        assert_eq!(
            rejection.to_string(),
            "does not match any required cluster selector term: clusterSelectorTerms[0]: \
             property kubernetes.azure.com/node-count is 3, not >= 5; clusterSelectorTerms[1]: \
             property example.com/x is not reported by the cluster"
        );
    }

    #[test]
    fn taints_print_like_kubectl() {
        let taint = Taint {
            key: "dedicated".into(),
            value: Some("gpu".into()),
            effect: TaintEffect::NoSchedule,
        };
        assert_eq!(
            Rejection::Taint(&taint).to_string(),
            "taint dedicated=gpu:NoSchedule is not tolerated"
        );
        let bare = Taint {
            value: None,
            ..taint
        };
        assert_eq!(
            Rejection::Taint(&bare).to_string(),
            "taint dedicated:NoSchedule is not tolerated"
        );
    }
}
