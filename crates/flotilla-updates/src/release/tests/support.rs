//! The support window and the members outside it.

use std::collections::BTreeSet;

use super::{day, ga, lts, v};
use crate::release::{Catalog, KubernetesTarget, MemberVersion, Minor, SupportWindow};

fn m(text: &str) -> Minor {
    Minor::parse(text).expect(text)
}

#[test]
fn window_is_three_minors_plus_long_term_support() {
    let specs = [
        lts("1.27.15", &[("x", 1)]),
        ga("1.28.9", &[("x", 1)]),
        ga("1.30.3", &[("x", 1)]),
        ga("1.31.2", &[("x", 1)]),
        lts("1.26.20", &[("x", 90)]),
    ];
    let window = Catalog::new(&specs, &[])
        .support_window(day(10))
        .expect("window");
    assert_eq!(
        window,
        SupportWindow::new(m("1.31"), BTreeSet::from([m("1.27")]))
    );
    assert_eq!(window.to_string(), "1.29 to 1.31");
    assert_eq!(window.oldest(), m("1.29"));
    let cases = [
        ("1.32", false, true),
        ("1.31", false, true),
        ("1.29", false, true),
        ("1.28", false, false),
        ("1.28", true, false),
        ("1.27", false, false),
        ("1.27", true, true),
        ("1.26", true, false),
        ("0.31", false, false),
    ];
    for (minor, member_lts, supported) in cases {
        assert_eq!(
            window.supports(m(minor), member_lts),
            supported,
            "{minor} lts={member_lts}"
        );
    }
    assert!(KubernetesTarget::new(v("1.27.15"), &window).requires_long_term_support);
    assert!(!KubernetesTarget::new(v("1.29.1"), &window).requires_long_term_support);
}

#[test]
fn lists_members_outside_the_window() {
    let window = SupportWindow::new(m("1.32"), BTreeSet::from([m("1.27")]));
    let members = [
        ("a", "1.32.1", false),
        ("b", "1.30.0", false),
        ("c", "1.29.11", false),
        ("d", "1.27.15", true),
        ("e", "1.27.15", false),
        ("f", "1.28.2", true),
    ];
    let listed =
        window.unsupported_members(members.iter().map(|&(name, version, long_term_support)| {
            MemberVersion {
                name,
                version: v(version),
                long_term_support,
            }
        }));
    assert_eq!(
        listed,
        [
            "c: 1.29.11 is outside the support window 1.30 to 1.32",
            "e: 1.27.15 is outside the support window 1.30 to 1.32",
            "f: 1.28.2 is outside the support window 1.30 to 1.32 and 1.28 has no long-term support",
        ]
    );
}
