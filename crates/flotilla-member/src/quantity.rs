//! Kubernetes quantities (`3920m`, `16374584Ki`, `1e3`) as numbers and back, for summing node
//! capacities into cluster properties.

/// The value of a quantity in base units (cores, bytes, counts), or `None` if `s` is not a
/// Kubernetes quantity.
pub fn parse(s: &str) -> Option<f64> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(split);
    let value: f64 = number.parse().ok()?;
    let scale = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        exp if exp.starts_with(['e', 'E']) => 10f64.powi(exp[1..].parse().ok()?),
        _ => return None,
    };
    Some(value * scale)
}

/// Millicores of a CPU quantity, rounded up as Kubernetes does (`MilliValue`).
pub fn cpu_millis(s: &str) -> Option<i64> {
    parse(s).map(|cores| (cores * 1000.0 - 1e-9).ceil() as i64)
}

/// Bytes of a memory quantity, rounded up.
pub fn bytes(s: &str) -> Option<i64> {
    parse(s).map(|b| (b - 1e-9).ceil() as i64)
}

/// A CPU amount in canonical form: whole cores (`4`) or millicores (`3920m`).
pub fn format_cpu(millis: i64) -> String {
    if millis % 1000 == 0 {
        (millis / 1000).to_string()
    } else {
        format!("{millis}m")
    }
}

/// A memory amount in canonical form: the largest binary suffix that divides it exactly
/// (`16Gi`, `15858Mi`, `123Ki`), else plain bytes.
pub fn format_memory(bytes: i64) -> String {
    for (suffix, unit) in [
        ("Ei", 60),
        ("Pi", 50),
        ("Ti", 40),
        ("Gi", 30),
        ("Mi", 20),
        ("Ki", 10),
    ] {
        let unit = 1i64 << unit;
        if bytes != 0 && bytes % unit == 0 {
            return format!("{}{suffix}", bytes / unit);
        }
    }
    bytes.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_every_suffix() {
        let cases = [
            ("4", 4.0),
            ("3920m", 3.92),
            ("16Gi", 17_179_869_184.0),
            ("16374584Ki", 16_767_574_016.0),
            ("1e3", 1000.0),
            ("1E-3", 0.001),
            ("0.5", 0.5),
            ("2k", 2000.0),
            ("100M", 1e8),
        ];
        for (s, want) in cases {
            let got = parse(s).unwrap();
            assert!(
                (got - want).abs() <= want.abs() * 1e-12,
                "{s}: {got} != {want}"
            );
        }
        for bad in ["", "abc", "4x", "Gi", "1.2.3"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        assert_eq!(cpu_millis("3920m"), Some(3920));
        assert_eq!(cpu_millis("0.0015"), Some(2));
        assert_eq!(bytes("1Ki"), Some(1024));
    }

    #[test]
    fn formats_canonically() {
        assert_eq!(format_cpu(4000), "4");
        assert_eq!(format_cpu(3920), "3920m");
        assert_eq!(format_memory(16 << 30), "16Gi");
        assert_eq!(format_memory((16 << 30) - (512 << 20)), "15872Mi");
        assert_eq!(format_memory(1000), "1000");
        assert_eq!(format_memory(0), "0");
    }

    proptest! {
        #[test]
        fn formatting_round_trips(millis in 0i64..10_000_000, bytes_in in 0i64..(1 << 50)) {
            prop_assert_eq!(cpu_millis(&format_cpu(millis)), Some(millis));
            prop_assert_eq!(bytes(&format_memory(bytes_in)), Some(bytes_in));
        }
    }
}
