//! Durations as Go writes them (`1h`, `90m`, `10h5m`, `1.5h`, `30s`, `250ms`): parsed into a
//! `SignedDuration`, and written back in Go's canonical form (`1h0m0s`). KubeFleet task wait
//! times and Karpenter's durations (`consolidateAfter`, `expireAfter`, budget `duration`) share
//! this one parser.
//!
//! The accepted text is the non-negative subset of Go's `time.ParseDuration` that those APIs
//! use: one or more decimal numbers, each followed by `h`, `m`, `s` or `ms`.

use jiff::SignedDuration;

/// `text` as a duration, if it is a sequence of decimal numbers each followed by `h`, `m`,
/// `s` or `ms`.
pub fn parse(text: &str) -> Option<SignedDuration> {
    let mut rest = text;
    let mut total = 0f64;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let value: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let (unit, len) = if rest.starts_with("ms") {
            (0.001, 2)
        } else {
            match rest.chars().next()? {
                'h' => (3600.0, 1),
                'm' => (60.0, 1),
                's' => (1.0, 1),
                _ => return None,
            }
        };
        total += value * unit;
        rest = &rest[len..];
    }
    SignedDuration::try_from_secs_f64(total).ok()
}

/// `duration` as Go prints it: `1h0m0s`, `5m0s`, `30s`, `1.5s`.
pub fn format(duration: SignedDuration) -> String {
    let millis = duration.as_millis().max(0);
    let (hours, rest) = (millis / 3_600_000, millis % 3_600_000);
    let (minutes, rest) = (rest / 60_000, rest % 60_000);
    let seconds = if rest % 1000 == 0 {
        format!("{}s", rest / 1000)
    } else {
        let text = format!("{}.{:03}", rest / 1000, rest % 1000);
        format!("{}s", text.trim_end_matches('0'))
    };
    match (hours, minutes) {
        (0, 0) => seconds,
        (0, m) => format!("{m}m{seconds}"),
        (h, m) => format!("{h}h{m}m{seconds}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        for (text, secs, canonical) in [
            ("1h", 3600, "1h0m0s"),
            ("1h0m0s", 3600, "1h0m0s"),
            ("90m", 5400, "1h30m0s"),
            ("30s", 30, "30s"),
            ("5m", 300, "5m0s"),
            ("1.5h", 5400, "1h30m0s"),
            ("10h5m", 36_300, "10h5m0s"),
            ("168h", 604_800, "168h0m0s"),
            ("8h0m0s", 28_800, "8h0m0s"),
        ] {
            let parsed = parse(text).unwrap_or_else(|| panic!("{text} parses"));
            assert_eq!(parsed, SignedDuration::from_secs(secs), "{text}");
            assert_eq!(format(parsed), canonical, "{text}");
        }
        assert_eq!(format(SignedDuration::from_millis(1500)), "1.5s");
        for bad in ["", "1", "h", "1d", "1h2x", "-1h"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }
}
