//! Properties over generated catalogs: `Consistent` picks the newest version every region
//! shares; channels never pick a preview or a release not available yet; no upgrade ever
//! moves more than one minor.

use flotilla_api::updates::{Channel, KubernetesVersionSpec, NodeImageVersionSpec};
use proptest::prelude::*;

use super::{availability, day};
use crate::release::{
    Catalog, ChannelTarget, KubeVersion, KubernetesTarget, Minor, NodeImage, Verdict,
    channel_target, member_verdict,
};

const REGIONS: [&str; 4] = ["r0", "r1", "r2", "r3"];
const FAMILIES: [&str; 2] = ["Ubuntu", "AzureLinux"];

/// Availability in some of the regions, from day 0 to 20.
fn some_availability() -> impl Strategy<Value = Vec<(usize, i64)>> {
    prop::collection::vec((0..REGIONS.len(), 0i64..20), 0..4)
}

fn regions(slots: &[(usize, i64)]) -> Vec<(&'static str, i64)> {
    slots.iter().map(|&(r, d)| (REGIONS[r], d)).collect()
}

fn image_spec() -> impl Strategy<Value = NodeImageVersionSpec> {
    (
        0..FAMILIES.len(),
        prop::collection::vec(0u64..4, 1..4),
        some_availability(),
    )
        .prop_map(|(family, parts, slots)| NodeImageVersionSpec {
            family: FAMILIES[family].to_string(),
            version: parts
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join("."),
            availability: availability(&regions(&slots)),
        })
}

fn kubernetes_spec() -> impl Strategy<Value = KubernetesVersionSpec> {
    (
        25u64..33,
        0u64..6,
        any::<bool>(),
        any::<bool>(),
        some_availability(),
    )
        .prop_map(
            |(minor, patch, preview, long_term_support, slots)| KubernetesVersionSpec {
                version: format!("1.{minor}.{patch}"),
                preview,
                long_term_support,
                availability: availability(&regions(&slots)),
            },
        )
}

fn channel() -> impl Strategy<Value = Channel> {
    prop_oneof![
        Just(Channel::Stable),
        Just(Channel::Rapid),
        Just(Channel::TargetKubernetesVersion),
    ]
}

fn version() -> impl Strategy<Value = KubeVersion> {
    (1u64..3, 0u64..12, 0u64..4).prop_map(|(major, minor, patch)| KubeVersion {
        major,
        minor,
        patch,
    })
}

proptest! {
    #[test]
    fn consistent_is_shared_by_all_regions_and_newest(
        specs in prop::collection::vec(image_spec(), 0..12),
        usage in prop::collection::vec((0..REGIONS.len(), 0..FAMILIES.len()), 1..6),
        now in 0i64..22,
    ) {
        let catalog = Catalog::new(&[], &specs);
        let usage: Vec<(&str, &str)> = usage.iter().map(|&(r, f)| (REGIONS[r], FAMILIES[f])).collect();
        let selected = catalog.consistent_images(usage.iter().copied(), day(now));
        let shared = |image: &NodeImage, family: &str| {
            usage
                .iter()
                .filter(|(_, f)| *f == family)
                .all(|(region, _)| catalog.image_available_in(image, region, day(now)))
        };
        let used: std::collections::BTreeSet<&str> = usage.iter().map(|(_, f)| *f).collect();
        prop_assert_eq!(selected.keys().map(String::as_str).collect::<std::collections::BTreeSet<_>>(), used);
        for (family, choice) in &selected {
            let candidates = specs.iter().filter(|s| &s.family == family).map(|s| NodeImage {
                family: s.family.clone(),
                version: crate::release::ImageVersion::parse(&s.version).expect("generated"),
            });
            match choice {
                Some(image) => {
                    prop_assert_eq!(&image.family, family);
                    prop_assert!(shared(image, family), "{} is not in every region", image);
                    for other in candidates.filter(|c| c.version > image.version) {
                        prop_assert!(!shared(&other, family), "{} is newer and shared", other);
                    }
                }
                None => {
                    for other in candidates {
                        prop_assert!(!shared(&other, family), "{} is shared", other);
                    }
                }
            }
        }
    }

    #[test]
    fn channels_pick_only_available_ga_releases(
        specs in prop::collection::vec(kubernetes_spec(), 0..14),
        channel in channel(),
        pinned in prop::option::of(24u64..34),
        long_term_support in any::<bool>(),
        now in 0i64..22,
    ) {
        let catalog = Catalog::new(&specs, &[]);
        let pinned = pinned.map(|minor| Minor { major: 1, minor });
        let result = channel_target(channel, pinned, long_term_support, &catalog, day(now));
        if let Ok(ChannelTarget::Kubernetes(KubernetesTarget { version, .. })) = result {
            let ga_now = |s: &&KubernetesVersionSpec| {
                !s.preview && s.availability.iter().any(|a| a.available_at.0 <= day(now))
            };
            let released: Vec<KubeVersion> = specs
                .iter()
                .filter(ga_now)
                .map(|s| KubeVersion::parse(&s.version).expect("generated"))
                .collect();
            prop_assert!(released.contains(&version), "{} is not GA and available", version);
            prop_assert!(
                !released.iter().any(|r| r.minor() == version.minor() && *r > version),
                "a newer GA patch of {} is available",
                version.minor()
            );
            if channel == Channel::TargetKubernetesVersion {
                prop_assert_eq!(Some(version.minor()), pinned);
            }
        } else {
            prop_assert!(result.is_err());
        }
    }

    #[test]
    fn no_upgrade_moves_more_than_one_minor(
        current in version(),
        target in version(),
        requires_long_term_support in any::<bool>(),
        member_long_term_support in any::<bool>(),
    ) {
        let verdict = member_verdict(
            current,
            &KubernetesTarget { version: target, requires_long_term_support },
            member_long_term_support,
        );
        if verdict == Verdict::Upgrade {
            prop_assert!(current < target);
            prop_assert_eq!(current.major, target.major);
            prop_assert!(target.minor - current.minor <= 1);
            prop_assert!(member_long_term_support || !requires_long_term_support);
        }
    }
}
