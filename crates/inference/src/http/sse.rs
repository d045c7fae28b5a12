//! A small incremental parser for server-sent events (`text/event-stream`).

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
#[derive(Debug, Default)]
pub struct SseParser {
    buffer: Vec<u8>,
    event: Option<String>,
    data: Vec<String>,
    has_data: bool,
}

impl SseParser {
    /// An empty parser.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds a chunk and returns the events it completed.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        self.buffer.extend_from_slice(chunk);
        let mut events = Vec::new();
        while let Some((line_end, next)) = self.next_line_end() {
            let line = String::from_utf8_lossy(&self.buffer[..line_end]).into_owned();
            self.buffer.drain(..next);
            if let Some(event) = self.line(&line) {
                events.push(event);
            }
        }
        events
    }

    /// Flushes a final event that was not followed by a blank line (the stream ended).
    pub fn finish(&mut self) -> Option<SseEvent> {
        if !self.buffer.is_empty() {
            let line = String::from_utf8_lossy(&std::mem::take(&mut self.buffer)).into_owned();
            if let Some(event) = self.line(&line) {
                return Some(event);
            }
        }
        self.dispatch()
    }

    /// Position of the first line end and of the byte after it. A lone `\r` at the end of the
    /// buffer waits for the next chunk (it may be the first half of `\r\n`).
    fn next_line_end(&self) -> Option<(usize, usize)> {
        let position = self
            .buffer
            .iter()
            .position(|b| *b == b'\n' || *b == b'\r')?;
        if self.buffer[position] == b'\n' {
            return Some((position, position + 1));
        }
        match self.buffer.get(position + 1) {
            Some(b'\n') => Some((position, position + 2)),
            Some(_) => Some((position, position + 1)),
            None => None,
        }
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
                self.data.push(value.to_owned());
                self.has_data = true;
            }
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
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
            .flat_map(|chunk| parser.push(chunk))
            .collect();
        events.extend(parser.finish());
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
}
