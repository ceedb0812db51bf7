//! Karpenter's requirements algebra (`pkg/scheduling/requirement{,s}.go`): for each label key
//! the set of values a node may carry, from node-selector operators, intersected as pods join a
//! node and compared with what pools and instance types offer.
//!
//! A [`Requirement`] is a set of values, possibly complemented ("anything but these"), possibly
//! bounded by integer limits (`Gt`, `Lt`, `Gte`, `Lte`). As in Karpenter the representation is
//! lossy about presence: `Exists` intersected with `NotIn [a]` reads back as `NotIn [a]`,
//! which also admits nodes without the label.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::labels;

/// A node-selector operator, with Karpenter's inclusive bounds `Gte` and `Lte`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operator {
    /// The label has one of the values.
    In,
    /// The label is absent or has none of the values.
    NotIn,
    /// The label is present.
    Exists,
    /// The label is absent.
    DoesNotExist,
    /// The label is an integer greater than the value.
    Gt,
    /// The label is an integer less than the value.
    Lt,
    /// The label is an integer at least the value.
    Gte,
    /// The label is an integer at most the value.
    Lte,
}

impl std::str::FromStr for Operator {
    type Err = RequirementError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(match text {
            "In" => Operator::In,
            "NotIn" => Operator::NotIn,
            "Exists" => Operator::Exists,
            "DoesNotExist" => Operator::DoesNotExist,
            "Gt" => Operator::Gt,
            "Lt" => Operator::Lt,
            "Gte" => Operator::Gte,
            "Lte" => Operator::Lte,
            _ => return Err(RequirementError::UnknownOperator(text.to_string())),
        })
    }
}

/// Why a node-selector requirement cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RequirementError {
    /// The operator is not one of [`Operator`]'s.
    #[error("unknown operator {0:?}")]
    UnknownOperator(String),
    /// `In` and `NotIn` need at least one value.
    #[error("operator {0:?} needs at least one value")]
    NoValues(Operator),
    /// `Exists` and `DoesNotExist` take no values.
    #[error("operator {0:?} takes no values")]
    UnexpectedValues(Operator),
    /// `Gt`, `Lt`, `Gte` and `Lte` take exactly one integer.
    #[error("operator {0:?} needs exactly one integer value")]
    NotOneInteger(Operator),
}

/// The values one label key may take.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Requirement {
    /// Whether `values` are the excluded values rather than the allowed ones.
    complement: bool,
    /// The allowed values, or with `complement` the excluded ones.
    values: BTreeSet<String>,
    /// Exclusive lower integer bound, for complemented sets.
    greater_than: Option<i64>,
    /// Exclusive upper integer bound, for complemented sets.
    less_than: Option<i64>,
    /// The least number of distinct values the chosen instance types must span.
    min_values: Option<u32>,
}

