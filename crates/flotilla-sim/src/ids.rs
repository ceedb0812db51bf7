//! Stable made-up identifiers (container IDs, image digests, machine IDs) derived from names,
//! so the same simulated object always reports the same IDs.

/// 32-bit FNV-1a.
pub fn fnv1a32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

/// 64-bit FNV-1a.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// `len` lowercase hex digits derived from `seed`.
pub fn hex_digest(seed: &str, len: usize) -> String {
    let mut out = String::with_capacity(len + 16);
    let mut round = 0u64;
    while out.len() < len {
        let h = fnv1a64(format!("{round}/{seed}").as_bytes());
        out.push_str(&format!("{h:016x}"));
        round += 1;
    }
    out.truncate(len);
    out
}

/// A UUID-shaped identifier derived from `seed` (`8-4-4-4-12` hex digits).
pub fn uuid_like(seed: &str) -> String {
    let h = hex_digest(seed, 32);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_matches_reference_vectors() {
        assert_eq!(fnv1a32(b""), 0x811c9dc5);
        assert_eq!(fnv1a32(b"a"), 0xe40c292c);
        assert_eq!(fnv1a32(b"foobar"), 0xbf9cf968);
    }

    #[test]
    fn digests_are_stable_and_shaped() {
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        let d = hex_digest("pod/uid/app", 64);
        assert_eq!(d.len(), 64);
        assert!(
            d.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        assert_eq!(d, hex_digest("pod/uid/app", 64));
        assert_ne!(d, hex_digest("pod/uid/sidecar", 64));
        let u = uuid_like("node");
        assert_eq!(u.len(), 36);
        assert_eq!(u.matches('-').count(), 4);
    }
}
