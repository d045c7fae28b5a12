//! `AccessToken`: the secret every request to a server must carry.

use std::fmt;

use crate::error::ServeError;

/// The shortest token accepted from a user (`AGENTS_SERVE_TOKEN`): 16 characters.
pub const MIN_TOKEN_LEN: usize = 16;

/// The secret a request shows (`Authorization: Bearer`, the `token` query parameter, or the
/// console's cookie). Its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct AccessToken(String);

impl AccessToken {
    /// A fresh token: 64 hex digits from two random (v4) uuids, 244 random bits.
    pub fn random() -> Self {
        let mut text = String::with_capacity(64);
        for _ in 0..2 {
            text.push_str(&uuid::Uuid::new_v4().simple().to_string());
        }
        Self(text)
    }

    /// A token a user chose (`AGENTS_SERVE_TOKEN`).
    ///
    /// # Errors
    /// [`ServeError::InvalidToken`] when it is shorter than [`MIN_TOKEN_LEN`] or holds a
    /// character other than ASCII letters, digits, `-`, `_`, `.` and `~` (it goes into URLs
    /// and cookies unencoded).
    pub fn new(text: impl Into<String>) -> Result<Self, ServeError> {
        let text = text.into();
        if text.len() < MIN_TOKEN_LEN {
            return Err(ServeError::InvalidToken {
                reason: format!(
                    "it has {} characters, at least {MIN_TOKEN_LEN} are needed",
                    text.len()
                ),
            });
        }
        if let Some(bad) = text
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~')))
        {
            return Err(ServeError::InvalidToken {
                reason: format!(
                    "it holds {bad:?}; use ASCII letters, digits, '-', '_', '.' and '~' only"
                ),
            });
        }
        Ok(Self(text))
    }

    /// The token's text (for the URL printed at start).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether `candidate` is this token, in time that does not depend on where they differ.
    pub fn matches(&self, candidate: &[u8]) -> bool {
        let expected = self.0.as_bytes();
        if expected.len() != candidate.len() {
            return false;
        }
        expected
            .iter()
            .zip(candidate)
            .fold(0u8, |difference, (a, b)| difference | (a ^ b))
            == 0
    }
}

impl fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AccessToken(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_tokens_are_long_distinct_and_accepted() {
        let a = AccessToken::random();
        let b = AccessToken::random();
        assert_eq!(a.expose().len(), 64);
        assert_ne!(a, b);
        assert!(AccessToken::new(a.expose()).is_ok());
    }

    #[test]
    fn short_or_unsafe_tokens_are_refused() {
        assert!(AccessToken::new("short").is_err());
        let error = AccessToken::new("a-long-enough-token;x").unwrap_err();
        assert!(error.to_string().contains("';'"), "{error}");
        assert!(AccessToken::new("a long enough token with spaces").is_err());
    }

    #[test]
    fn matches_only_the_same_bytes() {
        let token = AccessToken::new("0123456789abcdef").unwrap();
        assert!(token.matches(b"0123456789abcdef"));
        assert!(!token.matches(b"0123456789abcdeF"));
        assert!(!token.matches(b"0123456789abcde"));
        assert!(!token.matches(b""));
    }

    #[test]
    fn debug_hides_the_secret() {
        let token = AccessToken::new("0123456789abcdef").unwrap();
        assert!(!format!("{token:?}").contains("0123"));
    }
}
