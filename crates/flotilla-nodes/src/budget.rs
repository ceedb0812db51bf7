//! Disruption budgets with Karpenter's arithmetic (`reference/karpenter.md` §3): how many more
//! of a pool's nodes may be disrupted now, for each reason (Underutilized, Empty, Drifted),
//! and which budget says so.
//!
//! A budget without a schedule is always active; a scheduled one is active for `duration`
//! after each time its cron schedule (UTC) fires. An active budget allows a count of nodes or
//! a percentage of the pool's nodes rounded up; an inactive one allows any number. For each
//! reason the smallest limit of the budgets that cover it wins, less the nodes already being
//! disrupted. Budgets only ever restrict: a budget of `"0"` without a schedule blocks the pool
//! at all times, whatever windows the other budgets open. One invalid budget closes the whole
//! pool (every reason allows 0) until it is fixed, and the status says which and why.

mod error;
mod limit;
mod pool;
mod window;

pub use error::BudgetError;
pub use limit::{Limit, budget_limit};
pub use pool::{Basis, PoolAllowances, PoolCounts, ReasonAllowance, allowed_disruptions};
pub use window::budget_active;
