//! `RetryPolicy`: exponential backoff with jitter, honouring `Retry-After`.

use std::future::Future;
use std::time::Duration;

use crate::InferenceError;

/// How failed requests are retried.
///
/// Retried: rate limits (429), timeouts, transport errors, HTTP 408 and 5xx
/// (see [`InferenceError::is_retryable`]). Other 4xx answers and malformed responses are not.
/// The delay before retry `n` (1-based) is `base_delay * 2^(n-1)`, capped at `max_delay`,
/// with "equal jitter" (a random point in its upper half); a provider's `Retry-After` is a
/// lower bound. A `Retry-After` longer than `max_retry_after` is not waited for: the
/// [`InferenceError::RateLimited`] is returned so the caller can decide.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Total attempts, the first one included (1 = no retries).
    pub max_attempts: u32,
    /// Delay before the first retry.
    pub base_delay: Duration,
    /// Upper bound of the backoff delay.
    pub max_delay: Duration,
    /// Longest `Retry-After` worth waiting for.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 3,
            base_delay: Duration::from_millis(250),
            max_delay: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// A policy that never retries.
    pub fn none() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// Sets the total number of attempts (at least 1).
    pub fn with_max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// Sets the base and maximum backoff delays.
    pub fn with_delays(mut self, base: Duration, max: Duration) -> Self {
        self.base_delay = base;
        self.max_delay = max.max(base);
        self
    }

    /// Sets the longest `Retry-After` worth waiting for.
    pub fn with_max_retry_after(mut self, max: Duration) -> Self {
        self.max_retry_after = max;
        self
    }

    /// The delay before retry number `retry` (1-based), or `None` when the provider asked
    /// for a longer wait than [`max_retry_after`](RetryPolicy::max_retry_after).
    pub fn delay_before_retry(
        &self,
        retry: u32,
        retry_after: Option<Duration>,
    ) -> Option<Duration> {
        let exponent = retry.saturating_sub(1).min(30);
        let backoff = self
            .base_delay
            .saturating_mul(1u32 << exponent)
            .min(self.max_delay);
        let half = backoff / 2;
        let jitter_nanos = u64::try_from(half.as_nanos()).unwrap_or(u64::MAX);
        let jittered = half + Duration::from_nanos(fastrand::u64(0..=jitter_nanos));
        match retry_after {
            Some(wait) if wait > self.max_retry_after => None,
            Some(wait) => Some(jittered.max(wait)),
            None => Some(jittered),
        }
    }

    /// Runs `attempt` (given the 1-based attempt number) until it succeeds, fails with an
    /// error that is not retryable, or the attempts are used up.
    ///
    /// # Errors
    /// The last attempt's error.
    pub async fn run<T, F, Fut>(&self, mut attempt: F) -> Result<T, InferenceError>
    where
        F: FnMut(u32) -> Fut,
        Fut: Future<Output = Result<T, InferenceError>>,
    {
        let mut number = 1;
        loop {
            let error = match attempt(number).await {
                Ok(value) => return Ok(value),
                Err(error) => error,
            };
            if !error.is_retryable() || number >= self.max_attempts {
                if number > 1 {
                    tracing::warn!(attempts = number, %error, "inference request failed");
                }
                return Err(error);
            }
            let Some(delay) = self.delay_before_retry(number, error.retry_after()) else {
                tracing::warn!(%error, "provider asked to wait longer than the retry policy allows");
                return Err(error);
            };
            tracing::info!(
                attempt = number,
                delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                %error,
                "retrying inference request"
            );
            tokio::time::sleep(delay).await;
            number += 1;
        }
    }
}

/// Reads a `Retry-After` value: seconds (integer or decimal) or an HTTP date.
/// Unreadable values give `None`; dates in the past give zero.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite())
            .then(|| Duration::from_secs_f64(seconds.clamp(0.0, 86_400.0)));
    }
    let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let wait = date.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn rate_limited(after: Option<Duration>) -> InferenceError {
        InferenceError::RateLimited {
            retry_after: after,
            message: "slow down".into(),
        }
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let policy = RetryPolicy::default()
            .with_delays(Duration::from_millis(100), Duration::from_millis(1000));
        for _ in 0..50 {
            let first = policy.delay_before_retry(1, None).unwrap();
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
            let third = policy.delay_before_retry(3, None).unwrap();
            assert!(third >= Duration::from_millis(200) && third <= Duration::from_millis(400));
            let tenth = policy.delay_before_retry(10, None).unwrap();
            assert!(tenth <= Duration::from_millis(1000));
        }
    }

    #[test]
    fn retry_after_is_a_lower_bound_and_has_a_cap() {
        let policy = RetryPolicy::default();
        let delay = policy
            .delay_before_retry(1, Some(Duration::from_secs(5)))
            .unwrap();
        assert!(delay >= Duration::from_secs(5));
        assert_eq!(
            policy.delay_before_retry(1, Some(Duration::from_secs(3600))),
            None
        );
    }

    #[test]
    fn parses_retry_after_forms() {
        assert_eq!(parse_retry_after("2"), Some(Duration::from_secs(2)));
        assert_eq!(
            parse_retry_after(" 1.5 "),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(parse_retry_after("-3"), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon"), None);
        assert_eq!(parse_retry_after(""), None);
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
        let future = (chrono::Utc::now() + chrono::Duration::seconds(120)).to_rfc2822();
        let wait = parse_retry_after(&future).unwrap();
        assert!(wait > Duration::from_secs(100) && wait <= Duration::from_secs(120));
    }

    #[tokio::test(start_paused = true)]
    async fn waits_for_retry_after_then_succeeds() {
        let calls = AtomicU32::new(0);
        let start = tokio::time::Instant::now();
        let result = RetryPolicy::default()
            .run(|_| {
                let n = calls.fetch_add(1, Ordering::SeqCst);
                async move {
                    if n == 0 {
                        Err(rate_limited(Some(Duration::from_secs(7))))
                    } else {
                        Ok("done")
                    }
                }
            })
            .await;
        assert_eq!(result, Ok("done"));
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert!(start.elapsed() >= Duration::from_secs(7));
    }

    #[tokio::test(start_paused = true)]
    async fn gives_up_after_max_attempts_with_the_last_error() {
        let calls = AtomicU32::new(0);
        let result: Result<(), _> = RetryPolicy::default()
            .with_max_attempts(4)
            .run(|n| {
                calls.fetch_add(1, Ordering::SeqCst);
                async move {
                    Err(InferenceError::Http {
                        status: 500 + u16::try_from(n).unwrap(),
                        message: "boom".into(),
                    })
                }
            })
            .await;
        assert_eq!(calls.load(Ordering::SeqCst), 4);
        assert_eq!(result.unwrap_err().status(), Some(504));
    }

    #[tokio::test(start_paused = true)]
    async fn does_not_retry_client_errors() {
        let calls = AtomicU32::new(0);
        let result: Result<(), _> = RetryPolicy::default()
            .run(|_| {
                calls.fetch_add(1, Ordering::SeqCst);
                async {
                    Err(InferenceError::Http {
                        status: 401,
                        message: "bad key".into(),
                    })
                }
            })
            .await;
        assert!(result.is_err());
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
