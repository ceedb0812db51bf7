//! Names of the objects a run creates, derived from the run so that every pass (and a
//! restarted controller) finds the ones it made.

use flotilla_api::updates::gate::Timing;

/// The `MemberUpgrade` a run creates for a member on attempt `attempt`: the run's name, with
/// `-retry<N>` on reruns so a retried member gets a fresh upgrade.
pub fn upgrade_name(run: &str, attempt: u32) -> String {
    match attempt {
        0 => run.to_string(),
        n => format!("{run}-retry{n}"),
    }
}

/// The `Gate` for the `index`-th of `count` gates of one timing on a stage or group:
/// `<run>.<stage>[.<group>].before|after[-<index>]`.
pub fn gate_name(
    run: &str,
    stage: &str,
    group: Option<&str>,
    timing: Timing,
    index: usize,
    count: usize,
) -> String {
    let timing = match timing {
        Timing::Before => "before",
        Timing::After => "after",
    };
    let place = group.map_or_else(|| stage.to_string(), |g| format!("{stage}.{g}"));
    match count {
        0 | 1 => format!("{run}.{place}.{timing}"),
        _ => format!("{run}.{place}.{timing}-{index}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_say_where_they_belong() {
        assert_eq!(upgrade_name("r", 0), "r");
        assert_eq!(upgrade_name("r", 2), "r-retry2");
        assert_eq!(
            gate_name("r", "s", None, Timing::Before, 0, 1),
            "r.s.before"
        );
        assert_eq!(
            gate_name("r", "s", Some("g"), Timing::After, 1, 2),
            "r.s.g.after-1"
        );
    }
}