impl Requirement {
    /// The requirement of a node-selector expression: `operator` over `values`, checked as the
    /// API server and Karpenter's webhook check them.
    pub fn new<S: AsRef<str>>(operator: Operator, values: &[S]) -> Result<Self, RequirementError> {
        let set = || values.iter().map(|v| v.as_ref().to_string()).collect();
        let bound = || match values {
            [value] => value
                .as_ref()
                .parse::<i64>()
                .map_err(|_| RequirementError::NotOneInteger(operator)),
            _ => Err(RequirementError::NotOneInteger(operator)),
        };
        let requirement = match operator {
            Operator::In | Operator::NotIn if values.is_empty() => {
                return Err(RequirementError::NoValues(operator));
            }
            Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
                return Err(RequirementError::UnexpectedValues(operator));
            }
            Operator::In => Self::set(false, set()),
            Operator::NotIn => Self::set(true, set()),
            Operator::Exists => Self::exists(),
            Operator::DoesNotExist => Self::does_not_exist(),
            Operator::Gt => Self::bounded(Some(bound()?), None),
            Operator::Lt => Self::bounded(None, Some(bound()?)),
            Operator::Gte => Self::bounded(Some(bound()?.saturating_sub(1)), None),
            Operator::Lte => Self::bounded(None, Some(bound()?.saturating_add(1))),
        };
        Ok(requirement)
    }

    /// Exactly one value: what a node's label says.
    pub fn single(value: &str) -> Self {
        Self::set(false, BTreeSet::from([value.to_string()]))
    }

    /// Any value, as long as the label is present.
    pub fn exists() -> Self {
        Self::set(true, BTreeSet::new())
    }

    /// No value: the label must be absent.
    pub fn does_not_exist() -> Self {
        Self::set(false, BTreeSet::new())
    }

    fn set(complement: bool, values: BTreeSet<String>) -> Self {
        Requirement {
            complement,
            values,
            greater_than: None,
            less_than: None,
            min_values: None,
        }
    }

    fn bounded(greater_than: Option<i64>, less_than: Option<i64>) -> Self {
        Requirement {
            greater_than,
            less_than,
            ..Self::exists()
        }
    }

    /// The same requirement asking the chosen instance types to span at least `min_values`
    /// distinct values of the key (a pool's `minValues`).
    pub fn with_min_values(mut self, min_values: u32) -> Self {
        self.min_values = Some(min_values);
        self
    }

    /// The pool's `minValues` for this key, if any.
    pub fn min_values(&self) -> Option<u32> {
        self.min_values
    }

    /// Whether a node whose label has `value` satisfies this requirement.
    pub fn has(&self, value: &str) -> bool {
        self.within_bounds(value) && self.values.contains(value) != self.complement
    }

    fn within_bounds(&self, value: &str) -> bool {
        within_bounds(value, self.greater_than, self.less_than)
    }

    /// The number of allowed values: saturating near `usize::MAX` for complemented sets, as
    /// Karpenter's `Len` is near `MaxInt64`.
    pub fn len(&self) -> usize {
        if self.complement {
            usize::MAX - self.values.len()
        } else {
            self.values.len()
        }
    }

    /// Whether no value is allowed (the label must be absent).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The allowed values of a finite set (`In`); `None` for a complemented set.
    pub fn values(&self) -> Option<&BTreeSet<String>> {
        (!self.complement).then_some(&self.values)
    }

    /// The operator this requirement reads back as (Karpenter's `Operator()`): bounded sets read
    /// as `Exists`.
    pub fn operator(&self) -> Operator {
        match (self.complement, self.values.is_empty()) {
            (true, false) => Operator::NotIn,
            (true, true) => Operator::Exists,
            (false, false) => Operator::In,
            (false, true) => Operator::DoesNotExist,
        }
    }

    /// This requirement as node-selector expressions, ANDed: its integer bounds as `Gt`/`Lt`,
    /// then its set (an unbounded `Exists` is dropped when bounds say it already).
    pub fn expressions(&self) -> Vec<(Operator, Vec<String>)> {
        let mut out = Vec::new();
        if let Some(bound) = self.greater_than {
            out.push((Operator::Gt, vec![bound.to_string()]));
        }
        if let Some(bound) = self.less_than {
            out.push((Operator::Lt, vec![bound.to_string()]));
        }
        match self.operator() {
            Operator::Exists if !out.is_empty() => {}
            operator => out.push((operator, self.values.iter().cloned().collect())),
        }
        out
    }

    /// Whether a node without the label satisfies this requirement (`NotIn`, `DoesNotExist`).
    pub fn allows_absence(&self) -> bool {
        matches!(self.operator(), Operator::NotIn | Operator::DoesNotExist)
    }

    /// The values allowed by both (Karpenter's `Intersection`); bounds combine, and a pair of
    /// bounds with no integer between them allows nothing.
    pub fn intersection(&self, other: &Requirement) -> Requirement {
        let greater_than = max_option(self.greater_than, other.greater_than);
        let less_than = min_option(self.less_than, other.less_than);
        let min_values = max_option(self.min_values, other.min_values);
        if let (Some(gt), Some(lt)) = (greater_than, less_than)
            && gt.saturating_add(1) >= lt
        {
            return Requirement {
                min_values,
                ..Self::does_not_exist()
            };
        }
        let complement = self.complement && other.complement;
        let values: BTreeSet<String> = match (self.complement, other.complement) {
            (true, true) => self.values.union(&other.values).cloned().collect(),
            (true, false) => other.values.difference(&self.values).cloned().collect(),
            (false, true) => self.values.difference(&other.values).cloned().collect(),
            (false, false) => self.values.intersection(&other.values).cloned().collect(),
        };
        let values = values
            .into_iter()
            .filter(|v| within_bounds(v, greater_than, less_than))
            .collect();
        let (greater_than, less_than) = if complement {
            (greater_than, less_than)
        } else {
            (None, None)
        };
        Requirement {
            complement,
            values,
            greater_than,
            less_than,
            min_values,
        }
    }

    /// Whether the two have a value in common, or both merely exclude values (Karpenter's
    /// per-key `Intersects`: two "not these" sides never conflict).
    fn intersects(&self, incoming: &Requirement) -> bool {
        !self.intersection(incoming).is_empty()
            || (self.allows_absence() && incoming.allows_absence())
    }
}

