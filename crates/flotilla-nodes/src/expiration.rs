//! Expiration: a node's lifetime. It is forceful — not a disruption method and not gated by
//! budgets (reference §2): once `now ≥ creation + expireAfter` the claim is deleted and the
//! provisioner finds homes for its pods.
//!
//! A pool states the lifetime in `spec.template.spec.expireAfter` (Karpenter v1) or in
//! `spec.disruption.expireAfter` (v1beta1, where AKS's documents put it); the template wins,
//! then the disruption field, then the default of 720h. The lifetime in force is copied into
//! each claim at launch, so a claim keeps the lifetime it was launched with (and a pool whose
//! lifetime changes has drifted, as in v1: the lifetime is part of the template hash).

use flotilla_api::nodes::node_pool::DEFAULT_EXPIRE_AFTER;
use flotilla_api::nodes::{NodeClaim, NodePoolSpec};
use flotilla_apimachinery::go_duration;
use jiff::{SignedDuration, Timestamp};

/// The text of a lifetime that never ends.
pub const NEVER: &str = "Never";

/// Where a pool's node lifetime comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpireAfterSource {
    /// `spec.template.spec.expireAfter` (Karpenter v1).
    Template,
    /// `spec.disruption.expireAfter` (Karpenter v1beta1, AKS's documents).
    Disruption,
    /// Neither: the default.
    Default,
}

impl ExpireAfterSource {
    /// The field, as the pool's status names it.
    pub fn field(self) -> &'static str {
        match self {
            ExpireAfterSource::Template => "spec.template.spec.expireAfter",
            ExpireAfterSource::Disruption => "spec.disruption.expireAfter",
            ExpireAfterSource::Default => "default",
        }
    }
}

/// A pool's node lifetime in force and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpireAfter {
    /// As written (`168h`, `Never`).
    pub text: String,
    /// Where it comes from.
    pub source: ExpireAfterSource,
}

/// The node lifetime in force for `pool`.
pub fn expire_after(pool: &NodePoolSpec) -> ExpireAfter {
    let template = pool.template.spec.expire_after.as_deref();
    let disruption = pool
        .disruption
        .as_ref()
        .and_then(|d| d.expire_after.as_deref());
    let (text, source) = match (template, disruption) {
        (Some(text), _) => (text, ExpireAfterSource::Template),
        (None, Some(text)) => (text, ExpireAfterSource::Disruption),
        (None, None) => (DEFAULT_EXPIRE_AFTER, ExpireAfterSource::Default),
    };
    ExpireAfter {
        text: text.to_string(),
        source,
    }
}

/// A lifetime's length: `None` for `Never` (or, defensively, for text the schema should have
/// rejected — a lifetime nobody can read never expires anything).
pub fn lifetime(text: &str) -> Option<SignedDuration> {
    if text == NEVER {
        return None;
    }
    go_duration::parse(text).filter(|d| d.is_positive())
}

/// When `claim` expires: its creation plus its `spec.expireAfter`; `None` when it never does.
pub fn expires_at(claim: &NodeClaim) -> Option<Timestamp> {
    let created = claim.metadata.creation_timestamp.as_ref()?.0;
    let lifetime = lifetime(claim.spec.expire_after.as_deref()?)?;
    created.checked_add(lifetime).ok()
}

/// Whether `claim` has expired at `now` (and is not already being deleted).
pub fn expired(claim: &NodeClaim, now: Timestamp) -> bool {
    claim.metadata.deletion_timestamp.is_none() && expires_at(claim).is_some_and(|at| now >= at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_api::nodes::node_claim::NodeClassReference;
    use flotilla_api::nodes::{Disruption, NodeClaimSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn pool(template: Option<&str>, disruption: Option<&str>) -> NodePoolSpec {
        let mut spec = NodePoolSpec::default();
        spec.template.spec.expire_after = template.map(str::to_string);
        spec.disruption = disruption.map(|text| Disruption {
            expire_after: Some(text.to_string()),
            ..Disruption::default()
        });
        spec
    }

    #[test]
    fn the_template_wins_then_the_disruption_field_then_the_default() {
        let cases = [
            (
                Some("24h"),
                Some("168h"),
                "24h",
                ExpireAfterSource::Template,
            ),
            (None, Some("168h"), "168h", ExpireAfterSource::Disruption),
            (None, Some("Never"), "Never", ExpireAfterSource::Disruption),
            (None, None, "720h", ExpireAfterSource::Default),
        ];
        for (template, disruption, text, source) in cases {
            let found = expire_after(&pool(template, disruption));
            assert_eq!((found.text.as_str(), found.source), (text, source));
        }
    }

    fn claim(created: &str, expire_after: Option<&str>) -> NodeClaim {
        let mut claim = NodeClaim::new(
            "default-abcde",
            NodeClaimSpec {
                node_class_ref: NodeClassReference::default(),
                expire_after: expire_after.map(str::to_string),
                ..NodeClaimSpec::default()
            },
        );
        claim.metadata.creation_timestamp = Some(Time(created.parse().unwrap()));
        claim
    }

    #[test]
    fn a_claim_expires_at_creation_plus_its_lifetime() {
        let c = claim("2026-11-02T10:00:00Z", Some("24h"));
        assert!(!expired(&c, "2026-11-03T09:59:59Z".parse().unwrap()));
        assert!(expired(&c, "2026-11-03T10:00:00Z".parse().unwrap()));
        let never = claim("2020-01-01T00:00:00Z", Some("Never"));
        assert!(!expired(&never, "2030-01-01T00:00:00Z".parse().unwrap()));
        assert_eq!(expires_at(&claim("2026-11-02T10:00:00Z", None)), None);
        assert_eq!(
            expires_at(&claim("2026-11-02T10:00:00Z", Some("1h30m"))),
            Some("2026-11-02T11:30:00Z".parse().unwrap())
        );
    }
}
