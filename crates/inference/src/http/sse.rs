//! A small incremental parser for server-sent events (`text/event-stream`).

use crate::InferenceError;

/// The default limit on the size of one event (8 MiB): far above what any provider sends in
/// one event, far below what would exhaust memory.
pub const DEFAULT_MAX_EVENT_BYTES: usize = 8 << 20;

/// One server-sent event: its optional `event:` name and its `data:` lines joined with `\n`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, if any.
    pub event: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

/// Turns arbitrary byte chunks into complete events. Handles `\n`, `\r\n` and `\r` line ends,
/// comments (`: ping`), multi-line data, and lines or UTF-8 characters split across chunks.
///
/// Each byte is examined once, however the stream is chunked. One event (its data lines and
/// the line being read) may hold at most [`max_event_bytes`](SseParser::with_max_event_bytes)
/// bytes; past that, [`push`](SseParser::push) returns [`InferenceError::EventTooLarge`].
///
/// ```
/// use inference::SseParser;
///
/// let mut parser = SseParser::new();
/// assert!(parser.push(b"data: hel").unwrap().is_empty());
/// let events = parser.push(b"lo\n\n").unwrap();
/// assert_eq!(events[0].data, "hello");
///
/// let mut small = SseParser::new().with_max_event_bytes(8);
/// assert!(small.push(b"data: far too long").is_err());
/// ```
#[derive(Debug)]
pub struct SseParser {
    /// The start of a line whose end has not arrived yet.
    line: Vec<u8>,
    /// The last chunk ended with `\r`: a `\n` starting the next one belongs to it.
    after_cr: bool,
    event: Option<String>,
    data: Vec<String>,
    has_data: bool,
    /// Bytes held for the current event: its data lines and their separators.
    event_bytes: usize,
    max_event_bytes: usize,
}

impl Default for SseParser {
    fn default() -> Self {
        Self {
            line: Vec::new(),
            after_cr: false,
            event: None,
            data: Vec::new(),
            has_data: false,
            event_bytes: 0,
            max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
        }
    }
}

impl SseParser {
    /// An empty parser with the default event size limit (`DEFAULT_MAX_EVENT_BYTES`).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the most bytes one event may hold (its data lines plus the line being read).
    pub fn with_max_event_bytes(mut self, max: usize) -> Self {
        self.max_event_bytes = max;
        self
    }