impl fmt::Display for Requirement {
    /// `In [a, b]`, `NotIn [c]`, `Exists`, `DoesNotExist`, with bounds as `>3` and `<9`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.operator())?;
        if !self.values.is_empty() {
            let values: Vec<&str> = self.values.iter().map(String::as_str).collect();
            write!(f, " [{}]", values.join(", "))?;
        }
        if let Some(gt) = self.greater_than {
            write!(f, " >{gt}")?;
        }
        if let Some(lt) = self.less_than {
            write!(f, " <{lt}")?;
        }
        Ok(())
    }
}

fn within_bounds(value: &str, greater_than: Option<i64>, less_than: Option<i64>) -> bool {
    if greater_than.is_none() && less_than.is_none() {
        return true;
    }
    let Ok(number) = value.parse::<i64>() else {
        return false;
    };
    greater_than.is_none_or(|gt| number > gt) && less_than.is_none_or(|lt| number < lt)
}

fn max_option<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

fn min_option<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// How [`Requirements::compatible`] treats a key the other side requires and this side does
/// not define.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Undefined {
    /// Only if the other side allows absence (`NotIn`, `DoesNotExist`): an existing node
    /// without the label.
    Deny,
    /// Also if the key is a [well-known label](labels::WELL_KNOWN): a pool or claim, whose
    /// instance types define those labels themselves.
    AllowWellKnown,
}

/// Why two sets of requirements are incompatible, naming the first key that conflicts.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Incompatibility {
    /// The other side requires a custom label this side does not define.
    #[error("label {key:?} does not have known values")]
    Undefined {
        /// The label key.
        key: String,
    },
    /// Both sides define the key and no value satisfies both.
    #[error("key {key:?}: {incoming} not in {existing}")]
    Disjoint {
        /// The label key.
        key: String,
        /// What this side allows.
        existing: Box<Requirement>,
        /// What the other side requires.
        incoming: Box<Requirement>,
    },
}

/// For each label key, the values a node may carry: the conjunction of per-key requirements
/// (Karpenter's `scheduling.Requirements`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Requirements {
    by_key: BTreeMap<String, Requirement>,
}

impl Requirements {
    /// No requirement: every node matches.
    pub fn new() -> Self {
        Self::default()
    }

    /// The requirements of a list of node-selector expressions (one affinity term, or a pool's
    /// `requirements`), ANDed.
    pub fn from_node_selector(
        expressions: &[k8s_openapi::api::core::v1::NodeSelectorRequirement],
    ) -> Result<Self, RequirementError> {
        let mut requirements = Self::new();
        for expression in expressions {
            let operator = expression.operator.parse()?;
            let values = expression.values.as_deref().unwrap_or_default();
            requirements.add(&expression.key, Requirement::new(operator, values)?);
        }
        Ok(requirements)
    }

