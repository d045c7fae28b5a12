//! Small text helpers for pages: addresses, numbers, money, times, durations.

use std::time::Duration;

use chrono::{DateTime, Utc};

/// `text` percent-encoded for a path segment or a query value (everything but ASCII letters,
/// digits and `-._~`).
pub(crate) fn url_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The page of session `id` (`/sessions/ID` plus `rest`).
pub(crate) fn session_path(id: &str, rest: &str) -> String {
    format!("/sessions/{}{rest}", url_escape(id))
}

/// Dollars: `$0.0123`, or `unknown`.
pub(crate) fn usd(amount: Option<f64>) -> String {
    match amount {
        Some(amount) if amount >= 1.0 => format!("${amount:.2}"),
        Some(amount) => format!("${amount:.4}"),
        None => "unknown".to_owned(),
    }
}

/// `2026-11-26 01:02:03 UTC`.
pub(crate) fn time(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M:%S UTC").to_string()
}

/// `1.234 s`, `56 ms`.
pub(crate) fn duration(d: Duration) -> String {
    if d.as_millis() >= 1000 {
        format!("{:.3} s", d.as_secs_f64())
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// `12,345`.
pub(crate) fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A JSON value, indented.
pub(crate) fn json(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// The trace id of an execution: its id's 32 hex digits (an execution id is a uuid), the
/// trace every step of the execution is exported under.
pub(crate) fn trace_id(execution_id: &str) -> Option<String> {
    uuid::Uuid::parse_str(execution_id)
        .ok()
        .map(|id| id.simple().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_everything_but_unreserved() {
        assert_eq!(url_escape("a b/c?d&e=f%"), "a%20b%2Fc%3Fd%26e%3Df%25");
        assert_eq!(url_escape("chat-42_x.y~"), "chat-42_x.y~");
        assert_eq!(url_escape("é"), "%C3%A9");
    }

    #[test]
    fn numbers_and_money() {
        assert_eq!(count(0), "0");
        assert_eq!(count(1234567), "1,234,567");
        assert_eq!(count(123), "123");
        assert_eq!(usd(Some(0.01234)), "$0.0123");
        assert_eq!(usd(Some(12.5)), "$12.50");
        assert_eq!(usd(None), "unknown");
    }
}
