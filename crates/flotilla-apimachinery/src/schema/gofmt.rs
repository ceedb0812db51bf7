//! Go's text rendering of numbers, strings and JSON, so messages and table cells read
//! byte-for-byte as kube-apiserver writes them (`%v`, `%q`, `encoding/json`).

use serde_json::Value;

/// Shortest round-trip decimal digits of `|f|` and the decimal point position
/// (`0.0123` → `("123", -1)`), as strconv's shortest mode computes them.
fn shortest_digits(f: f64) -> (Vec<u8>, i32) {
    let text = format!("{:e}", f.abs());
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
    (digits, exp.parse::<i32>().unwrap_or(0) + 1)
}

/// `strconv.FormatFloat(f, 'e', -1, 64)`: `1.5e+06`.
fn exponent_form(neg: bool, digits: &[u8], dp: i32) -> String {
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    out.push(digits[0] as char);
    if digits.len() > 1 {
        out.push('.');
        out.extend(digits[1..].iter().map(|d| *d as char));
    }
    let exp = dp - 1;
    out.push('e');
    out.push(if exp < 0 { '-' } else { '+' });
    out.push_str(&format!("{:02}", exp.unsigned_abs()));
    out
}

/// `strconv.FormatFloat(f, 'f', -1, 64)`: plain decimal with the shortest digits.
fn fixed_form(neg: bool, digits: &[u8], dp: i32) -> String {
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    let digits: String = digits.iter().map(|d| *d as char).collect();
    if dp <= 0 {
        out.push_str("0.");
        out.push_str(&"0".repeat(dp.unsigned_abs() as usize));
        out.push_str(&digits);
    } else if dp as usize >= digits.len() {
        out.push_str(&digits);
        out.push_str(&"0".repeat(dp as usize - digits.len()));
    } else {
        out.push_str(&digits[..dp as usize]);
        out.push('.');
        out.push_str(&digits[dp as usize..]);
    }
    out
}

/// Go's `%v` of a float64 (`strconv` `'g'`, shortest): `100`, `0.5`, `1e+06`, `1.5e-05`.
pub(crate) fn format_float_v(f: f64) -> String {
    if !f.is_finite() {
        return if f.is_nan() {
            "NaN".into()
        } else if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    let neg = f.is_sign_negative();
    if f == 0.0 {
        return if neg { "-0".into() } else { "0".into() };
    }
    let (digits, dp) = shortest_digits(f);
    let exp = dp - 1;
    if !(-4..6).contains(&exp) {
        exponent_form(neg, &digits, dp)
    } else {
        fixed_form(neg, &digits, dp)
    }
}

/// `encoding/json`'s float64 encoding: plain decimal, exponent form only below 1e-6 or from 1e21
/// (`1e-07`, `1e+21`).
pub(crate) fn format_float_json(f: f64) -> String {
    let neg = f.is_sign_negative();
    if f == 0.0 || !f.is_finite() {
        return if neg && f == 0.0 {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let (digits, dp) = shortest_digits(f);
    let abs = f.abs();
    if !(1e-6..1e21).contains(&abs) {
        let mut s = exponent_form(neg, &digits, dp);
        // Go trims `e-07` to `e-7`.
        let n = s.len();
        if s.as_bytes()[n - 4] == b'e' && s.as_bytes()[n - 3] == b'-' && s.as_bytes()[n - 2] == b'0'
        {
            s.remove(n - 2);
        }
        s
    } else {
        fixed_form(neg, &digits, dp)
    }
}

/// Go's `strconv.Quote` / `%q`: double-quoted with Go escapes.
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() || (c.is_whitespace() && c != ' ') => {
                if (c as u32) <= 0xffff {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `json.Marshal` of a decoded JSON value: compact, object keys sorted, HTML characters escaped,
/// numbers as Go prints them.
pub(crate) fn go_json(v: &Value) -> String {
    let mut out = String::new();
    write_json(v, &mut out);
    out
}

fn write_json(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => out.push_str(&i.to_string()),
            (None, Some(u)) => out.push_str(&format_float_json(u as f64)),
            _ => out.push_str(&format_float_json(n.as_f64().unwrap_or(0.0))),
        },
        Value::String(s) => write_json_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(k, out);
                out.push(':');
                write_json(&map[k], out);
            }
            out.push('}');
        }
    }
}

fn write_json_string(s: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c if (c as u32) < 0x20 || matches!(c, '<' | '>' | '&') => {
                let b = c as u32 as usize;
                out.push_str("\\u00");
                out.push(HEX[b >> 4] as char);
                out.push(HEX[b & 0xf] as char);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_print_like_go() {
        let v = [
            (100.0, "100"),
            (0.5, "0.5"),
            (1e6, "1e+06"),
            (123456.0, "123456"),
            (1234567.0, "1.234567e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5, "-2.5"),
            (0.0, "0"),
        ];
        for (f, want) in v {
            assert_eq!(format_float_v(f), want, "{f}");
        }
        let j = [
            (5.0, "5"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (1e-7, "1e-7"),
            (0.25, "0.25"),
        ];
        for (f, want) in j {
            assert_eq!(format_float_json(f), want, "{f}");
        }
    }

    #[test]
    fn quotes_and_json_like_go() {
        assert_eq!(go_quote("a\"b\\c\n\u{1}"), "\"a\\\"b\\\\c\\n\\x01\"");
        assert_eq!(
            go_json(&json!({"b": [1, 2.5, true], "a": "<x>&"})),
            r#"{"a":"\u003cx\u003e\u0026","b":[1,2.5,true]}"#
        );
    }
}