    /// Each label as a single allowed value: what a node's labels or a `nodeSelector` say.
    pub fn from_labels<'a>(labels: impl IntoIterator<Item = (&'a String, &'a String)>) -> Self {
        let mut requirements = Self::new();
        for (key, value) in labels {
            requirements.add(key, Requirement::single(value));
        }
        requirements
    }

    /// Constrains `key` further: intersects with what is already required of it.
    pub fn add(&mut self, key: &str, requirement: Requirement) {
        match self.by_key.get_mut(key) {
            Some(existing) => *existing = existing.intersection(&requirement),
            None => {
                self.by_key.insert(key.to_string(), requirement);
            }
        }
    }

    /// What is required of `key`, if anything.
    pub fn get(&self, key: &str) -> Option<&Requirement> {
        self.by_key.get(key)
    }

    /// Whether `key` is constrained.
    pub fn has(&self, key: &str) -> bool {
        self.by_key.contains_key(key)
    }

    /// Whether nothing is required.
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    /// The constrained keys and their requirements, by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Requirement)> {
        self.by_key.iter().map(|(k, r)| (k.as_str(), r))
    }

    /// Both sets of requirements at once: each shared key intersected.
    pub fn intersection(&self, other: &Requirements) -> Requirements {
        let mut result = self.clone();
        for (key, requirement) in other.iter() {
            result.add(key, requirement.clone());
        }
        result
    }

    /// Whether `incoming` (a pod's requirements) can be satisfied together with `self` (a
    /// node's, pool's or claim's), with Karpenter's `Compatible`: every key `incoming`
    /// constrains must be defined here unless it allows absence or `undefined` lets it
    /// through, and every shared key must [intersect](Self::intersects).
    pub fn compatible(
        &self,
        incoming: &Requirements,
        undefined: Undefined,
    ) -> Result<(), Incompatibility> {
        for (key, requirement) in incoming.iter() {
            let allowed = self.has(key)
                || requirement.allows_absence()
                || (undefined == Undefined::AllowWellKnown && labels::is_well_known(key));
            if !allowed {
                return Err(Incompatibility::Undefined {
                    key: key.to_string(),
                });
            }
        }
        self.intersects(incoming)
    }

    /// Whether every key both sides constrain has a value both allow, or both sides merely
    /// exclude values (Karpenter's `Intersects`).
    pub fn intersects(&self, incoming: &Requirements) -> Result<(), Incompatibility> {
        for (key, requirement) in incoming.iter() {
            if let Some(existing) = self.get(key)
                && !existing.intersects(requirement)
            {
                return Err(Incompatibility::Disjoint {
                    key: key.to_string(),
                    existing: Box::new(existing.clone()),
                    incoming: Box::new(requirement.clone()),
                });
            }
        }
        Ok(())
    }

    /// Whether a node with `labels` satisfies every requirement (the node-affinity semantics:
    /// a present label's value must be allowed; an absent label must be allowed to be absent).
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.iter().all(|(key, requirement)| match labels.get(key) {
            Some(value) => requirement.has(value),
            None => requirement.allows_absence(),
        })
    }
}

