//! How many connections the hub holds open: at most so many per client address and so many in
//! all, so one client (or a flood of idle connections) cannot take every file descriptor and
//! lock everyone else out. A connection over a limit is closed as soon as it is accepted,
//! before any TLS work is spent on it.

use std::collections::HashMap;
use std::fmt;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

/// The limits a [`ConnectionTable`] enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Most connections open at once from one client address.
    pub per_address: usize,
    /// Most connections open at once in all.
    pub total: usize,
}

/// Why a connection was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Its address already holds `limit` connections.
    PerAddress {
        /// The client address.
        address: IpAddr,
        /// The per-address limit.
        limit: usize,
    },
    /// The hub already holds `limit` connections.
    Total {
        /// The overall limit.
        limit: usize,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::PerAddress { address, limit } => write!(
                f,
                "{address} already holds {limit} connections (--max-connections-per-address)"
            ),
            Refusal::Total { limit } => write!(
                f,
                "the hub already holds {limit} connections (--max-connections)"
            ),
        }
    }
}

/// The open connections, counted per client address.
#[derive(Debug, Clone)]
pub struct ConnectionTable {
    limits: ConnectionLimits,
    open: Arc<Mutex<Open>>,
}

#[derive(Debug, Default)]
struct Open {
    total: usize,
    by_address: HashMap<IpAddr, usize>,
}

/// One admitted connection; dropping it (when the connection ends) frees its place.
#[derive(Debug)]
pub struct Ticket {
    address: IpAddr,
    open: Arc<Mutex<Open>>,
}

impl ConnectionTable {
    /// A table with nothing open.
    pub fn new(limits: ConnectionLimits) -> Self {
        Self {
            limits,
            open: Arc::default(),
        }
    }

    /// A place for one more connection from `address`, or why there is none.
    pub fn admit(&self, address: IpAddr) -> Result<Ticket, Refusal> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if open.total >= self.limits.total {
            return Err(Refusal::Total {
                limit: self.limits.total,
            });
        }
        let count = open.by_address.entry(address).or_default();
        if *count >= self.limits.per_address {
            return Err(Refusal::PerAddress {
                address,
                limit: self.limits.per_address,
            });
        }
        *count += 1;
        open.total += 1;
        Ok(Ticket {
            address,
            open: self.open.clone(),
        })
    }

    /// Connections open now: in all, and from `address`.
    #[cfg(test)]
    fn open(&self, address: IpAddr) -> (usize, usize) {
        let open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        (
            open.total,
            open.by_address.get(&address).copied().unwrap_or(0),
        )
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.total -= 1;
        if let Some(count) = open.by_address.get_mut(&self.address) {
            *count -= 1;
            if *count == 0 {
                open.by_address.remove(&self.address);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    #[test]
    fn each_address_gets_its_share_and_a_closed_connection_frees_its_place() {
        let table = ConnectionTable::new(ConnectionLimits {
            per_address: 2,
            total: 3,
        });
        let a1 = table.admit(ip(1)).unwrap();
        let _a2 = table.admit(ip(1)).unwrap();
        assert_eq!(
            table.admit(ip(1)).unwrap_err(),
            Refusal::PerAddress {
                address: ip(1),
                limit: 2
            }
        );
        let _b1 = table.admit(ip(2)).unwrap();
        assert_eq!(
            table.admit(ip(3)).unwrap_err(),
            Refusal::Total { limit: 3 },
            "the overall limit holds across addresses"
        );
        drop(a1);
        assert_eq!(table.open(ip(1)), (2, 1));
        let _a3 = table.admit(ip(1)).expect("a freed place is reusable");
        assert!(
            table
                .admit(ip(2))
                .unwrap_err()
                .to_string()
                .contains("--max-connections"),
            "the refusal names the flag that sets the limit"
        );
    }

    proptest! {
        /// Whatever order connections open and close in, no address exceeds its share, the
        /// total never exceeds its limit, and everything closed leaves the table empty.
        #[test]
        fn limits_hold_under_any_interleaving(
            steps in proptest::collection::vec((any::<bool>(), 0u8..4), 0..200),
        ) {
            let limits = ConnectionLimits { per_address: 3, total: 7 };
            let table = ConnectionTable::new(limits);
            let mut held: Vec<Ticket> = Vec::new();
            for (open, address) in steps {
                if open {
                    let before = table.open(ip(address));
                    match table.admit(ip(address)) {
                        Ok(t) => held.push(t),
                        Err(Refusal::PerAddress { .. }) => prop_assert_eq!(before.1, 3),
                        Err(Refusal::Total { .. }) => prop_assert_eq!(before.0, 7),
                    }
                } else if !held.is_empty() {
                    held.swap_remove(usize::from(address) % held.len());
                }
                for a in 0..4 {
                    let (total, mine) = table.open(ip(a));
                    prop_assert!(total <= 7 && mine <= 3);
                }
                prop_assert_eq!(table.open(ip(0)).0, held.len());
            }
            held.clear();
            prop_assert_eq!(table.open(ip(0)), (0, 0));
        }
    }
}
