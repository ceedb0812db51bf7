//! Node image names and versions: parsing and numeric order.

use crate::release::{ImageVersion, NodeImage, NodeImageError};

#[test]
fn splits_family_and_version_at_the_last_dash() {
    let cases = [
        (
            "AKSUbuntu-2204gen2containerd-202510.13.0",
            "AKSUbuntu-2204gen2containerd",
            "202510.13.0",
        ),
        (
            "AKSAzureLinux-V2gen2-202509.2.0",
            "AKSAzureLinux-V2gen2",
            "202509.2.0",
        ),
        ("Windows2022-20348.4171", "Windows2022", "20348.4171"),
        ("x-1", "x", "1"),
    ];
    for (full, family, version) in cases {
        let image = NodeImage::parse(full).expect(full);
        assert_eq!(image.family, family, "{full}");
        assert_eq!(image.version.to_string(), version, "{full}");
        assert_eq!(image.to_string(), full, "round trip");
    }
}

#[test]
fn rejects_bad_names() {
    let cases = [
        ("202510.13.0", NodeImageError::Name("202510.13.0".into())),
        ("-202510.13.0", NodeImageError::Name("-202510.13.0".into())),
        ("AKSUbuntu-", NodeImageError::Version("".into())),
        (
            "AKSUbuntu-2204gen2containerd",
            NodeImageError::Version("2204gen2containerd".into()),
        ),
        (
            "AKSUbuntu-202510.13.0-rc1",
            NodeImageError::Version("rc1".into()),
        ),
        (
            "AKSUbuntu-202510..0",
            NodeImageError::Version("202510..0".into()),
        ),
    ];
    for (full, error) in cases {
        assert_eq!(NodeImage::parse(full), Err(error), "{full:?}");
    }
}

#[test]
fn versions_compare_part_by_part() {
    let iv = |text| ImageVersion::parse(text).expect(text);
    let ordered = [
        "2",
        "10",
        "202509.2.0",
        "202509.10.0",
        "202510.2.0",
        "202510.13.0",
        "202510.13.0.1",
    ];
    for pair in ordered.windows(2) {
        assert!(iv(pair[0]) < iv(pair[1]), "{} < {}", pair[0], pair[1]);
    }
    // Equal numbers written differently are distinct but adjacent.
    assert!(iv("1.2") != iv("1.02"));
    assert!(iv("1.02") < iv("1.3") && iv("1.2") < iv("1.3"));
}

#[test]
fn images_of_one_family_order_by_version() {
    let a = NodeImage::parse("AKSUbuntu-2204-202509.2.0").expect("a");
    let b = NodeImage::parse("AKSUbuntu-2204-202510.13.0").expect("b");
    assert!(a < b);
}
