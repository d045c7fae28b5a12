//! Cutting a text short for a message, an error or a log line.

use std::borrow::Cow;

/// `text` cut to its first `max_chars` characters (on a character boundary) followed by `…`,
/// or `text` itself, borrowed, when it is no longer than that.
///
/// ```
/// use messages::excerpt;
///
/// assert_eq!(excerpt("héllo world", 5), "héllo…");
/// assert_eq!(excerpt("short", 5), "short");
/// ```
pub fn excerpt(text: &str, max_chars: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => Cow::Owned(format!("{}…", &text[..end])),
        None => Cow::Borrowed(text),
    }
}

#[cfg(test)]
mod tests {
    use super::excerpt;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn an_excerpt_is_a_prefix_of_at_most_the_limit(text in ".{0,40}", max in 0usize..30) {
            let cut = excerpt(&text, max);
            let kept = cut.strip_suffix('…').filter(|_| text.chars().count() > max);
            match kept {
                Some(prefix) => {
                    prop_assert!(text.starts_with(prefix));
                    prop_assert_eq!(prefix.chars().count(), max);
                }
                None => prop_assert_eq!(cut.as_ref(), text.as_str()),
            }
        }
    }
}