impl fmt::Display for Requirements {
    /// `key In [a]; other Exists`, by key; `{}` when nothing is required.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("{}");
        }
        for (i, (key, requirement)) in self.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{key} {requirement}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn req(operator: Operator, values: &[&str]) -> Requirement {
        Requirement::new(operator, values).unwrap()
    }

    fn reqs(items: &[(&str, Operator, &[&str])]) -> Requirements {
        let mut r = Requirements::new();
        for (key, op, values) in items {
            r.add(key, req(*op, values));
        }
        r
    }

    fn labels(items: &[(&str, &str)]) -> BTreeMap<String, String> {
        items
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn operators_validate_their_values() {
        use Operator::*;
        assert_eq!(
            Requirement::new::<&str>(In, &[]),
            Err(RequirementError::NoValues(In))
        );
        assert_eq!(
            Requirement::new(Exists, &["a"]),
            Err(RequirementError::UnexpectedValues(Exists))
        );
        assert_eq!(
            Requirement::new(Gt, &["a"]),
            Err(RequirementError::NotOneInteger(Gt))
        );
        assert_eq!(
            Requirement::new(Lt, &["1", "2"]),
            Err(RequirementError::NotOneInteger(Lt))
        );
        assert_eq!(
            "Foo".parse::<Operator>(),
            Err(RequirementError::UnknownOperator("Foo".into()))
        );
    }

    #[test]
    fn has_follows_each_operator() {
        use Operator::*;
        let cases: &[(Operator, &[&str], &str, bool)] = &[
            (In, &["a", "b"], "a", true),
            (In, &["a", "b"], "c", false),
            (NotIn, &["a"], "a", false),
            (NotIn, &["a"], "b", true),
            (Exists, &[], "x", true),
            (DoesNotExist, &[], "x", false),
            (Gt, &["4"], "5", true),
            (Gt, &["4"], "4", false),
            (Gt, &["4"], "five", false),
            (Gte, &["4"], "4", true),
            (Lt, &["4"], "3", true),
            (Lt, &["4"], "4", false),
            (Lte, &["4"], "4", true),
            (Lte, &["4"], "5", false),
        ];
        for (op, values, value, expected) in cases {
            assert_eq!(
                req(*op, values).has(value),
                *expected,
                "{op:?} {values:?} has {value}"
            );
        }
    }

    #[test]
    fn intersection_table() {
        use Operator::*;
        type Side<'a> = (Operator, &'a [&'a str]);
        let cases: &[(Side, Side, &str)] = &[
            ((In, &["a", "b"]), (In, &["b", "c"]), "In [b]"),
            ((In, &["a", "b"]), (NotIn, &["b"]), "In [a]"),
            ((NotIn, &["a"]), (NotIn, &["b"]), "NotIn [a, b]"),
            ((Exists, &[]), (In, &["a"]), "In [a]"),
            ((Exists, &[]), (DoesNotExist, &[]), "DoesNotExist"),
            ((Gt, &["2"]), (In, &["1", "3", "x"]), "In [3]"),
            ((Gt, &["2"]), (Lt, &["9"]), "Exists >2 <9"),
            ((Gt, &["2"]), (Lt, &["3"]), "DoesNotExist"),
            ((Gte, &["3"]), (Lte, &["3"]), "Exists >2 <4"),
        ];
        for ((op_a, va), (op_b, vb), expected) in cases {
            let got = req(*op_a, va).intersection(&req(*op_b, vb));
            assert_eq!(
                got.to_string(),
                *expected,
                "{op_a:?} {va:?} ∩ {op_b:?} {vb:?}"
            );
        }
    }

    #[test]
    fn compatible_denies_undefined_custom_labels_and_allows_well_known_ones() {
        use Operator::*;
        let pool = reqs(&[(labels::OS, In, &["linux"])]);
        let wants_team = reqs(&[("team", In, &["a"])]);
        assert_eq!(
            pool.compatible(&wants_team, Undefined::AllowWellKnown),
            Err(Incompatibility::Undefined { key: "team".into() })
        );
        let avoids_team = reqs(&[("team", NotIn, &["a"])]);
        assert_eq!(
            pool.compatible(&avoids_team, Undefined::AllowWellKnown),
            Ok(())
        );
        let wants_zone = reqs(&[(labels::ZONE, In, &["z1"])]);
        assert_eq!(
            pool.compatible(&wants_zone, Undefined::AllowWellKnown),
            Ok(())
        );
        assert!(pool.compatible(&wants_zone, Undefined::Deny).is_err());
        let wants_windows = reqs(&[(labels::OS, In, &["windows"])]);
        assert!(matches!(
            pool.compatible(&wants_windows, Undefined::AllowWellKnown),
            Err(Incompatibility::Disjoint { .. })
        ));
    }

    #[test]
    fn two_exclusions_never_conflict() {
        use Operator::*;
        let a = reqs(&[("k", NotIn, &["x"])]);
        let b = reqs(&[("k", DoesNotExist, &[])]);
        assert_eq!(a.intersects(&b), Ok(()));
    }

    #[test]
    fn matches_table() {
        use Operator::*;
        let node = labels(&[(labels::ARCH, "amd64"), ("cores", "8")]);
        type Expression<'a> = (&'a str, Operator, &'a [&'a str]);
        let cases: &[(&[Expression], bool)] = &[
            (&[], true),
            (&[(labels::ARCH, In, &["amd64", "arm64"])], true),
            (&[(labels::ARCH, NotIn, &["amd64"])], false),
            (&[("gpu", DoesNotExist, &[])], true),
            (&[("gpu", Exists, &[])], false),
            (&[("gpu", NotIn, &["a100"])], true),
            (&[("cores", Gt, &["4"])], true),
            (&[("cores", Lt, &["4"])], false),
        ];
        for (items, expected) in cases {
            assert_eq!(reqs(items).matches(&node), *expected, "{items:?}");
        }
    }

    #[test]
    fn reads_node_selector_expressions() {
        use k8s_openapi::api::core::v1::NodeSelectorRequirement;
        let expressions = [
            NodeSelectorRequirement {
                key: "k".into(),
                operator: "In".into(),
                values: Some(vec!["a".into(), "b".into()]),
            },
            NodeSelectorRequirement {
                key: "k".into(),
                operator: "NotIn".into(),
                values: Some(vec!["a".into()]),
            },
        ];
        let r = Requirements::from_node_selector(&expressions).unwrap();
        assert_eq!(r.to_string(), "k In [b]");
    }

    fn arb_requirement() -> impl Strategy<Value = Requirement> {
        let value = prop::sample::select(vec!["1", "2", "3", "a", "b"]);
        let values = prop::collection::vec(value, 1..4);
        let bound = prop::sample::select(vec!["0", "1", "2", "3"]);
        let operator = prop::sample::select(vec![
            Operator::In,
            Operator::NotIn,
            Operator::Exists,
            Operator::DoesNotExist,
            Operator::Gt,
            Operator::Lt,
            Operator::Gte,
            Operator::Lte,
        ]);
        (operator, values, bound).prop_map(|(op, values, bound)| match op {
            Operator::In | Operator::NotIn => Requirement::new(op, &values).unwrap(),
            Operator::Exists | Operator::DoesNotExist => Requirement::new::<&str>(op, &[]).unwrap(),
            _ => Requirement::new(op, &[bound]).unwrap(),
        })
    }

    fn arb_requirements() -> impl Strategy<Value = Requirements> {
        prop::collection::vec(
            (
                prop::sample::select(vec!["k1", "k2", "k3"]),
                arb_requirement(),
            ),
            0..4,
        )
        .prop_map(|items| {
            let mut r = Requirements::new();
            for (key, requirement) in items {
                r.add(key, requirement);
            }
            r
        })
    }

    fn arb_labels() -> impl Strategy<Value = BTreeMap<String, String>> {
        prop::collection::btree_map(
            prop::sample::select(vec!["k1".to_string(), "k2".to_string(), "k3".to_string()]),
            prop::sample::select(vec!["1", "2", "3", "a", "b"]).prop_map(str::to_string),
            0..4,
        )
    }

    proptest! {
        #[test]
        fn intersection_is_commutative(a in arb_requirements(), b in arb_requirements()) {
            prop_assert_eq!(a.intersection(&b), b.intersection(&a));
        }

        #[test]
        fn labels_matching_both_sides_match_the_intersection(
            a in arb_requirements(), b in arb_requirements(), node in arb_labels()
        ) {
            if a.matches(&node) && b.matches(&node) {
                prop_assert!(a.intersection(&b).matches(&node));
            }
        }

        #[test]
        fn a_node_matching_requirements_is_compatible_with_them(a in arb_requirements(), node in arb_labels()) {
            let node_requirements = Requirements::from_labels(&node);
            prop_assert_eq!(a.matches(&node), node_requirements.compatible(&a, Undefined::Deny).is_ok());
        }
    }
}
