//! Fenced code blocks of a reply ("```json\n{...}\n```"): the one reading of where a block
//! starts, what its info string and its body are, and where it ends, shared by text-call
//! recovery (`recover`), the misquoted-result check and the arithmetic check.
//!
//! A block opens at three backticks, its info string runs to the end of that line, its body
//! starts on the next line and ends at the next three backticks. A fence that is never closed
//! (a reply cut at the token limit) opens no block.

/// One closed fenced block of a text; positions are byte offsets into that text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fenced<'a> {
    /// Where the opening fence starts.
    pub(crate) start: usize,
    /// The info string after the opening fence, trimmed (`json`, or empty).
    pub(crate) info: &'a str,
    /// The text between the opening fence's line and the closing fence.
    pub(crate) body: &'a str,
    /// Just after the closing fence.
    pub(crate) end: usize,
}

/// The fence that opens a block.
const FENCE: &str = "```";

/// The block whose opening fence is at `start` of `text`, or `None` when there is no fence
/// there or it is not closed.
pub(crate) fn fenced_block(text: &str, start: usize) -> Option<Fenced<'_>> {
    let after = text.get(start..)?.strip_prefix(FENCE)?;
    let newline = after.find('\n')?;
    let body_start = start + FENCE.len() + newline + 1;
    let close = text[body_start..].find(FENCE)?;
    Some(Fenced {
        start,
        info: after[..newline].trim(),
        body: &text[body_start..body_start + close],
        end: body_start + close + FENCE.len(),
    })
}

/// Every closed fenced block of `text`, in order; the search for the next one goes on after
/// the end of the last, so the walk is linear in the text.
pub(crate) fn fenced_blocks(text: &str) -> impl Iterator<Item = Fenced<'_>> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let start = at + text.get(at..)?.find(FENCE)?;
        let block = fenced_block(text, start)?;
        at = block.end;
        Some(block)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_has_its_info_its_body_and_its_end() {
        let text = "Here:\n```json\n{\"a\": 1}\n```\nDone.";
        let block = fenced_block(text, 6).unwrap();
        assert_eq!(block.info, "json");
        assert_eq!(block.body, "{\"a\": 1}\n");
        assert_eq!(&text[block.start..block.end], "```json\n{\"a\": 1}\n```");
    }

    #[test]
    fn an_unclosed_fence_or_one_without_a_line_opens_no_block() {
        assert_eq!(fenced_block("```json\n{\"a\": 1}", 0), None);
        assert_eq!(fenced_block("``` no line", 0), None);
        assert_eq!(fenced_block("text", 2), None);
        assert_eq!(fenced_blocks("a ```x\nb").count(), 0);
    }

    #[test]
    fn every_block_is_found_in_order() {
        let text = "one\n```\nfirst\n```\ntwo ```sh\nsecond\n``` three\n```\nunclosed";
        let bodies: Vec<&str> = fenced_blocks(text).map(|b| b.body).collect();
        assert_eq!(bodies, ["first\n", "second\n"]);
    }

    proptest::proptest! {
        #[test]
        fn blocks_lie_inside_the_text_in_order(text in "[`a\n ]{0,80}") {
            let mut last_end = 0;
            for block in fenced_blocks(&text) {
                proptest::prop_assert!(block.start >= last_end);
                proptest::prop_assert!(block.end <= text.len());
                proptest::prop_assert!(text[block.start..block.end].ends_with(FENCE));
                last_end = block.end;
            }
        }
    }
}
