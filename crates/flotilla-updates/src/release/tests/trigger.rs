//! New-release detection for auto-upgrade profiles.

use std::collections::BTreeMap;

use flotilla_api::updates::Channel;

use super::{day, ga, image, v};
use crate::release::{
    Catalog, ChannelTarget, KubernetesTarget, NodeImage, channel_target, is_new_release,
};

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_new_kubernetes_patch_triggers() {
    let target = ChannelTarget::Kubernetes(KubernetesTarget {
        version: v("1.31.2"),
        requires_long_term_support: false,
    });
    assert_eq!(target.upgrade_versions(), strings(&["1.31.2"]));
    assert!(!is_new_release(&strings(&["1.31.2"]), &target));
    assert!(is_new_release(&strings(&["1.31.1"]), &target));
    assert!(is_new_release(&[], &target));
}

#[test]
fn node_image_channel_triggers_on_a_new_image_in_any_family() {
    let images = [
        image("Ubuntu", "202510.12.0", &[("x", 1)]),
        image("Ubuntu", "202510.17.0", &[("y", 10)]),
        image("AzureLinux", "202511.1.0", &[("x", 1), ("y", 1)]),
        image("AzureLinux", "202511.2.0", &[("y", 30)]),
    ];
    let kubernetes = [ga("1.31.2", &[("x", 1)])];
    let catalog = Catalog::new(&kubernetes, &images);
    let at = |d| channel_target(Channel::NodeImage, None, false, &catalog, day(d)).expect("target");
    let img = |full: &str| NodeImage::parse(full).expect(full);
    assert_eq!(
        at(10),
        ChannelTarget::NodeImages(BTreeMap::from([
            ("AzureLinux".to_string(), img("AzureLinux-202511.1.0")),
            ("Ubuntu".to_string(), img("Ubuntu-202510.17.0")),
        ]))
    );
    let day5 = at(5).upgrade_versions();
    assert_eq!(
        day5,
        strings(&["AzureLinux-202511.1.0", "Ubuntu-202510.12.0"])
    );
    assert!(!is_new_release(&day5, &at(5)));
    assert!(is_new_release(&day5, &at(10)));
    let day10 = at(10).upgrade_versions();
    assert!(!is_new_release(&day10, &at(20)));
    assert!(is_new_release(&day10, &at(30)));
    // A family withdrawn from the catalog releases nothing new.
    let mut more = day10.clone();
    more.push("Windows2022-20348.4171".to_string());
    assert!(!is_new_release(&more, &at(20)));
    // An empty catalog never triggers.
    let empty = Catalog::new(&kubernetes, &[]);
    let none = channel_target(Channel::NodeImage, None, false, &empty, day(5)).expect("target");
    assert!(!is_new_release(&[], &none));
}
