//! The CSRF token: a random value per server start that every state-changing request must
//! carry (a hidden form field, or the `X-CSRF-Token` header the script sends). Another
//! site's page cannot read it, so it cannot forge a request that carries it.

use axum::http::HeaderMap;

use crate::token::AccessToken;

/// The header the script sends the token in.
pub(crate) const HEADER: &str = "x-csrf-token";

/// The console's CSRF token.
#[derive(Clone, Debug)]
pub(crate) struct CsrfToken(AccessToken);

impl CsrfToken {
    pub(crate) fn random() -> Self {
        Self(AccessToken::random())
    }

    /// The value pages embed.
    pub(crate) fn value(&self) -> &str {
        self.0.expose()
    }

    /// Whether the request carries the token, in the form (`field`) or the header.
    pub(crate) fn accepts(&self, field: Option<&str>, headers: &HeaderMap) -> bool {
        let header = headers.get(HEADER).map(|value| value.as_bytes());
        field
            .map(str::as_bytes)
            .or(header)
            .is_some_and(|candidate| self.0.matches(candidate))
    }
}
