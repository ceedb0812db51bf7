//! Small helpers over Kubernetes objects: names, owners, times and scaled values.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::{Metadata, Resource};

/// An object's name ("" if unset).
pub fn name_of<K: Metadata<Ty = ObjectMeta>>(obj: &K) -> &str {
    obj.metadata().name.as_deref().unwrap_or_default()
}

/// An object's namespace ("" if unset or cluster-scoped).
pub fn namespace_of<K: Metadata<Ty = ObjectMeta>>(obj: &K) -> &str {
    obj.metadata().namespace.as_deref().unwrap_or_default()
}

/// An object's uid ("" if unset).
pub fn uid_of<K: Metadata<Ty = ObjectMeta>>(obj: &K) -> &str {
    obj.metadata().uid.as_deref().unwrap_or_default()
}

/// The uid of the object's controller (the owner reference with `controller: true`).
pub fn controller_uid(meta: &ObjectMeta) -> Option<&str> {
    meta.owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true))
        .map(|r| r.uid.as_str())
}

/// The owner reference a controller puts on what it creates: `controller: true` and
/// `blockOwnerDeletion: true`, so the garbage collector deletes it with its owner.
pub fn controller_reference<K: Resource + Metadata<Ty = ObjectMeta>>(owner: &K) -> OwnerReference {
    OwnerReference {
        api_version: K::API_VERSION.to_string(),
        kind: K::KIND.to_string(),
        name: name_of(owner).to_string(),
        uid: uid_of(owner).to_string(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// A reference to one object, for events and deletions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectRef {
    /// `apps/v1`, `v1`, ...
    pub api_version: String,
    /// Kind.
    pub kind: String,
    /// Namespace, empty for cluster-scoped objects.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Uid.
    pub uid: String,
}

impl ObjectRef {
    /// A reference to `obj`.
    pub fn of<K: Resource + Metadata<Ty = ObjectMeta>>(obj: &K) -> ObjectRef {
        ObjectRef {
            api_version: K::API_VERSION.to_string(),
            kind: K::KIND.to_string(),
            namespace: namespace_of(obj).to_string(),
            name: name_of(obj).to_string(),
            uid: uid_of(obj).to_string(),
        }
    }
}

/// A count as an `i32` status field.
pub fn count(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// A count for an `omitempty` status field: zero is left out, as Kubernetes serializes it.
pub fn nonzero(n: usize) -> Option<i32> {
    (n > 0).then(|| count(n))
}

/// `now` as Kubernetes records it: whole seconds.
pub fn time(now: jiff::Timestamp) -> Time {
    Time(jiff::Timestamp::from_second(now.as_second()).unwrap_or(now))
}

/// `seconds` after `t`.
pub fn after(t: jiff::Timestamp, seconds: i64) -> jiff::Timestamp {
    t.checked_add(jiff::SignedDuration::from_secs(seconds))
        .unwrap_or(jiff::Timestamp::MAX)
}

/// An int-or-percent scaled against `total` (`intstr.GetScaledValueFromIntOrPercent`):
/// percentages round up or down as asked; an unparsable value counts as 0.
pub fn scaled_value(value: Option<&IntOrString>, default: &str, total: i32, round_up: bool) -> i32 {
    let text = match value {
        Some(IntOrString::Int(n)) => return *n,
        Some(IntOrString::String(s)) => s.as_str(),
        None => default,
    };
    let Some(percent) = text.strip_suffix('%').and_then(|p| p.parse::<i64>().ok()) else {
        return text.parse().unwrap_or(0);
    };
    let product = percent * i64::from(total);
    let scaled = if round_up {
        (product + 99).div_euclid(100)
    } else {
        product.div_euclid(100)
    };
    i32::try_from(scaled).unwrap_or(i32::MAX)
}

#[cfg(test)]
pub(crate) mod fixtures;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_like_intstr() {
        let pct = |s: &str| IntOrString::String(s.into());
        let cases = [
            (Some(pct("25%")), 10, true, 3),
            (Some(pct("25%")), 10, false, 2),
            (Some(pct("25%")), 1, false, 0),
            (Some(pct("25%")), 1, true, 1),
            (Some(pct("100%")), 7, false, 7),
            (Some(IntOrString::Int(2)), 10, true, 2),
            (Some(pct("3")), 10, true, 3),
            (None, 4, true, 1),
        ];
        for (value, total, up, expected) in cases {
            assert_eq!(
                scaled_value(value.as_ref(), "25%", total, up),
                expected,
                "{value:?} of {total}"
            );
        }
    }

    #[test]
    fn times_are_whole_seconds() {
        let t: jiff::Timestamp = "2026-03-01T10:00:00.75Z".parse().unwrap();
        assert_eq!(time(t).0, "2026-03-01T10:00:00Z".parse().unwrap());
        assert_eq!(after(t, 5), "2026-03-01T10:00:05.75Z".parse().unwrap());
    }
}
