//! Generated run names: deterministic, distinct per upgrade, valid names.

use flotilla_api::updates::Channel;

use crate::release::generated_run_name;

/// AKS's run name rule, within a DNS-1123 subdomain's.
fn valid(name: &str) -> bool {
    let bytes = name.as_bytes();
    (1..=50).contains(&bytes.len())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn same_inputs_same_name_in_any_order() {
    let a = generated_run_name("prod", Channel::NodeImage, &strings(&["b-2", "a-1"]));
    let b = generated_run_name("prod", Channel::NodeImage, &strings(&["a-1", "b-2", "a-1"]));
    assert_eq!(a, b);
    assert!(a.starts_with("prod-"), "{a}");
    assert_eq!(a.len(), "prod-".len() + 8);
    assert!(valid(&a), "{a}");
}

#[test]
fn different_inputs_different_names() {
    let base = generated_run_name("prod", Channel::Stable, &strings(&["1.31.2"]));
    let others = [
        generated_run_name("prod", Channel::Stable, &strings(&["1.31.3"])),
        generated_run_name("prod", Channel::Rapid, &strings(&["1.31.2"])),
        generated_run_name("prod2", Channel::Stable, &strings(&["1.31.2"])),
        generated_run_name("prod", Channel::Stable, &strings(&["1.31.2", "1.31.3"])),
        generated_run_name("prod", Channel::Stable, &[]),
    ];
    for other in others {
        assert_ne!(base, other);
    }
}

#[test]
fn names_are_valid_whatever_the_profile() {
    let long = "p".repeat(63);
    let cases = [
        "prod",
        "team.prod",
        "Prod_Weekly",
        long.as_str(),
        "a-b-c-d-e-f-g-h-i-j-k-l-m-n-o-p-q-r-s-t-u-v-w-x-y-z-0-1-2-3",
        "-",
        "",
        "ünïcode",
    ];
    for profile in cases {
        let name = generated_run_name(profile, Channel::Rapid, &strings(&["1.32.1"]));
        assert!(valid(&name), "{profile:?} -> {name:?}");
    }
    assert!(generated_run_name("team.prod", Channel::Rapid, &[]).starts_with("team-prod-"));
    // Long profile names are cut, and two that share the cut part still differ.
    let a = generated_run_name(&format!("{long}a"), Channel::Rapid, &[]);
    let b = generated_run_name(&format!("{long}b"), Channel::Rapid, &[]);
    assert_eq!(a.len(), 50);
    assert_ne!(a, b);
}
