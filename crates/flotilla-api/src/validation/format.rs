//! Kubernetes name and value formats (`k8s.io/apimachinery/pkg/util/validation`) and
//! quantities, as predicates over strings.

use std::sync::LazyLock;

use regex::Regex;

fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("valid built-in pattern")
}

/// The pattern of a DNS-1123 subdomain (without its length limit).
pub(crate) const DNS1123_SUBDOMAIN_PATTERN: &str =
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
/// The pattern of a qualified name's name part and of a label value (without the length limit).
pub(crate) const QUALIFIED_NAME_PART_PATTERN: &str = "^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$";
/// The pattern of a Kubernetes quantity.
pub(crate) const QUANTITY_PATTERN: &str =
    r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$";

static DNS1123_SUBDOMAIN: LazyLock<Regex> = LazyLock::new(|| regex(DNS1123_SUBDOMAIN_PATTERN));
static DNS1035_LABEL: LazyLock<Regex> = LazyLock::new(|| regex("^[a-z]([-a-z0-9]*[a-z0-9])?$"));
static QUALIFIED_NAME_PART: LazyLock<Regex> = LazyLock::new(|| regex(QUALIFIED_NAME_PART_PATTERN));
static QUANTITY: LazyLock<Regex> = LazyLock::new(|| regex(QUANTITY_PATTERN));

/// A DNS-1123 subdomain: dot-separated labels of lowercase alphanumerics and `-`, at most
/// 253 characters.
pub(crate) fn is_dns1123_subdomain(s: &str) -> bool {
    s.len() <= 253 && DNS1123_SUBDOMAIN.is_match(s)
}

/// A DNS-1123 label: lowercase alphanumerics and `-`, starting and ending alphanumeric, at
/// most 63 characters.
pub(crate) fn is_dns1123_label(s: &str) -> bool {
    s.len() <= 63 && !s.contains('.') && DNS1123_SUBDOMAIN.is_match(s)
}

/// A DNS-1035 label: a DNS-1123 label that starts with a letter.
pub(crate) fn is_dns1035_label(s: &str) -> bool {
    s.len() <= 63 && DNS1035_LABEL.is_match(s)
}

/// A qualified name (label key): an optional DNS-subdomain prefix and `/`, then a name of at
/// most 63 alphanumerics, `-`, `_` and `.`, starting and ending alphanumeric.
pub(crate) fn is_qualified_name(s: &str) -> bool {
    let (prefix, name) = match s.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, s),
    };
    prefix.is_none_or(|p| !p.is_empty() && is_dns1123_subdomain(p))
        && name.len() <= 63
        && QUALIFIED_NAME_PART.is_match(name)
}

/// A label value: empty, or at most 63 characters shaped like a qualified name part.
pub(crate) fn is_label_value(s: &str) -> bool {
    s.is_empty() || (s.len() <= 63 && QUALIFIED_NAME_PART.is_match(s))
}

/// A Kubernetes quantity: `5`, `1.5`, `100m`, `2Gi`, `1e3`.
pub(crate) fn is_quantity(s: &str) -> bool {
    QUANTITY.is_match(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert!(is_qualified_name("kubernetes-fleet.io/node-count"));
        assert!(is_qualified_name("env"));
        assert!(!is_qualified_name("/env"));
        assert!(!is_qualified_name("a/b/c"));
        assert!(!is_qualified_name("-env"));
        assert!(is_label_value(""));
        assert!(is_label_value("prod_1"));
        assert!(!is_label_value("a b"));
        assert!(is_dns1123_subdomain("member-1.east"));
        assert!(!is_dns1123_subdomain("Member"));
        assert!(is_dns1035_label("widgets"));
        assert!(!is_dns1035_label("1widgets"));
        for ok in ["5", "0", "1.5", "-2", "100m", "2Gi", "1e3", ".5", "12k"] {
            assert!(is_quantity(ok), "{ok}");
        }
        for bad in ["", "abc", "5 Gi", "1.2.3", "5gi", "Gi"] {
            assert!(!is_quantity(bad), "{bad}");
        }
    }
}
