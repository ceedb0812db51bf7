//! Leader election for the hub's controllers through a `coordination.k8s.io/v1` Lease
//! (`fleet-system/flotilla-controllers`), so that with several hub replicas over one store (or
//! several `flotilla controllers` against one API server) exactly one runs them.
//!
//! - [`decide`](decide::decide): the pure decision (create, take over, renew, wait), with
//!   table tests and a model-based property test;
//! - [`Election`]: the shell that reads and compare-and-swaps the Lease and runs the
//!   controllers for as long as it leads, each term on a runtime of its own ([`Term`]);
//! - [`LeaderArgs`]: the `--lease-duration`, `--renew-deadline` and `--retry-period` flags.

mod config;
mod decide;
mod elect;
mod lease;
mod term;

use std::sync::Arc;
use std::time::Duration;

use clap::Args;

pub use config::{ConfigError, LeaseConfig, parse_duration};
pub use elect::Election;
pub use term::Term;

/// The namespace of the controllers' lease.
pub const LEASE_NAMESPACE: &str = "fleet-system";

/// The name of the controllers' lease.
pub const LEASE_NAME: &str = "flotilla-controllers";

/// Leader election flags (kube's defaults).
#[derive(Debug, Clone, Args)]
pub struct LeaderArgs {
    /// How long the controllers' lease lasts without renewal before another replica may take
    /// it over (whole seconds; e.g. `15`, `15s`).
    #[arg(long, default_value = "15s", value_parser = parse_duration)]
    pub lease_duration: Duration,
    /// How long the leader keeps running its controllers without a successful renewal;
    /// shorter than the lease duration (e.g. `10s`, `1500ms`).
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub renew_deadline: Duration,
    /// How often candidates try to acquire the lease and the leader renews it.
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    pub retry_period: Duration,
}

impl LeaderArgs {
    /// The validated configuration.
    pub fn config(&self) -> Result<LeaseConfig, ConfigError> {
        LeaseConfig::new(self.lease_duration, self.renew_deadline, self.retry_period)
    }
}

/// A candidacy for the controllers' lease through `client`, on the system clock, with a
/// fresh [`identity`].
pub fn controllers_election(client: kube::Client, config: LeaseConfig) -> Election {
    Election::new(
        client,
        LEASE_NAMESPACE,
        LEASE_NAME,
        identity(),
        config,
        Arc::new(flotilla_apiserver::SystemClock),
    )
}

/// This replica's identity: the host name and a random suffix (two replicas on one host
/// differ, and a restarted replica is a new candidate).
pub fn identity() -> String {
    let host = hostname::get()
        .ok()
        .and_then(|h| h.into_string().ok())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "flotilla".to_string());
    let suffix: u32 = rand::random();
    format!("{host}-{suffix:08x}")
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        leader: LeaderArgs,
    }

    #[test]
    fn flag_defaults_are_kubes() {
        let cli = Cli::parse_from(["test"]);
        assert_eq!(cli.leader.config(), Ok(LeaseConfig::default()));
        let cli = Cli::parse_from([
            "test",
            "--lease-duration",
            "3",
            "--renew-deadline",
            "2s",
            "--retry-period",
            "500ms",
        ]);
        assert_eq!(
            cli.leader.config(),
            LeaseConfig::new(
                Duration::from_secs(3),
                Duration::from_secs(2),
                Duration::from_millis(500)
            )
        );
    }

    #[test]
    fn identities_differ() {
        let (a, b) = (identity(), identity());
        assert_ne!(a, b);
        assert!(a.len() > 9, "{a}");
    }
}
