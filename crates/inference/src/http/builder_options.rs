//! What every provider builder offers about HTTP: extra headers, timeouts and retries, written
//! once for the builders that hold `headers: Vec<(String, String)>` and `http: HttpSettings`.

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

        /// Longest silence allowed between two chunks of a stream.
        pub fn stream_idle_timeout(mut self, timeout: std::time::Duration) -> Self {
            self.http.stream_idle_timeout = timeout;
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

/// Extra headers as a map.
///
/// # Errors
/// [`InferenceError::Configuration`] naming the first header whose name or value is invalid.
pub(crate) fn header_map(headers: &[(String, String)]) -> Result<HeaderMap, InferenceError> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let invalid = || InferenceError::Configuration {
            message: format!("invalid header `{name}`"),
        };
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid())?;
        let value = HeaderValue::from_str(value).map_err(|_| invalid())?;
        map.insert(name, value);
    }
    Ok(map)
}
