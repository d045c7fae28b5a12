//! `SecretString`: an API key that never shows up in logs, errors or serialized state.

use std::fmt;

/// A secret (an API key) whose `Debug` output is redacted.
///
/// It implements neither `Display` nor `Serialize`: the only way to read it is
/// [`SecretString::expose_secret`], at the one place a request header is built.
///
/// ```
/// use inference::SecretString;
///
/// let key = SecretString::new("sk-live-1234");
/// assert_eq!(format!("{key:?}"), "SecretString([REDACTED])");
/// assert_eq!(key.expose_secret(), "sk-live-1234");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct SecretString(String);

impl SecretString {
    /// Wraps a secret.
    pub fn new(secret: impl Into<String>) -> Self {
        Self(secret.into())
    }

    /// The secret itself. Call it only to build the request that needs it.
    pub fn expose_secret(&self) -> &str {
        &self.0
    }

    /// True for an empty secret (treated as "no key").
    pub fn is_empty(&self) -> bool {
        self.0.trim().is_empty()
    }
}

impl fmt::Debug for SecretString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretString([REDACTED])")
    }
}

impl From<String> for SecretString {
    fn from(secret: String) -> Self {
        Self(secret)
    }
}

impl From<&str> for SecretString {
    fn from(secret: &str) -> Self {
        Self(secret.to_owned())
    }
}

impl From<&String> for SecretString {
    fn from(secret: &String) -> Self {
        Self(secret.clone())
    }
}

/// Anything that can be given as an optional API key: a string, a [`SecretString`], or an
/// `Option<&str>` (`None` for local servers that need no key). An empty string means "no key".
pub trait IntoApiKey {
    /// The key, or `None` when there is none.
    fn into_api_key(self) -> Option<SecretString>;
}

impl IntoApiKey for SecretString {
    fn into_api_key(self) -> Option<SecretString> {
        Some(self).filter(|k| !k.is_empty())
    }
}

impl IntoApiKey for &str {
    fn into_api_key(self) -> Option<SecretString> {
        SecretString::from(self).into_api_key()
    }
}

impl IntoApiKey for String {
    fn into_api_key(self) -> Option<SecretString> {
        SecretString::from(self).into_api_key()
    }
}

impl IntoApiKey for &String {
    fn into_api_key(self) -> Option<SecretString> {
        SecretString::from(self).into_api_key()
    }
}

// Only one `Option` impl, so that a bare `None` argument infers its type.
impl IntoApiKey for Option<&str> {
    fn into_api_key(self) -> Option<SecretString> {
        self.and_then(IntoApiKey::into_api_key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_secret() {
        let key = SecretString::new("sk-very-secret");
        let debug = format!("{:?}", Some(key.clone()));
        assert!(!debug.contains("sk-very-secret"));
        assert!(debug.contains("REDACTED"));
    }

    #[test]
    fn empty_keys_mean_no_key() {
        assert!("".into_api_key().is_none());
        assert!(None.into_api_key().is_none());
        assert!(Some("  ").into_api_key().is_none());
        assert_eq!(
            Some("k")
                .into_api_key()
                .map(|k| k.expose_secret().to_owned()),
            Some("k".to_owned())
        );
        assert!(String::from("k").into_api_key().is_some());
    }
}
