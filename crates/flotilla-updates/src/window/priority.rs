//! A member's rank inside a group by its window, as AKS orders members: open now, opening
//! soon, no window, closed. [`crate::run::WindowFacts::priority`] applies it.

use jiff::SignedDuration;

/// How soon a closed window must open to count as opening soon (inclusive).
pub const OPENS_SOON: SignedDuration = SignedDuration::from_hours(4);

/// Where a member's window puts it in its group's order; members are taken in ascending order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WindowPriority {
    /// The window is open: the member can be updated now.
    OpenNow,
    /// The window opens within [`OPENS_SOON`].
    OpensSoon,
    /// The member has no window: it can be updated at any time.
    NoWindow,
    /// The window is closed and opens later than [`OPENS_SOON`], or never again.
    Closed,
}
