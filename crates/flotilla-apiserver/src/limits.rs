//! Per-client request limits, so one abusive client cannot starve the others: a cap on each
//! user's requests in flight and on each user's open watches. Over the cap the request gets
//! 429 TooManyRequests with Retry-After; the slot is freed when the response (or the watch
//! stream) ends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use crate::status::ApiError;

/// The caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientLimits {
    /// Non-watch requests one user may have in flight.
    pub max_in_flight: usize,
    /// Watches one user may hold open.
    pub max_watches: usize,
}

impl Default for ClientLimits {
    fn default() -> Self {
        Self {
            max_in_flight: 200,
            max_watches: 1_000,
        }
    }
}

/// Which cap a slot counts against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SlotKind {
    /// A request that completes with its response.
    Request,
    /// A watch, held until its stream ends.
    Watch,
}

/// Counts slots per user.
#[derive(Debug, Default)]
pub struct Limiter {
    limits: ClientLimits,
    used: Mutex<HashMap<(String, SlotKind), usize>>,
}

/// A held slot, released on drop.
#[derive(Debug)]
pub struct Slot {
    limiter: Arc<Limiter>,
    key: (String, SlotKind),
}

impl Limiter {
    /// A limiter enforcing `limits`.
    pub fn new(limits: ClientLimits) -> Arc<Self> {
        Arc::new(Self {
            limits,
            used: Mutex::default(),
        })
    }

    /// Takes a slot of `kind` for `user`, or a 429 when the user is at the cap.
    pub fn acquire(self: &Arc<Self>, user: &str, kind: SlotKind) -> Result<Slot, ApiError> {
        let cap = match kind {
            SlotKind::Request => self.limits.max_in_flight,
            SlotKind::Watch => self.limits.max_watches,
        };
        let key = (user.to_string(), kind);
        let mut used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        let n = used.entry(key.clone()).or_default();
        if *n >= cap {
            let what = match kind {
                SlotKind::Request => "requests in flight",
                SlotKind::Watch => "open watches",
            };
            return Err(ApiError::too_many_requests(format!(
                "too many {what} for user {user:?} (limit {cap}); retry later"
            )));
        }
        *n += 1;
        Ok(Slot {
            limiter: self.clone(),
            key,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut used = self
            .limiter
            .used
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = used.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                used.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_each_user_separately_and_frees_on_drop() {
        let limiter = Limiter::new(ClientLimits {
            max_in_flight: 2,
            max_watches: 1,
        });
        let a1 = limiter.acquire("a", SlotKind::Request).unwrap();
        let _a2 = limiter.acquire("a", SlotKind::Request).unwrap();
        let err = limiter.acquire("a", SlotKind::Request).unwrap_err();
        assert_eq!((err.code, err.reason), (429, "TooManyRequests"));
        assert!(err.message.contains("limit 2"), "{}", err.message);
        let _b = limiter.acquire("b", SlotKind::Request).unwrap();
        let _w = limiter.acquire("a", SlotKind::Watch).unwrap();
        assert!(limiter.acquire("a", SlotKind::Watch).is_err());
        drop(a1);
        assert!(limiter.acquire("a", SlotKind::Request).is_ok());
    }
}
