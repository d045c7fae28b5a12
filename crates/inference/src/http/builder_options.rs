//! What every provider builder offers about HTTP: extra headers, timeouts, limits and retries,
//! written once for the builders that hold `headers: ExtraHeaders` and `http: HttpSettings`.

use std::fmt;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::InferenceError;

/// The HTTP options of a provider builder, as methods of the `impl` block it is expanded in.
/// The argument is an example header for the `header` documentation.
macro_rules! http_builder_options {
    ($example_header:literal) => {
        #[doc = concat!(
                                            "An extra header sent with every request (e.g. `",
                                            $example_header,
                                            "`)."
                                        )]
        pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
            self.headers.push((name.into(), value.into()));
            self
        }

        /// Time allowed for one attempt (the whole answer, or the first byte of a stream).
        pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
            self.http.timeout = timeout;
            self
        }

        /// Time allowed to connect.
        pub fn connect_timeout(mut self, timeout: std::time::Duration) -> Self {
            self.http.connect_timeout = timeout;
            self
        }

        /// Longest silence allowed between two chunks of a stream (default 60 s); past it the
        /// stream ends with a retryable [`InferenceError::Timeout`]($crate::InferenceError::Timeout).
        pub fn stream_idle_timeout(mut self, timeout: std::time::Duration) -> Self {
            self.http.stream_idle_timeout = timeout;
            self
        }

        /// Total time allowed for a streamed answer, from the request (retries included) to
        /// its last event (default 10 minutes); past it the stream ends with
        /// [`InferenceError::StreamDeadline`]($crate::InferenceError::StreamDeadline).
        pub fn stream_deadline(mut self, deadline: std::time::Duration) -> Self {
            self.http.stream_deadline = deadline;
            self
        }

        /// Most bytes one server-sent event may hold (default 8 MiB); past it the stream ends
        /// with [`InferenceError::EventTooLarge`]($crate::InferenceError::EventTooLarge).
        pub fn max_event_bytes(mut self, max: usize) -> Self {
            self.http.max_event_bytes = max;
            self
        }

        /// Most bytes of a response body read whole (default 32 MiB); past it the request
        /// fails with `InferenceError::BodyTooLarge`.
        pub fn max_body_bytes(mut self, max: usize) -> Self {
            self.http.max_body_bytes = max;
            self
        }

        /// The retry policy.
        pub fn retry(mut self, policy: $crate::RetryPolicy) -> Self {
            self.http.retry = policy;
            self
        }

        /// Total attempts per request (1 = no retries).
        pub fn max_attempts(mut self, attempts: u32) -> Self {
            self.http.retry = self.http.retry.with_max_attempts(attempts);
            self
        }
    };
}

pub(crate) use http_builder_options;

/// The extra headers given to a provider builder. They often carry credentials (an
/// organization, a gateway token), so `Debug` shows their names only.
#[derive(Clone, Default)]
pub(crate) struct ExtraHeaders(Vec<(String, String)>);

impl ExtraHeaders {
    /// Adds a header (a later one with the same name wins).
    pub(crate) fn push(&mut self, header: (String, String)) {
        self.0.push(header);
    }
}

impl fmt::Debug for ExtraHeaders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(name, _)| (name, "[REDACTED]")))
            .finish()
    }
}

/// Extra headers as a map, every value marked sensitive: `Debug` prints `Sensitive` in its
/// place.
///
/// # Errors
/// [`InferenceError::Configuration`] naming the first header whose name or value is invalid.
pub(crate) fn header_map(headers: &ExtraHeaders) -> Result<HeaderMap, InferenceError> {
    let mut map = HeaderMap::new();
    for (name, value) in &headers.0 {
        let invalid = || InferenceError::Configuration {
            message: format!("invalid header `{name}`"),
        };
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid())?;
        let mut value = HeaderValue::from_str(value).map_err(|_| invalid())?;
        value.set_sensitive(true);
        map.insert(name, value);
    }
    Ok(map)
}
