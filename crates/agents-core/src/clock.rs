//! The wall clock the loop stamps states, steps and tool calls with.

use std::cell::Cell;
use std::time::{SystemTime, UNIX_EPOCH};

use chrono::{DateTime, NaiveDate, NaiveTime, Utc};

const SECONDS_PER_DAY: u64 = 86_400;

thread_local! {
    /// The last day turned into a calendar date on this thread (days since the epoch).
    static DAY: Cell<Option<(u64, NaiveDate)>> = const { Cell::new(None) };
}

/// Now, in UTC: the same value as `chrono::Utc::now()`, cheaper.
///
/// A step reads the clock about a dozen times; most of `Utc::now`'s cost is turning the day
/// number into a calendar date, which changes once a day. This keeps the last date per thread
/// and only builds the time of day.
pub(crate) fn now() -> DateTime<Utc> {
    let Ok(since_epoch) = SystemTime::now().duration_since(UNIX_EPOCH) else {
        return Utc::now();
    };
    let seconds = since_epoch.as_secs();
    let day = seconds / SECONDS_PER_DAY;
    let date = DAY.with(|cell| match cell.get() {
        Some((cached, date)) if cached == day => Some(date),
        _ => {
            let date = i64::try_from(seconds - seconds % SECONDS_PER_DAY)
                .ok()
                .and_then(|start| DateTime::from_timestamp(start, 0))
                .map(|start| start.date_naive())?;
            cell.set(Some((day, date)));
            Some(date)
        }
    });
    let time = u32::try_from(seconds % SECONDS_PER_DAY)
        .ok()
        .and_then(|of_day| {
            NaiveTime::from_num_seconds_from_midnight_opt(of_day, since_epoch.subsec_nanos())
        });
    match (date, time) {
        (Some(date), Some(time)) => date.and_time(time).and_utc(),
        _ => Utc::now(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_chrono() {
        for _ in 0..3 {
            let before = Utc::now();
            let ours = now();
            let after = Utc::now();
            assert!(
                before <= ours && ours <= after,
                "{before} <= {ours} <= {after}"
            );
        }
    }
}
