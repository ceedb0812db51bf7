use super::*;

fn at(s: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + s).unwrap()
}

fn config() -> LeaseConfig {
    LeaseConfig::default()
}

fn lease(holder: &str, acquired: i64, renewed: i64, transitions: i32) -> Observed {
    Observed {
        record: LeaseRecord {
            holder: Some(holder.to_string()),
            acquire_time: Some(at(acquired)),
            renew_time: Some(at(renewed)),
            lease_duration_seconds: Some(15),
            transitions,
        },
        resource_version: "7".into(),
    }
}

fn held_by(me: &str, acquired: i64, renewed: i64, transitions: i32) -> LeaseRecord {
    LeaseRecord {
        holder: Some(me.into()),
        acquire_time: Some(at(acquired)),
        renew_time: Some(at(renewed)),
        lease_duration_seconds: Some(15),
        transitions,
    }
}

fn wrote(kind: WriteKind, record: LeaseRecord, version: Option<&str>, now: i64) -> Action {
    Action::Write(Write {
        kind,
        record,
        resource_version: version.map(str::to_string),
        leading_until: Some(at(now + 10)),
    })
}

#[test]
fn decisions() {
    let free = Observed {
        record: LeaseRecord {
            holder: Some(String::new()),
            renew_time: Some(at(99)),
            transitions: 4,
            ..LeaseRecord::default()
        },
        resource_version: "7".into(),
    };
    let timeless = Observed {
        record: LeaseRecord {
            holder: Some("b".into()),
            transitions: 1,
            ..LeaseRecord::default()
        },
        resource_version: "7".into(),
    };
    let mut own_duration = lease("b", 0, 100, 2);
    own_duration.record.lease_duration_seconds = None;
    let cases: Vec<(&str, Option<Observed>, i64, Action)> = vec![
        (
            "no lease: create it",
            None,
            100,
            wrote(WriteKind::Create, held_by("a", 100, 100, 0), None, 100),
        ),
        (
            "mine: renew, keeping acquireTime and transitions",
            Some(lease("a", 50, 98, 3)),
            100,
            wrote(WriteKind::Renew, held_by("a", 50, 100, 3), Some("7"), 100),
        ),
        (
            "mine, even expired: renew (nobody took it)",
            Some(lease("a", 50, 60, 3)),
            100,
            wrote(WriteKind::Renew, held_by("a", 50, 100, 3), Some("7"), 100),
        ),
        (
            "another's, fresh: wait one retry period",
            Some(lease("b", 0, 95, 2)),
            100,
            Action::Wait {
                holder: "b".into(),
                until: at(102),
            },
        ),
        (
            "another's, expiring within a retry period: wait until it expires",
            Some(lease("b", 0, 86, 2)),
            100,
            Action::Wait {
                holder: "b".into(),
                until: at(101),
            },
        ),
        (
            "another's, expiring exactly now: take over",
            Some(lease("b", 0, 85, 2)),
            100,
            wrote(
                WriteKind::TakeOver,
                held_by("a", 100, 100, 3),
                Some("7"),
                100,
            ),
        ),
        (
            "another's, expired: take over",
            Some(lease("b", 0, 50, 2)),
            100,
            wrote(
                WriteKind::TakeOver,
                held_by("a", 100, 100, 3),
                Some("7"),
                100,
            ),
        ),
        (
            "released: take over at once",
            Some(free),
            100,
            wrote(
                WriteKind::TakeOver,
                held_by("a", 100, 100, 5),
                Some("7"),
                100,
            ),
        ),
        (
            "held but never renewed: free",
            Some(timeless),
            100,
            wrote(
                WriteKind::TakeOver,
                held_by("a", 100, 100, 2),
                Some("7"),
                100,
            ),
        ),
        (
            "no duration on the lease: mine is used",
            Some(own_duration),
            114,
            Action::Wait {
                holder: "b".into(),
                until: at(115),
            },
        ),
    ];
    for (name, observed, now, expected) in cases {
        assert_eq!(
            decide(observed.as_ref(), "a", at(now), &config()),
            expected,
            "{name}"
        );
    }
}

#[test]
fn times_are_kept_to_microseconds() {
    let now = Timestamp::from_nanosecond(1_700_000_000_123_456_789).unwrap();
    let Action::Write(write) = decide(None, "a", now, &config()) else {
        panic!("expected a write");
    };
    let micros = Timestamp::from_nanosecond(1_700_000_000_123_456_000).unwrap();
    assert_eq!(write.record.renew_time, Some(micros));
    assert_eq!(write.record.acquire_time, Some(micros));
}

#[test]
fn releases() {
    let mine = lease("a", 50, 98, 3);
    let released = release(&mine, "a", at(100)).expect("mine to release");
    assert_eq!(
        released,
        Write {
            kind: WriteKind::Release,
            record: LeaseRecord {
                holder: None,
                acquire_time: None,
                renew_time: Some(at(100)),
                lease_duration_seconds: Some(15),
                transitions: 3,
            },
            resource_version: Some("7".into()),
            leading_until: None,
        }
    );
    assert_eq!(release(&lease("b", 50, 98, 3), "a", at(100)), None);
    let after = Observed {
        record: released.record,
        resource_version: "8".into(),
    };
    assert!(
        matches!(
            decide(Some(&after), "b", at(100), &config()),
            Action::Write(Write {
                kind: WriteKind::TakeOver,
                ..
            })
        ),
        "a released lease is taken over at once"
    );
}

#[test]
fn expiries() {
    let cases: Vec<(&str, LeaseRecord, Option<Timestamp>)> = vec![
        ("renewed", held_by("b", 0, 100, 0), Some(at(115))),
        (
            "acquired, never renewed",
            LeaseRecord {
                renew_time: None,
                ..held_by("b", 90, 0, 0)
            },
            Some(at(105)),
        ),
        (
            "free",
            LeaseRecord {
                holder: None,
                ..held_by("b", 0, 100, 0)
            },
            None,
        ),
    ];
    for (name, record, expected) in cases {
        assert_eq!(expiry(&record, &config()), expected, "{name}");
    }
}
