//! The pure core of leader election: from the lease as observed (or its absence), who I am,
//! the time and the configuration, what to write (compare-and-swap on the observed
//! `resourceVersion`) or how long to wait. No I/O, no clock reads.
//!
//! Safety rests on three facts: every write is conditioned on the version it was decided from
//! (so of two replicas deciding from the same observation at most one write lands); a leader
//! leads only until its last written `renewTime` plus the renew deadline; and others take over
//! only once `renewTime` plus the lease duration has passed, which is later. The difference
//! of the two must cover both how far the replicas' clocks disagree and how long a leader takes
//! to stop its controllers once it stops leading.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use super::config::LeaseConfig;

/// The fields of the Lease's spec that election reads and writes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LeaseRecord {
    /// `holderIdentity`; `None` (or empty on the server) when the lease is free.
    pub holder: Option<String>,
    /// `acquireTime`: when the current holder acquired it.
    pub acquire_time: Option<Timestamp>,
    /// `renewTime`: when the holder last renewed it.
    pub renew_time: Option<Timestamp>,
    /// `leaseDurationSeconds`, as written by the holder.
    pub lease_duration_seconds: Option<i32>,
    /// `leaseTransitions`: how many times the lease changed hands.
    pub transitions: i32,
}

/// A lease as read from the server: its record and the version any write must be
/// conditioned on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observed {
    /// The spec.
    pub record: LeaseRecord,
    /// `metadata.resourceVersion`.
    pub resource_version: String,
}

/// Why a write is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    /// No lease exists: create it, held by me.
    Create,
    /// The lease is free or expired: take it over, one more transition.
    TakeOver,
    /// I hold the lease: renew it.
    Renew,
    /// I am stopping: clear the holder so another replica takes over at once.
    Release,
}

/// A write of the lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write {
    /// Why.
    pub kind: WriteKind,
    /// The lease's new spec.
    pub record: LeaseRecord,
    /// The version the write is conditioned on; `None` for a create.
    pub resource_version: Option<String>,
    /// Until when the writer leads if the write succeeds (`renewTime` + renew deadline);
    /// `None` for a release.
    pub leading_until: Option<Timestamp>,
}

/// What to do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Write the lease (compare-and-swap); success means leading until
    /// [`Write::leading_until`].
    Write(Write),
    /// Another replica holds an unexpired lease: look again at `until` (the lease's expiry or
    /// one retry period from now, whichever is first).
    Wait {
        /// The current holder.
        holder: String,
        /// When to look again.
        until: Timestamp,
    },
}

/// What `me` should do at `now` given the lease as observed (`None`: it does not exist).
pub fn decide(
    observed: Option<&Observed>,
    me: &str,
    now: Timestamp,
    config: &LeaseConfig,
) -> Action {
    let now = stored_precision(now);
    let Some(observed) = observed else {
        return write(
            WriteKind::Create,
            holding(me, now, 0, config),
            None,
            now,
            config,
        );
    };
    let current = &observed.record;
    let version = Some(observed.resource_version.clone());
    match holder(current) {
        Some(holder) if holder == me => {
            let record = LeaseRecord {
                acquire_time: current.acquire_time.or(Some(now)),
                ..holding(me, now, current.transitions, config)
            };
            write(WriteKind::Renew, record, version, now, config)
        }
        Some(holder) => match expiry(current, config) {
            Some(expires) if now < expires => Action::Wait {
                holder: holder.to_string(),
                until: expires.min(add(now, config.retry_period())),
            },
            _ => take_over(current, me, version, now, config),
        },
        None => take_over(current, me, version, now, config),
    }
}

/// The write that releases the lease `me` holds (holder cleared, transitions kept), or `None`
/// when `me` does not hold it.
pub fn release(observed: &Observed, me: &str, now: Timestamp) -> Option<Write> {
    (holder(&observed.record) == Some(me)).then(|| Write {
        kind: WriteKind::Release,
        record: LeaseRecord {
            holder: None,
            acquire_time: None,
            renew_time: Some(stored_precision(now)),
            ..observed.record.clone()
        },
        resource_version: Some(observed.resource_version.clone()),
        leading_until: None,
    })
}

/// When `record`'s lease expires (`renewTime`, else `acquireTime`, plus its duration, else
/// the configured one); `None` when it is free or carries no time at all.
pub fn expiry(record: &LeaseRecord, config: &LeaseConfig) -> Option<Timestamp> {
    holder(record)?;
    let since = record.renew_time.or(record.acquire_time)?;
    let seconds = record
        .lease_duration_seconds
        .unwrap_or_else(|| config.lease_duration_seconds());
    Some(
        since
            .saturating_add(SignedDuration::from_secs(seconds.into()))
            .unwrap_or(since),
    )
}

/// The record's holder, if any (an empty `holderIdentity` means none).
fn holder(record: &LeaseRecord) -> Option<&str> {
    record.holder.as_deref().filter(|h| !h.is_empty())
}

/// Taking over `current` (free or expired): one more transition.
fn take_over(
    current: &LeaseRecord,
    me: &str,
    version: Option<String>,
    now: Timestamp,
    config: &LeaseConfig,
) -> Action {
    let transitions = current.transitions.saturating_add(1);
    let record = holding(me, now, transitions, config);
    write(WriteKind::TakeOver, record, version, now, config)
}

/// A record of `me` holding the lease, acquired and renewed at `now`.
fn holding(me: &str, now: Timestamp, transitions: i32, config: &LeaseConfig) -> LeaseRecord {
    LeaseRecord {
        holder: Some(me.to_string()),
        acquire_time: Some(now),
        renew_time: Some(now),
        lease_duration_seconds: Some(config.lease_duration_seconds()),
        transitions,
    }
}

fn write(
    kind: WriteKind,
    record: LeaseRecord,
    resource_version: Option<String>,
    now: Timestamp,
    config: &LeaseConfig,
) -> Action {
    Action::Write(Write {
        kind,
        record,
        resource_version,
        leading_until: Some(add(now, config.renew_deadline())),
    })
}

fn add(at: Timestamp, d: Duration) -> Timestamp {
    let d = SignedDuration::try_from(d).unwrap_or(SignedDuration::MAX);
    at.saturating_add(d).unwrap_or(Timestamp::MAX)
}

/// `t` truncated to microseconds, the precision a Lease's `MicroTime` keeps, so the times a
/// replica decides with are exactly those others read back.
fn stored_precision(t: Timestamp) -> Timestamp {
    let micros = t.as_microsecond();
    Timestamp::from_microsecond(micros).unwrap_or(t)
}

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
