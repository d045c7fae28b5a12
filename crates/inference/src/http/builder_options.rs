//! The extra headers a provider builder collects (the builder methods themselves are
//! `providers::http_provider::provider_builder_options`).

use std::fmt;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::InferenceError;

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
