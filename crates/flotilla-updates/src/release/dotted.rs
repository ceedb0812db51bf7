//! Dot-separated decimal numbers, the shape of Kubernetes and node image versions.

/// The numbers of `s` split on `.`; `None` unless every part is a non-empty run of ASCII
/// digits that fits a `u64` (so no signs, spaces or empty parts).
pub(super) fn parse_dotted(s: &str) -> Option<Vec<u64>> {
    s.split('.')
        .map(|part| {
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            part.parse().ok()
        })
        .collect()
}