    /// Feeds a chunk and returns the events it completed.
    ///
    /// # Errors
    /// [`InferenceError::EventTooLarge`] when the current event grows past the limit; the
    /// parser is then reset and holds nothing.
    pub fn push(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, InferenceError> {
        let mut events = Vec::new();
        let mut rest = chunk;
        if std::mem::take(&mut self.after_cr) {
            if let Some(after) = rest.strip_prefix(b"\n") {
                rest = after;
            }
        }
        while let Some(end) = rest.iter().position(|b| *b == b'\n' || *b == b'\r') {
            let (part, after) = rest.split_at(end);
            rest = &after[1..];
            if after[0] == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
            self.check_size(part.len())?;
            let line = if self.line.is_empty() {
                String::from_utf8_lossy(part).into_owned()
            } else {
                self.line.extend_from_slice(part);
                let line = String::from_utf8_lossy(&self.line).into_owned();
                self.line.clear();
                line
            };
            events.extend(self.line(&line));
            // Invalid UTF-8 grows up to three times when decoded: check what is held now.
            self.check_size(0)?;
        }
        self.check_size(rest.len())?;
        self.line.extend_from_slice(rest);
        Ok(events)
    }

    /// Flushes a final event that was not followed by a blank line (the stream ended).
    ///
    /// # Errors
    /// [`InferenceError::EventTooLarge`] when that event, decoded, is past the limit.
    pub fn finish(&mut self) -> Result<Option<SseEvent>, InferenceError> {
        self.after_cr = false;
        if !self.line.is_empty() {
            let line = String::from_utf8_lossy(&std::mem::take(&mut self.line)).into_owned();
            if let Some(event) = self.line(&line) {
                return Ok(Some(event));
            }
            self.check_size(0)?;
        }
        Ok(self.dispatch())
    }

    /// Fails, and forgets everything held, when `more` bytes would take the event past the
    /// limit.
    fn check_size(&mut self, more: usize) -> Result<(), InferenceError> {
        let held = self.event_bytes + self.line.len();
        if held.saturating_add(more) <= self.max_event_bytes {
            return Ok(());
        }
        *self = Self::new().with_max_event_bytes(self.max_event_bytes);
        Err(InferenceError::EventTooLarge {
            limit: self.max_event_bytes,
        })
    }

    fn line(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => {
                self.event_bytes += value.len() + 1;
                self.data.push(value.to_owned());
                self.has_data = true;
            }
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        self.event_bytes = 0;
        if !self.has_data {
            return None;
        }
        self.has_data = false;
        Some(SseEvent {
            event,
            data: std::mem::take(&mut self.data).join("\n"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_in_chunks(text: &str, size: usize) -> Vec<SseEvent> {
        let mut parser = SseParser::new();
        let mut events: Vec<SseEvent> = text
            .as_bytes()
            .chunks(size)
            .flat_map(|chunk| parser.push(chunk).unwrap())
            .collect();
        events.extend(parser.finish().unwrap());
        events
    }

    #[test]
    fn parses_events_whatever_the_chunking() {
        let text = ": keep-alive\r\nevent: message_start\r\ndata: {\"a\":1}\r\n\r\ndata: line one\ndata: line two\n\ndata: [DONE]\n\n";
        let expected = vec![
            SseEvent {
                event: Some("message_start".into()),
                data: "{\"a\":1}".into(),
            },
            SseEvent {
                event: None,
                data: "line one\nline two".into(),
            },
            SseEvent {
                event: None,
                data: "[DONE]".into(),
            },
        ];
        for size in [1, 2, 3, 7, 1000] {
            assert_eq!(parse_in_chunks(text, size), expected, "chunk size {size}");
        }
    }

    #[test]
    fn keeps_multibyte_characters_split_across_chunks() {
        let text = "data: 22°C ☀\n\n";
        assert_eq!(parse_in_chunks(text, 1)[0].data, "22°C ☀");
    }

    #[test]
    fn flushes_a_last_event_without_blank_line() {
        assert_eq!(parse_in_chunks("data: tail", 4)[0].data, "tail");
        assert!(parse_in_chunks("event: ping\n\n", 4).is_empty());
    }

    #[test]
    fn a_carriage_return_ending_a_chunk_ends_the_line_at_once() {
        let mut parser = SseParser::new();
        assert!(parser.push(b"data: a\r").unwrap().is_empty());
        assert_eq!(parser.push(b"\r\n").unwrap()[0].data, "a");
        assert!(parser.push(b"data: b\r").unwrap().is_empty());
        assert_eq!(parser.push(b"\n\n").unwrap()[0].data, "b");
        assert!(parser.push(b"data: c\r").unwrap().is_empty());
        assert_eq!(parser.finish().unwrap().unwrap().data, "c");
    }

    #[test]
    fn an_event_past_the_limit_is_a_typed_error() {
        let mut parser = SseParser::new().with_max_event_bytes(100);
        // One long line, in pieces.
        assert!(parser.push(&[b'x'; 60]).unwrap().is_empty());
        let error = parser.push(&[b'x'; 60]).unwrap_err();
        assert_eq!(error, InferenceError::EventTooLarge { limit: 100 });
        assert!(!error.is_retryable());
        assert!(error.to_string().contains("100 bytes"), "{error}");
        // Many data lines of one event.
        let mut parser = SseParser::new().with_max_event_bytes(100);
        let line = format!("data: {}\n", "y".repeat(30));
        assert!(parser.push(line.repeat(3).as_bytes()).unwrap().is_empty());
        assert!(parser.push(line.as_bytes()).is_err());
        // Events under the limit, one after the other, are fine whatever their total.
        let mut parser = SseParser::new().with_max_event_bytes(100);
        let event = format!("data: {}\n\n", "z".repeat(80));
        assert_eq!(parser.push(event.repeat(50).as_bytes()).unwrap().len(), 50);
    }

    /// Found by the `sse` fuzz target: a line under the limit of invalid UTF-8 bytes decoded to
    /// an event three times as large (each byte becomes U+FFFD).
    #[test]
    fn invalid_utf8_counts_as_decoded_against_the_limit() {
        let mut line = b"data: ".to_vec();
        line.extend([0xFF; 100]);
        let mut parser = SseParser::new().with_max_event_bytes(256);
        let mut event = line.clone();
        event.extend_from_slice(b"\n\n");
        assert_eq!(
            parser.push(&event),
            Err(InferenceError::EventTooLarge { limit: 256 })
        );
        // The same event left unterminated when the stream ends.
        let mut parser = SseParser::new().with_max_event_bytes(256);
        assert!(parser.push(&line).unwrap().is_empty());
        assert_eq!(
            parser.finish(),
            Err(InferenceError::EventTooLarge { limit: 256 })
        );
    }

    #[test]
    fn a_long_line_in_one_byte_chunks_is_read_in_linear_time() {
        // 2 MB fed one byte at a time: rescanning the buffer per chunk would take ~10^12 steps.
        let mut parser = SseParser::new();
        let mut text = b"data: ".to_vec();
        text.extend(std::iter::repeat_n(b'a', 2_000_000));
        text.extend_from_slice(b"\n\n");
        let mut events = Vec::new();
        for byte in text.chunks(1) {
            events.extend(parser.push(byte).unwrap());
        }
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data.len(), 2_000_000);
    }

    proptest::proptest! {
        #[test]
        fn chunking_never_changes_the_events(
            lines in proptest::collection::vec(
                "(data: [a-z°]{0,5}|event: [a-z]{1,4}|: c|data|x: y|)(\r\n|\n|\r)",
                0..12,
            ),
            size in 1usize..9,
        ) {
            let text = lines.concat();
            proptest::prop_assert_eq!(
                parse_in_chunks(&text, size),
                parse_in_chunks(&text, usize::MAX)
            );
        }
    }
}
