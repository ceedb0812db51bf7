//! Node image selection: `Latest` per region, `Consistent` across regions, `Custom` lists,
//! and availability checks.

use std::collections::BTreeMap;

use super::{day, ga, image, v};
use crate::release::{Catalog, CustomImagesError, NodeImage, NodeImageError, custom_images};

const UBUNTU: &str = "AKSUbuntu-2204gen2containerd";
const AZL: &str = "AKSAzureLinux-V2gen2";

fn img(full: &str) -> NodeImage {
    NodeImage::parse(full).expect(full)
}

fn ubuntu(version: &str) -> NodeImage {
    img(&format!("{UBUNTU}-{version}"))
}

#[test]
fn latest_is_per_region_and_honours_available_at() {
    let images = [
        image(UBUNTU, "202510.12.0", &[("x", 10), ("y", 10)]),
        image(UBUNTU, "202510.17.0", &[("x", 30), ("y", 20)]),
        image(UBUNTU, "202510.9.0", &[("x", 1), ("y", 1), ("z", 1)]),
        image(AZL, "202511.1.0", &[("x", 1)]),
    ];
    let catalog = Catalog::new(&[], &images);
    let cases = [
        ("x", 5, Some("202510.9.0")),
        ("x", 10, Some("202510.12.0")),
        ("x", 29, Some("202510.12.0")),
        ("x", 30, Some("202510.17.0")),
        ("y", 20, Some("202510.17.0")),
        ("z", 100, Some("202510.9.0")),
        ("w", 100, None),
        ("x", 0, None),
    ];
    for (region, at, expected) in cases {
        assert_eq!(
            catalog.latest_image(UBUNTU, region, day(at)),
            expected.map(ubuntu),
            "{region} at day {at}"
        );
    }
    assert_eq!(
        catalog.latest_image(AZL, "x", day(1)),
        Some(img(&format!("{AZL}-202511.1.0")))
    );
    assert_eq!(catalog.latest_image("Windows2022", "x", day(100)), None);
}

#[test]
fn consistent_takes_the_newest_version_every_region_shares() {
    // The reference's example: region X has .12, Y has .17; both get .12.
    let images = [
        image(UBUNTU, "202510.12.0", &[("x", 1), ("y", 1)]),
        image(UBUNTU, "202510.17.0", &[("y", 2)]),
    ];
    let catalog = Catalog::new(&[], &images);
    let selected = catalog.consistent_images([("x", UBUNTU), ("y", UBUNTU), ("y", UBUNTU)], day(5));
    assert_eq!(
        selected,
        BTreeMap::from([(UBUNTU.to_string(), Some(ubuntu("202510.12.0")))])
    );
    // A run of members in Y alone gets .17.
    let selected = catalog.consistent_images([("y", UBUNTU)], day(5));
    assert_eq!(selected[UBUNTU], Some(ubuntu("202510.17.0")));
    // Before .17 reaches Y, Y alone gets .12 too.
    let selected = catalog.consistent_images([("y", UBUNTU)], day(1));
    assert_eq!(selected[UBUNTU], Some(ubuntu("202510.12.0")));
}

#[test]
fn consistent_reports_a_family_without_a_common_version() {
    let images = [
        image(UBUNTU, "202510.12.0", &[("x", 1)]),
        image(UBUNTU, "202510.17.0", &[("y", 1)]),
        image(AZL, "202511.1.0", &[("x", 1), ("y", 1)]),
        image(AZL, "202511.2.0", &[("x", 1), ("y", 50)]),
    ];
    let catalog = Catalog::new(&[], &images);
    let selected = catalog.consistent_images(
        [("x", UBUNTU), ("y", UBUNTU), ("x", AZL), ("y", AZL)],
        day(5),
    );
    assert_eq!(
        selected,
        BTreeMap::from([
            (AZL.to_string(), Some(img(&format!("{AZL}-202511.1.0")))),
            (UBUNTU.to_string(), None),
        ])
    );
    // A family used by the run but absent from the catalog is missing too.
    let selected = catalog.consistent_images([("x", "Windows2022")], day(5));
    assert_eq!(
        selected,
        BTreeMap::from([("Windows2022".to_string(), None)])
    );
}

#[test]
fn availability_checks_region_and_time() {
    let kubernetes = [ga("1.31.2", &[("x", 10)])];
    let images = [image(UBUNTU, "202510.12.0", &[("x", 10)])];
    let catalog = Catalog::new(&kubernetes, &images);
    let cases = [
        ("x", 9, false),
        ("x", 10, true),
        ("x", 11, true),
        ("y", 11, false),
    ];
    for (region, at, expected) in cases {
        assert_eq!(
            catalog.kubernetes_available_in(v("1.31.2"), region, day(at)),
            expected,
            "kv {region} {at}"
        );
        assert_eq!(
            catalog.image_available_in(&ubuntu("202510.12.0"), region, day(at)),
            expected,
            "niv {region} {at}"
        );
    }
    assert!(!catalog.kubernetes_available_in(v("1.31.3"), "x", day(11)));
    assert!(!catalog.image_available_in(&ubuntu("202510.13.0"), "x", day(11)));
}

#[test]
fn custom_allows_one_version_per_family() {
    let selected = custom_images([
        format!("{UBUNTU}-202510.12.0"),
        format!("{AZL}-202511.1.0"),
        format!("{UBUNTU}-202510.12.0"),
    ])
    .expect("valid");
    assert_eq!(
        selected,
        BTreeMap::from([
            (UBUNTU.to_string(), ubuntu("202510.12.0")),
            (AZL.to_string(), img(&format!("{AZL}-202511.1.0"))),
        ])
    );
    assert_eq!(custom_images(Vec::<String>::new()), Ok(BTreeMap::new()));
}

#[test]
fn custom_rejects_two_versions_of_a_family_and_bad_names() {
    let first = format!("{UBUNTU}-202510.12.0");
    let second = format!("{UBUNTU}-202510.17.0");
    assert_eq!(
        custom_images([first.as_str(), second.as_str()]),
        Err(CustomImagesError::SameFamily {
            family: UBUNTU.to_string(),
            first: first.clone(),
            second: second.clone(),
        })
    );
    assert_eq!(
        custom_images([first.as_str(), "202510.12.0"]),
        Err(CustomImagesError::Parse(NodeImageError::Name(
            "202510.12.0".into()
        )))
    );
}

#[test]
fn unparseable_catalog_versions_are_never_chosen() {
    let images = [
        image(UBUNTU, "202510.12.0", &[("x", 1)]),
        image(UBUNTU, "999999-beta", &[("x", 1)]),
    ];
    let catalog = Catalog::new(&[], &images);
    assert_eq!(
        catalog.latest_image(UBUNTU, "x", day(2)),
        Some(ubuntu("202510.12.0"))
    );
}
