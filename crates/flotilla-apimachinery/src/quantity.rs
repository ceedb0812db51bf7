//! Kubernetes resource quantities (`100m`, `1.5`, `512Mi`, `1e3`): parsing into exact integer
//! milli-units, as `resource.Quantity.MilliValue()` does, and the two formats nodes report.

/// The exact value of a quantity in thousandths, rounded up (`250m` → 250, `1Gi` →
/// 1073741824000); `None` if the text is not a quantity or does not fit.
pub fn parse_milli(text: &str) -> Option<i128> {
    let text = text.trim();
    let (negative, body) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let number_len = body
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(body.len());
    let (number, suffix) = body.split_at(number_len);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
        return None;
    }
    let digits = format!("{whole}{fraction}");
    if digits.len() > 30 {
        return None;
    }
    let mantissa: i128 = if digits.is_empty() {
        0
    } else {
        digits.parse().ok()?
    };
    // value = mantissa · 10^(-fraction digits) · scale, in thousandths.
    let (binary_power, decimal_power) = suffix_scale(suffix)?;
    let mut numerator = mantissa.checked_mul(1000)?;
    numerator = numerator.checked_mul(1i128.checked_shl(binary_power)?)?;
    let mut denominator: i128 = 1;
    let decimal_power = decimal_power - i32::try_from(fraction.len()).ok()?;
    if decimal_power >= 0 {
        numerator = numerator.checked_mul(10i128.checked_pow(decimal_power.unsigned_abs())?)?;
    } else {
        denominator = 10i128.checked_pow(decimal_power.unsigned_abs())?;
    }
    let value =
        numerator.div_euclid(denominator) + i128::from(numerator.rem_euclid(denominator) != 0);
    Some(if negative { -value } else { value })
}

/// A suffix's scale as (power of two, power of ten); `None` for an unknown suffix.
fn suffix_scale(suffix: &str) -> Option<(u32, i32)> {
    let binary = |p| Some((p, 0));
    let decimal = |p| Some((0, p));
    match suffix {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        _ => {
            let exponent = suffix.strip_prefix(['e', 'E'])?;
            let power: i32 = exponent.parse().ok()?;
            (-30..=30).contains(&power).then_some((0, power))
        }
    }
}

/// The whole-unit value of a quantity, rounded up (`Value()`): bytes for memory.
pub fn parse_units(text: &str) -> Option<i128> {
    parse_milli(text).map(|m| m.div_euclid(1000) + i128::from(m.rem_euclid(1000) != 0))
}

/// CPU as a node reports it: whole cores (`4`) or millicores (`3920m`).
pub fn format_cpu(millicores: u64) -> String {
    if millicores.is_multiple_of(1000) {
        (millicores / 1000).to_string()
    } else {
        format!("{millicores}m")
    }
}

/// A memory amount in canonical form: the largest binary suffix that divides it exactly
/// (`16Gi`, `15872Mi`, `123Ki`), else plain bytes, for cluster totals people read.
pub fn format_memory(bytes: u64) -> String {
    for (suffix, shift) in [
        ("Ei", 60),
        ("Pi", 50),
        ("Ti", 40),
        ("Gi", 30),
        ("Mi", 20),
        ("Ki", 10),
    ] {
        let unit = 1u64 << shift;
        if bytes != 0 && bytes.is_multiple_of(unit) {
            return format!("{}{suffix}", bytes / unit);
        }
    }
    bytes.to_string()
}

/// Memory as a node reports it, in kibibytes (`16393244Ki`).
pub fn format_kibibytes(bytes: u64) -> String {
    format!("{}Ki", bytes / 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_formats_with_the_largest_exact_suffix() {
        assert_eq!(format_memory(16 << 30), "16Gi");
        assert_eq!(format_memory((16 << 30) - (512 << 20)), "15872Mi");
        assert_eq!(format_memory(1000), "1000");
        assert_eq!(format_memory(0), "0");
    }

    proptest::proptest! {
        #[test]
        fn canonical_forms_parse_back(millis in 0u64..10_000_000, bytes in 0u64..(1 << 50)) {
            proptest::prop_assert_eq!(parse_milli(&format_cpu(millis)), Some(i128::from(millis)));
            proptest::prop_assert_eq!(parse_units(&format_memory(bytes)), Some(i128::from(bytes)));
        }
    }

    #[test]
    fn parses_like_kubernetes() {
        let cases: &[(&str, Option<i128>)] = &[
            ("100m", Some(100)),
            ("1", Some(1000)),
            ("0.5", Some(500)),
            (".5", Some(500)),
            ("1.5", Some(1500)),
            ("2k", Some(2_000_000)),
            ("1Ki", Some(1_024_000)),
            ("512Mi", Some(536_870_912_000)),
            ("1Gi", Some(1_073_741_824_000)),
            ("1e3", Some(1_000_000)),
            ("1E-3", Some(1)),
            ("1n", Some(1)),
            ("0.1m", Some(1)),
            ("-1", Some(-1000)),
            ("+2", Some(2000)),
            ("0", Some(0)),
            ("", None),
            ("m", None),
            ("1.2.3", None),
            ("12Q", None),
            ("1e99", None),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_milli(text), *expected, "{text:?}");
        }
        assert_eq!(parse_units("1.5"), Some(2));
        assert_eq!(parse_units("128974848"), Some(128_974_848));
        assert_eq!(parse_units("129e6"), Some(129_000_000));
    }

    #[test]
    fn formats_as_nodes_report() {
        assert_eq!(format_cpu(4000), "4");
        assert_eq!(format_cpu(3920), "3920m");
        assert_eq!(format_kibibytes(16 << 30), "16777216Ki");
    }

    proptest::proptest! {
        #[test]
        fn millicores_round_trip(m in 0u64..10_000_000) {
            proptest::prop_assert_eq!(parse_milli(&format_cpu(m)), Some(i128::from(m)));
        }

        #[test]
        fn kibibytes_round_trip(k in 0u64..1u64 << 40) {
            proptest::prop_assert_eq!(parse_units(&format_kibibytes(k * 1024)), Some(i128::from(k) * 1024));
        }
    }
}
