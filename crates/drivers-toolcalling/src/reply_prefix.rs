//! How much of a reply (or of a text compared with it) the rules for replies that are not
//! answers read: `copied_error`, `narration` and `repeated_answer` each compare only the start
//! of a long text, so each stays linear in a bounded prefix however long the model writes.

/// The most bytes of a text the rules compare.
const MAX_REPLY_BYTES: usize = 16 * 1024;

/// The start of `text` the rules compare: at most [`MAX_REPLY_BYTES`], cut at a character
/// boundary.
pub(crate) fn compared_prefix(text: &str) -> &str {
    &text[..text.floor_char_boundary(MAX_REPLY_BYTES)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_text_is_cut_at_a_character_boundary() {
        assert_eq!(compared_prefix("short"), "short");
        // A three-byte character straddles the limit: the cut goes before it.
        let text = format!("{}€ and more", "a".repeat(MAX_REPLY_BYTES - 1));
        assert_eq!(compared_prefix(&text).len(), MAX_REPLY_BYTES - 1);
    }
}
