//! Kubernetes versions and minors: parsing, display and order.

use crate::release::{KubeVersion, Minor, VersionError};

#[test]
fn parses_with_and_without_v() {
    let cases = [
        ("1.30.3", (1, 30, 3)),
        ("v1.30.3", (1, 30, 3)),
        ("1.9.0", (1, 9, 0)),
        ("0.0.0", (0, 0, 0)),
        ("1.010.2", (1, 10, 2)),
    ];
    for (text, (major, minor, patch)) in cases {
        assert_eq!(
            KubeVersion::parse(text),
            Ok(KubeVersion {
                major,
                minor,
                patch
            }),
            "{text}"
        );
    }
}

#[test]
fn rejects_bad_versions() {
    for text in [
        "",
        "1.30",
        "1.30.3.4",
        "1..3",
        "1.30.",
        ".1.30",
        "V1.30.3",
        "vv1.30.3",
        "1.30.x",
        "1.30.-1",
        "1.30.+1",
        " 1.30.3",
        "1.30.3-rc.1",
        "99999999999999999999.0.0",
    ] {
        assert_eq!(
            KubeVersion::parse(text),
            Err(VersionError {
                input: text.to_string(),
                expected: "MAJOR.MINOR.PATCH"
            }),
            "{text:?}"
        );
    }
}

#[test]
fn orders_numerically() {
    let ordered = ["1.9.9", "1.10.0", "1.10.2", "1.10.10", "1.30.0", "2.0.0"];
    for pair in ordered.windows(2) {
        let (a, b) = (super::v(pair[0]), super::v(pair[1]));
        assert!(a < b, "{a} < {b}");
    }
    assert!(super::v("v1.30.3") == super::v("1.30.3"));
}

#[test]
fn displays_without_v() {
    assert_eq!(super::v("v1.30.3").to_string(), "1.30.3");
    assert_eq!(super::v("1.30.3").minor().to_string(), "1.30");
}

#[test]
fn minors_parse_and_step() {
    assert_eq!(
        Minor::parse("1.33"),
        Ok(Minor {
            major: 1,
            minor: 33
        })
    );
    assert_eq!(
        Minor::parse("v1.33"),
        Ok(Minor {
            major: 1,
            minor: 33
        })
    );
    for text in ["1", "1.33.0", "1.x", ""] {
        assert_eq!(
            Minor::parse(text).map_err(|e| e.expected),
            Err("MAJOR.MINOR"),
            "{text:?}"
        );
    }
    let m = |text| Minor::parse(text).expect("minor");
    assert!(m("1.9") < m("1.10"));
    assert_eq!(m("1.31").previous(), Some(m("1.30")));
    assert_eq!(m("2.0").previous(), None);
    assert_eq!(m("1.29").steps_to(m("1.31")), Some(2));
    assert_eq!(m("1.30").steps_to(m("1.31")), Some(1));
    assert_eq!(m("1.31").steps_to(m("1.30")), Some(0));
    assert_eq!(m("1.31").steps_to(m("2.0")), None);
}
