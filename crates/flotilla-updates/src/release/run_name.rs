//! Names of generated runs: derived from the upgrade, so generating again for the same
//! versions finds the same run.

use flotilla_api::updates::Channel;

/// Longest generated name: AKS's limit for run names (1–50 characters of `[a-z0-9-]`,
/// alphanumeric at both ends), which is also a valid DNS-1123 subdomain.
const MAX_NAME: usize = 50;

/// Hex digits of the hash suffix.
const HASH_DIGITS: usize = 8;

/// The name of the run a profile generates for `versions` on `channel`: the profile name, `-`,
/// and 8 hex digits hashing the profile name, the channel and the sorted, deduplicated
/// versions. Characters outside `[a-z0-9-]` in the profile name become `-`, and the profile
/// part is cut so the name stays within 50 characters and matches the run name pattern.
pub fn generated_run_name(profile: &str, channel: Channel, versions: &[String]) -> String {
    let mut sorted: Vec<&str> = versions.iter().map(String::as_str).collect();
    sorted.sort_unstable();
    sorted.dedup();
    let mut hashed = format!("{profile}\n{}", channel_name(channel));
    for version in sorted {
        hashed.push('\n');
        hashed.push_str(version);
    }
    let hash = fnv1a64(hashed.as_bytes());
    let suffix = format!(
        "{:0width$x}",
        (hash ^ (hash >> 32)) as u32,
        width = HASH_DIGITS
    );

    let prefix: String = profile
        .chars()
        .map(|c| c.to_ascii_lowercase())
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                c
            } else {
                '-'
            }
        })
        .take(MAX_NAME - HASH_DIGITS - 1)
        .collect();
    let prefix = prefix.trim_matches('-');
    if prefix.is_empty() {
        suffix
    } else {
        format!("{prefix}-{suffix}")
    }
}

/// The channel as the API spells it, fixed here so names do not depend on `Debug`.
fn channel_name(channel: Channel) -> &'static str {
    match channel {
        Channel::Stable => "Stable",
        Channel::Rapid => "Rapid",
        Channel::NodeImage => "NodeImage",
        Channel::TargetKubernetesVersion => "TargetKubernetesVersion",
    }
}

/// 64-bit FNV-1a: small, stable across builds and platforms.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
