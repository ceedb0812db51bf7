//! Member verdicts: at target, the one-minor rule and long-term support.

use super::v;
use crate::release::{KubernetesTarget, Verdict, member_verdict};

fn target(version: &str, requires_long_term_support: bool) -> KubernetesTarget {
    KubernetesTarget {
        version: v(version),
        requires_long_term_support,
    }
}

#[test]
fn one_minor_at_most_and_never_down() {
    let at = |message: &str| Verdict::AtTarget {
        message: message.to_string(),
    };
    let skip = |message: &str| Verdict::Skip {
        message: message.to_string(),
    };
    let cases = [
        ("1.29.9", "1.30.3", Verdict::Upgrade),
        ("1.30.1", "1.30.3", Verdict::Upgrade),
        ("1.30.3", "1.30.3", at("already at 1.30.3")),
        (
            "1.31.0",
            "1.30.3",
            at("already at 1.31.0, newer than the target 1.30.3"),
        ),
        (
            "1.30.4",
            "1.30.3",
            at("already at 1.30.4, newer than the target 1.30.3"),
        ),
        (
            "1.28.15",
            "1.30.3",
            skip("1.28.15 is more than one minor behind 1.30.x; align it with a manual run first"),
        ),
        (
            "1.29.4",
            "1.31.2",
            skip("1.29.4 is more than one minor behind 1.31.x; align it with a manual run first"),
        ),
        (
            "1.31.9",
            "2.0.1",
            skip("1.31.9 is more than one minor behind 2.0.x; align it with a manual run first"),
        ),
    ];
    for (current, to, expected) in cases {
        assert_eq!(
            member_verdict(v(current), &target(to, false), false),
            expected,
            "{current} -> {to}"
        );
        // Long-term support changes nothing for a target inside the window.
        assert_eq!(
            member_verdict(v(current), &target(to, false), true),
            expected,
            "{current} -> {to} (LTS)"
        );
    }
}

#[test]
fn long_term_support_targets_need_members_under_it() {
    let old = target("1.27.16", true);
    assert_eq!(member_verdict(v("1.27.15"), &old, true), Verdict::Upgrade);
    assert_eq!(member_verdict(v("1.26.9"), &old, true), Verdict::Upgrade);
    assert_eq!(
        member_verdict(v("1.27.15"), &old, false),
        Verdict::Fail {
            message: "1.27 is outside the support window and 1.27.15 is not under long-term support; only clusters under long-term support can take 1.27.16".to_string()
        }
    );
    // Already there: nothing to do, with or without LTS.
    assert!(matches!(
        member_verdict(v("1.27.16"), &old, false),
        Verdict::AtTarget { .. }
    ));
    // Two minors behind stays a skip for members under LTS.
    assert!(matches!(
        member_verdict(v("1.25.3"), &old, true),
        Verdict::Skip { .. }
    ));
}
