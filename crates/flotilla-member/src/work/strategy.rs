//! A Work's apply strategy with KubeFleet's defaults filled in, so the decisions never see an
//! unset option.

use flotilla_api::placement::strategy::{
    ApplyStrategy, ApplyStrategyType, ComparisonOption, WhenToApply, WhenToTakeOver,
};

/// The apply strategy in force for a Work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Strategy {
    /// ClientSideApply (default), ServerSideApply or ReportDiff.
    pub type_: ApplyStrategyType,
    /// PartialComparison (default) or FullComparison.
    pub comparison: ComparisonOption,
    /// Always (default) or IfNotDrifted.
    pub when_to_apply: WhenToApply,
    /// Always (default), IfNoDiff or Never.
    pub when_to_take_over: WhenToTakeOver,
    /// Whether objects with non-fleet owners may be taken over and applied (default false).
    pub allow_co_ownership: bool,
    /// Whether server-side applies force through field-manager conflicts (default false).
    pub force_conflicts: bool,
}

impl Strategy {
    /// The strategy of a Work whose `spec.applyStrategy` is `strategy` (absent: all defaults).
    pub fn of(strategy: Option<&ApplyStrategy>) -> Strategy {
        let Some(s) = strategy else {
            return Strategy::default();
        };
        Strategy {
            type_: s.type_.unwrap_or_default(),
            comparison: s.comparison_option.unwrap_or_default(),
            when_to_apply: s.when_to_apply.unwrap_or_default(),
            when_to_take_over: s.when_to_take_over.unwrap_or_default(),
            allow_co_ownership: s.allow_co_ownership.unwrap_or(false),
            force_conflicts: s
                .server_side_apply_config
                .as_ref()
                .and_then(|config| config.force)
                .unwrap_or(false),
        }
    }

    /// Whether the Work only reports differences (ReportDiff).
    pub fn reports_diff_only(self) -> bool {
        self.type_ == ApplyStrategyType::ReportDiff
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_api::placement::strategy::ServerSideApplyConfig;

    #[test]
    fn fills_in_defaults() {
        let defaults = Strategy {
            type_: ApplyStrategyType::ClientSideApply,
            comparison: ComparisonOption::PartialComparison,
            when_to_apply: WhenToApply::Always,
            when_to_take_over: WhenToTakeOver::Always,
            allow_co_ownership: false,
            force_conflicts: false,
        };
        assert_eq!(Strategy::of(None), defaults);
        assert_eq!(Strategy::of(Some(&ApplyStrategy::default())), defaults);
        let set = ApplyStrategy {
            type_: Some(ApplyStrategyType::ServerSideApply),
            comparison_option: Some(ComparisonOption::FullComparison),
            when_to_apply: Some(WhenToApply::IfNotDrifted),
            when_to_take_over: Some(WhenToTakeOver::Never),
            allow_co_ownership: Some(true),
            server_side_apply_config: Some(ServerSideApplyConfig { force: Some(true) }),
        };
        let strategy = Strategy::of(Some(&set));
        assert_eq!(
            strategy,
            Strategy {
                type_: ApplyStrategyType::ServerSideApply,
                comparison: ComparisonOption::FullComparison,
                when_to_apply: WhenToApply::IfNotDrifted,
                when_to_take_over: WhenToTakeOver::Never,
                allow_co_ownership: true,
                force_conflicts: true,
            }
        );
        assert!(!strategy.reports_diff_only());
    }
}
