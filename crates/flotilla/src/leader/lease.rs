//! Between the election's plain records and `coordination.k8s.io/v1` Lease objects.

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};

use super::decide::{LeaseRecord, Observed, Write};

/// The election's view of a Lease read from the server.
pub fn observe(lease: &Lease) -> Observed {
    let spec = lease.spec.clone().unwrap_or_default();
    Observed {
        record: LeaseRecord {
            holder: spec.holder_identity,
            acquire_time: spec.acquire_time.map(|t| t.0),
            renew_time: spec.renew_time.map(|t| t.0),
            lease_duration_seconds: spec.lease_duration_seconds,
            transitions: spec.lease_transitions.unwrap_or(0),
        },
        resource_version: lease.metadata.resource_version.clone().unwrap_or_default(),
    }
}

/// The Lease object `write` puts (or creates) as `namespace/name`, conditioned on the
/// version the write was decided from.
pub fn object(namespace: &str, name: &str, write: &Write) -> Lease {
    let record = &write.record;
    Lease {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            namespace: Some(namespace.to_string()),
            resource_version: write.resource_version.clone(),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: record.holder.clone(),
            acquire_time: record.acquire_time.map(MicroTime),
            renew_time: record.renew_time.map(MicroTime),
            lease_duration_seconds: record.lease_duration_seconds,
            lease_transitions: Some(record.transitions),
            ..LeaseSpec::default()
        }),
    }
}

#[cfg(test)]
mod tests {
    use jiff::Timestamp;

    use super::*;
    use crate::leader::decide::WriteKind;

    #[test]
    fn round_trip() {
        let record = LeaseRecord {
            holder: Some("hub-1-abcd".into()),
            acquire_time: Some(Timestamp::from_microsecond(1_700_000_000_123_456).unwrap()),
            renew_time: Some(Timestamp::from_microsecond(1_700_000_010_654_321).unwrap()),
            lease_duration_seconds: Some(15),
            transitions: 3,
        };
        let write = Write {
            kind: WriteKind::Renew,
            record: record.clone(),
            resource_version: Some("42".into()),
            leading_until: None,
        };
        let lease = object("fleet-system", "flotilla-controllers", &write);
        assert_eq!(
            lease.metadata.namespace.as_deref(),
            Some("fleet-system"),
            "namespace"
        );
        // What the server sends back is what was written, through JSON.
        let json = serde_json::to_value(&lease).unwrap();
        assert_eq!(json["spec"]["renewTime"], "2023-11-14T22:13:30.654321Z");
        let back: Lease = serde_json::from_value(json).unwrap();
        assert_eq!(
            observe(&back),
            Observed {
                record,
                resource_version: "42".into()
            }
        );
        let created = object(
            "fleet-system",
            "flotilla-controllers",
            &Write {
                resource_version: None,
                ..write
            },
        );
        assert_eq!(created.metadata.resource_version, None);
    }

    #[test]
    fn missing_fields() {
        let observed = observe(&Lease::default());
        assert_eq!(observed.record, LeaseRecord::default());
        assert_eq!(observed.resource_version, "");
    }
}
