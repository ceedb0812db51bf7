//! Channel targets: Stable, Rapid and TargetKubernetesVersion over a catalog with previews,
//! patches, minors and releases not available yet.

use flotilla_api::updates::{Channel, KubernetesVersionSpec};

use super::{day, ga, lts, preview, v};
use crate::release::{
    Catalog, ChannelError, ChannelTarget, KubernetesTarget, Minor, channel_target,
};

fn m(text: &str) -> Minor {
    Minor::parse(text).expect(text)
}

/// At day 20 N is 1.31 (1.32 is preview until 1.32.1 on day 40; 1.31.4 comes on day 50).
fn releases() -> Vec<KubernetesVersionSpec> {
    vec![
        lts("1.27.15", &[("x", 1)]),
        ga("1.28.9", &[("x", 1)]),
        ga("1.29.4", &[("x", 1)]),
        ga("1.29.8", &[("x", 1)]),
        ga("1.30.3", &[("x", 1)]),
        ga("1.30.10", &[("y", 5)]),
        ga("1.31.1", &[("x", 1)]),
        ga("1.31.2", &[("y", 10), ("x", 60)]),
        ga("1.31.4", &[("x", 50)]),
        preview("1.31.6", &[("x", 1)]),
        preview("1.32.0", &[("x", 1)]),
        ga("1.32.1", &[("x", 40)]),
    ]
}

fn kubernetes(version: &str, requires_long_term_support: bool) -> ChannelTarget {
    ChannelTarget::Kubernetes(KubernetesTarget {
        version: v(version),
        requires_long_term_support,
    })
}

#[test]
fn channels_pick_the_latest_ga_patch_available_somewhere() {
    let specs = releases();
    let catalog = Catalog::new(&specs, &[]);
    let cases = [
        // (channel, pinned, lts, day, expected version)
        (Channel::Rapid, None, false, 20, "1.31.2"),
        (Channel::Stable, None, false, 20, "1.30.10"),
        (Channel::Stable, None, false, 4, "1.30.3"),
        (Channel::Rapid, None, false, 9, "1.31.1"),
        (
            Channel::TargetKubernetesVersion,
            Some("1.29"),
            false,
            20,
            "1.29.8",
        ),
        (
            Channel::TargetKubernetesVersion,
            Some("1.31"),
            false,
            20,
            "1.31.2",
        ),
        (
            Channel::TargetKubernetesVersion,
            Some("1.31"),
            true,
            20,
            "1.31.2",
        ),
        // 1.32.1 makes 1.32 N; Stable moves to 1.31.
        (Channel::Rapid, None, false, 40, "1.32.1"),
        (Channel::Stable, None, false, 40, "1.31.2"),
        (Channel::Stable, None, false, 50, "1.31.4"),
        // Pins are ignored outside TargetKubernetesVersion.
        (Channel::Rapid, Some("1.29"), true, 20, "1.31.2"),
    ];
    for (channel, pinned, long_term_support, at, expected) in cases {
        assert_eq!(
            channel_target(channel, pinned.map(m), long_term_support, &catalog, day(at)),
            Ok(kubernetes(expected, false)),
            "{channel:?} {pinned:?} at day {at}"
        );
    }
}

#[test]
fn pinned_minor_must_be_released_and_supported() {
    let specs = releases();
    let catalog = Catalog::new(&specs, &[]);
    let target = |pinned: Option<&str>, long_term_support: bool, at: i64| {
        channel_target(
            Channel::TargetKubernetesVersion,
            pinned.map(m),
            long_term_support,
            &catalog,
            day(at),
        )
    };
    // 1.32 is only a preview at day 20, and 1.33 does not exist.
    assert_eq!(
        target(Some("1.32"), false, 20),
        Err(ChannelError::UnreleasedMinor {
            minor: m("1.32"),
            newest: m("1.31")
        })
    );
    assert_eq!(
        target(Some("1.33"), true, 60).map_err(|e| e.to_string()),
        Err("1.33 is not released yet: the newest GA minor is 1.32".to_string())
    );
    assert_eq!(
        target(None, false, 20),
        Err(ChannelError::MissingPinnedMinor)
    );
    // N−2 is 1.29 at day 20: 1.28 needs long-term support, which 1.28 lacks.
    let window = catalog.support_window(day(20)).expect("window");
    assert_eq!(
        target(Some("1.28"), false, 20),
        Err(ChannelError::OutsideSupportWindow {
            minor: m("1.28"),
            window: window.clone()
        })
    );
    assert_eq!(
        target(Some("1.28"), true, 20),
        Err(ChannelError::NoLongTermSupport {
            minor: m("1.28"),
            window
        })
    );
    // 1.27 has long-term support: patches keep coming, for members under LTS only.
    assert_eq!(
        target(Some("1.27"), true, 20),
        Ok(kubernetes("1.27.15", true))
    );
    assert_eq!(
        target(Some("1.27"), false, 20).map_err(|e| e.to_string()),
        Err("1.27 is outside the support window 1.29 to 1.31; pin a newer minor or set longTermSupport".to_string())
    );
    // At day 40 N is 1.32, so 1.29 left the window.
    assert!(matches!(
        target(Some("1.29"), false, 40),
        Err(ChannelError::OutsideSupportWindow { .. })
    ));
}

#[test]
fn no_target_without_a_ga_patch() {
    let specs = releases();
    let catalog = Catalog::new(&specs, &[]);
    assert_eq!(
        channel_target(Channel::Rapid, None, false, &catalog, day(0)),
        Err(ChannelError::NoGaRelease)
    );
    // 1.30 only has a preview here.
    let gap = [
        ga("1.29.8", &[("x", 1)]),
        preview("1.30.0", &[("x", 1)]),
        ga("1.31.2", &[("x", 1)]),
    ];
    let catalog = Catalog::new(&gap, &[]);
    assert_eq!(
        channel_target(Channel::Stable, None, false, &catalog, day(2)),
        Err(ChannelError::NoGaPatch(m("1.30")))
    );
    assert_eq!(
        channel_target(
            Channel::TargetKubernetesVersion,
            Some(m("1.30")),
            false,
            &catalog,
            day(2)
        ),
        Err(ChannelError::NoGaPatch(m("1.30")))
    );
    let first_of_major = [ga("2.0.0", &[("x", 1)])];
    let catalog = Catalog::new(&first_of_major, &[]);
    assert_eq!(
        channel_target(Channel::Stable, None, false, &catalog, day(2)),
        Err(ChannelError::NoPreviousMinor(m("2.0")))
    );
}

#[test]
fn node_image_channel_has_no_kubernetes_version() {
    let specs = releases();
    let catalog = Catalog::new(&specs, &[]);
    assert_eq!(
        channel_target(Channel::NodeImage, None, false, &catalog, day(20)),
        Ok(ChannelTarget::NodeImages(Default::default()))
    );
}
