//! Time and ids: the [`Clock`] an agent holds, and fresh ids from the `uuid` crate.
//!
//! The loop never reads the time from anywhere else: it asks the agent's clock, so a test (or a
//! replay) that gives the agent a [`ManualClock`] controls every timestamp a run records and
//! every time limit it checks.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};

/// Where an agent reads the time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Now, in UTC.
    fn now(&self) -> DateTime<Utc>;
}

/// The system's wall clock (`chrono::Utc::now`), the default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that moves only when told to: for tests and replays.
///
/// Clones share the same time, so a test keeps one handle and gives the other to the agent.
///
/// ```
/// use std::time::Duration;
/// use agents_core::{Clock, ManualClock};
///
/// let clock = ManualClock::starting_at("2026-01-01T00:00:00Z".parse().unwrap());
/// let handle = clock.clone();
/// handle.advance(Duration::from_secs(90));
/// assert_eq!(clock.now().to_rfc3339(), "2026-01-01T00:01:30+00:00");
/// ```
#[derive(Clone, Debug)]
pub struct ManualClock {
    now: Arc<Mutex<DateTime<Utc>>>,
}

impl ManualClock {
    /// A clock showing `start`.
    pub fn starting_at(start: DateTime<Utc>) -> Self {
        Self {
            now: Arc::new(Mutex::new(start)),
        }
    }

    /// Moves the clock forward by `by` (saturating at the largest representable time).
    pub fn advance(&self, by: Duration) {
        let mut now = self.now.lock().unwrap_or_else(|e| e.into_inner());
        let step = chrono::Duration::from_std(by).unwrap_or(chrono::Duration::MAX);
        *now = now
            .checked_add_signed(step)
            .unwrap_or(DateTime::<Utc>::MAX_UTC);
    }

    /// Sets the clock to `to`.
    pub fn set(&self, to: DateTime<Utc>) {
        *self.now.lock().unwrap_or_else(|e| e.into_inner()) = to;
    }
}

impl Default for ManualClock {
    /// A clock showing 2026-01-01T00:00:00Z.
    fn default() -> Self {
        Self::starting_at(DateTime::from_timestamp(1_767_225_600, 0).unwrap_or_default())
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.now.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A clock that follows tokio's clock from the moment it is made: with a paused tokio runtime
/// (`#[tokio::test(start_paused = true)]`, tokio's `test-util`), time moves only as the runtime
/// advances it, so tests of time limits and timeouts run instantly and exactly.
#[derive(Clone, Copy, Debug)]
pub struct TokioClock {
    base: DateTime<Utc>,
    started: tokio::time::Instant,
}

impl TokioClock {
    /// A clock showing the wall time now and moving with tokio's clock.
    pub fn new() -> Self {
        Self {
            base: Utc::now(),
            started: tokio::time::Instant::now(),
        }
    }
}

impl Default for TokioClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for TokioClock {
    fn now(&self) -> DateTime<Utc> {
        let elapsed =
            chrono::Duration::from_std(self.started.elapsed()).unwrap_or(chrono::Duration::MAX);
        self.base
            .checked_add_signed(elapsed)
            .unwrap_or(DateTime::<Utc>::MAX_UTC)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_only_when_told_and_clones_share_it() {
        let clock = ManualClock::default();
        let start = clock.now();
        assert_eq!(clock.now(), start);
        clock.clone().advance(Duration::from_millis(1_500));
        assert_eq!((clock.now() - start).num_milliseconds(), 1_500);
        clock.advance(Duration::MAX);
        assert_eq!(clock.now(), DateTime::<Utc>::MAX_UTC);
    }
}
