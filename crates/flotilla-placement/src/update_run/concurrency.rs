//! How many clusters of a stage may update at once.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// The number of clusters of a stage of `stage_size` clusters that may be in flight at once:
/// `maxConcurrency` as a count, or as a percentage of the stage rounded down; at least 1, and
/// 1 when unset (KubeFleet's rules).
pub fn max_concurrency(value: Option<&IntOrString>, stage_size: usize) -> usize {
    let limit = match value {
        None => 1,
        Some(IntOrString::Int(count)) => usize::try_from(*count).unwrap_or(1),
        Some(IntOrString::String(text)) => match text.strip_suffix('%') {
            Some(percent) => percent
                .parse::<usize>()
                .map_or(1, |p| stage_size.saturating_mul(p) / 100),
            None => text.parse().unwrap_or(1),
        },
    };
    limit.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_percentages() {
        let int = |n| Some(IntOrString::Int(n));
        let text = |s: &str| Some(IntOrString::String(s.to_string()));
        let cases: [(Option<IntOrString>, usize, usize); 10] = [
            (None, 7, 1),
            (int(3), 7, 3),
            (int(10), 7, 10),
            (text("25%"), 7, 1),
            (text("25%"), 8, 2),
            (text("50%"), 7, 3),
            (text("100%"), 7, 7),
            (text("1%"), 7, 1),
            (text("25%"), 0, 1),
            (text("25%"), 1000, 250),
        ];
        for (value, size, want) in cases {
            assert_eq!(
                max_concurrency(value.as_ref(), size),
                want,
                "{value:?} of {size}"
            );
        }
    }
}
