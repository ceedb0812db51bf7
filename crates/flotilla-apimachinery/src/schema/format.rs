//! String formats of kube-openapi's format registry that Flotilla checks (`date-time`, `date`,
//! `duration`), with the registry's exact acceptance rules. Other formats are not checked, as
//! kube ignores formats it does not know.

/// Whether `value` conforms to `format`; `None` when the format is not checked.
pub(super) fn conforms(format: &str, value: &str) -> Option<bool> {
    let normalized: String = format
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect();
    match normalized.as_str() {
        "datetime" => Some(is_date_time(value)),
        "date" => Some(is_date(value)),
        "duration" => Some(is_duration(value)),
        _ => None,
    }
}

/// `strfmt.IsDate`: Go's `time.Parse("2006-01-02", s)`.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i32> {
        let part = &s[r];
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())
            .flatten()
    };
    match (num(0..4), num(5..7), num(8..10)) {
        (Some(y), Some(m), Some(d)) => {
            i16::try_from(y).is_ok_and(|y| jiff::civil::Date::new(y, m as i8, d as i8).is_ok())
        }
        _ => false,
    }
}

/// `strfmt.IsDateTime`: a date, `t`, then `hh:mm:ss(.frac)?(z|±hh:mm)`, case-insensitive.
fn is_date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let parts: Vec<&str> = lower.split('t').collect();
    if parts.len() < 2 || !is_date(parts[0]) {
        return false;
    }
    let t = parts[1].as_bytes();
    let two = |i: usize| t.len() >= i + 2 && t[i].is_ascii_digit() && t[i + 1].is_ascii_digit();
    if !(two(0) && t.get(2) == Some(&b':') && two(3) && t.get(5) == Some(&b':') && two(6)) {
        return false;
    }
    let mut i = 8;
    // `(.[0-9]+)?`: any one character then digits.
    if t.len() > i + 1 && t[i + 1].is_ascii_digit() && t[i] != b'z' && t[i] != b'+' && t[i] != b'-'
    {
        i += 2;
        while i < t.len() && t[i].is_ascii_digit() {
            i += 1;
        }
    }
    let zone = &t[i.min(t.len())..];
    let zone_ok = zone == b"z"
        || (zone.len() == 6
            && (zone[0] == b'+' || zone[0] == b'-')
            && zone[1].is_ascii_digit()
            && zone[2].is_ascii_digit()
            && zone[3] == b':'
            && zone[4].is_ascii_digit()
            && zone[5].is_ascii_digit());
    zone_ok && &parts[1][0..2] <= "23" && &parts[1][3..5] <= "59" && &parts[1][6..8] <= "59"
}

/// `strfmt.ParseDuration`: Go's `time.ParseDuration`, or the registry's looser `3 days` syntax.
fn is_duration(s: &str) -> bool {
    go_duration(s) || loose_duration(s)
}

/// Go's `time.ParseDuration` grammar: `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`, or `0`.
fn go_duration(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    if s == "0" {
        return true;
    }
    if s.is_empty() {
        return false;
    }
    let b = s.as_bytes();
    let mut i = 0;
    let mut total = 0f64;
    while i < b.len() {
        if !(b[i] == b'.' || b[i].is_ascii_digit()) {
            return false;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let pre = i > start;
        let mut post = false;
        if i < b.len() && b[i] == b'.' {
            i += 1;
            let frac = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            post = i > frac;
        }
        if !pre && !post {
            return false;
        }
        let number: f64 = s[start..i].parse().unwrap_or(0.0);
        let unit_start = i;
        while i < b.len() && b[i] != b'.' && !b[i].is_ascii_digit() {
            i += 1;
        }
        let nanos = match &s[unit_start..i] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return false,
        };
        total += number * nanos;
        if total > i64::MAX as f64 {
            return false;
        }
    }
    true
}

/// The registry's fallback: `^\s*(?:\d+\s*[A-Za-zµ]+\s*)+$`, with at least one known unit.
fn loose_duration(s: &str) -> bool {
    const UNITS: &[&[&str]] = &[
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    let is_space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\r' | '\u{b}' | '\u{c}');
    let is_letter = |c: char| c.is_ascii_alphabetic() || c == 'µ';
    let mut rest = s.trim_start_matches(is_space);
    let mut known = false;
    let mut any = false;
    while !rest.is_empty() {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return false;
        }
        rest = rest[digits..].trim_start_matches(is_space);
        let letters = rest.len() - rest.trim_start_matches(is_letter).len();
        if letters == 0 {
            return false;
        }
        let unit = rest[..letters].to_lowercase();
        rest = rest[letters..].trim_start_matches(is_space);
        any = true;
        known |= UNITS.iter().any(|variants| {
            variants
                .iter()
                .enumerate()
                .any(|(i, v)| (i == variants.len() - 1 && unit.starts_with(v)) || unit == *v)
        });
    }
    any && known
}

#[cfg(test)]
mod tests {
    use super::conforms;

    #[test]
    fn formats_follow_kube_openapi() {
        let cases = [
            ("date-time", "2024-02-29T10:20:30Z", true),
            ("date-time", "2024-02-29t10:20:30.123+02:00", true),
            ("date-time", "2023-02-29T10:20:30Z", false),
            ("date-time", "2024-01-01T24:00:00Z", false),
            ("date-time", "2024-01-01T10:00:00", false),
            ("date-time", "", false),
            ("date", "2024-12-31", true),
            ("date", "2024-13-01", false),
            ("duration", "1h30m", true),
            ("duration", "1.5h", true),
            ("duration", "-5s", true),
            ("duration", "0", true),
            ("duration", "3 days", true),
            ("duration", "2w", true),
            ("duration", "5 parsecs", false),
            ("duration", "h", false),
            ("duration", "", false),
        ];
        for (format, value, ok) in cases {
            assert_eq!(conforms(format, value), Some(ok), "{format} {value}");
        }
        assert_eq!(conforms("uuid", "x"), None);
    }
}
