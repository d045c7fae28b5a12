//! Finding JSON in text a model wrote: inside code fences, next to prose, with trailing commas.
//!
//! Small local models rarely answer with bare JSON. They wrap it in a ```` ```json ```` fence,
//! put a sentence before or after it, or leave a trailing comma. [`json_values`] finds every
//! JSON object or array in such text, most likely candidates first, so that callers can pick
//! the first one that has the shape they expect.
//!
//! The work is linear in the length of the text, whatever the text: brackets are matched in
//! one pass per scan (see [`MAX_OVERLAPPING_SCANS`]), each candidate is parsed at most once
//! and only up to its first error, and only the first [`MAX_SCAN_BYTES`] bytes are read.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::io::{self, Read};

use serde::Deserialize;
use serde_json::Value;

/// The most bytes of a text that [`json_values`] reads; the rest is ignored. One mebibyte is
/// far more than any model reply holding a decision or a tool call.
pub const MAX_SCAN_BYTES: usize = 1 << 20;

/// The deepest nesting of brackets a candidate may have. `serde_json` refuses deeper values
/// (its recursion limit), so deeper candidates are skipped without being parsed.
pub const MAX_DEPTH: usize = 127;

/// How many bracket scans may start inside the span of an earlier scan. A bracket inside what
/// an earlier scan read as a string (`{"a": "x} {"b": 1}`) needs a scan of its own; each such
/// scan may read to the end of the text, so their number is capped to keep the work linear.
/// Brackets left over once the cap is reached are not tried.
pub const MAX_OVERLAPPING_SCANS: usize = 8;

/// Every JSON object or array found in `text`, in order of preference:
///
/// 1. the contents of code fences (```` ``` ```` or ```` ```json ````), in order;
/// 2. the whole text, when it is JSON;
/// 3. objects and arrays embedded in the text, outermost first, left to right.
///
/// Trailing commas (`{"a": 1,}`) are tolerated. Scalars (`"text"`, `42`) are ignored.
/// Duplicates are returned once. Only the first [`MAX_SCAN_BYTES`] bytes of `text` are read.
///
/// ```
/// use inference::lenient_json::json_values;
/// use serde_json::json;
///
/// let text = "Sure! ```json\n{\"city\": \"Paris\",}\n``` Anything else?";
/// assert_eq!(json_values(text), vec![json!({"city": "Paris"})]);
/// ```
pub fn json_values(text: &str) -> Vec<Value> {
    let text = prefix(text, MAX_SCAN_BYTES);
    let mut found = Distinct::default();
    for block in fenced_blocks(text) {
        if let Some(value) = parse_lenient(block) {
            found.push(value);
        } else {
            for value in embedded_values(block, MAX_OVERLAPPING_SCANS) {
                found.push(value);
            }
        }
    }
    if let Some(value) = parse_lenient(text) {
        found.push(value);
    }
    for value in embedded_values(text, MAX_OVERLAPPING_SCANS) {
        found.push(value);
    }
    found.values
}

/// Parses `text` as JSON, retrying once with trailing commas removed, and once more with a
/// doubled outer brace made single: `{{"name": "edit_file", ...}}` (a template's escaped
/// braces, which the Qwen2.5-Coder 1.5B model copies) is the object inside.
///
/// ```
/// use inference::lenient_json::parse_lenient;
/// use serde_json::json;
///
/// assert_eq!(parse_lenient("[1, 2,]"), Some(json!([1, 2])));
/// assert_eq!(parse_lenient(r#"{{"a": {"b": 1}}}"#), Some(json!({"a": {"b": 1}})));
/// assert_eq!(parse_lenient("not json"), None);
/// ```
pub fn parse_lenient(text: &str) -> Option<Value> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return None;
    }
    if let Ok(value) = serde_json::from_str(trimmed) {
        return Some(value);
    }
    let without_commas = without_trailing_commas(trimmed);
    if let Ok(value) = serde_json::from_str(&without_commas) {
        return Some(value);
    }
    let inner = without_commas
        .strip_prefix("{{")
        .and_then(|rest| rest.strip_suffix("}}"))?;
    match serde_json::from_str(&format!("{{{inner}}}")) {
        Ok(value @ Value::Object(_)) => Some(value),
        _ => None,
    }
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
fn prefix(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Objects and arrays (no scalars), each once, in the order first seen. Equal values are found
/// through a hash that ignores the order of object keys, so the work stays linear.
#[derive(Default)]
struct Distinct {
    values: Vec<Value>,
    by_hash: HashMap<u64, Vec<usize>>,
}

impl Distinct {
    fn push(&mut self, value: Value) {
        if !value.is_object() && !value.is_array() {
            return;
        }
        let mut hasher = DefaultHasher::new();
        hash_value(&value, &mut hasher);
        let same_hash = self.by_hash.entry(hasher.finish()).or_default();
        if same_hash.iter().any(|&i| self.values[i] == value) {
            return;
        }
        same_hash.push(self.values.len());
        self.values.push(value);
    }
}

/// Hashes `value` consistently with its `PartialEq`: object keys in any order hash the same.
fn hash_value(value: &Value, state: &mut impl Hasher) {
    match value {
        Value::Null => 0u8.hash(state),
        Value::Bool(b) => (1u8, b).hash(state),
        Value::Number(n) => (2u8, n.to_string()).hash(state),
        Value::String(s) => (3u8, s).hash(state),
        Value::Array(items) => {
            (4u8, items.len()).hash(state);
            for item in items {
                hash_value(item, state);
            }
        }
        Value::Object(map) => {
            // The sum of the entries' hashes does not depend on their order.
            let mut sum = 0u64;
            for (key, item) in map {
                let mut entry = DefaultHasher::new();
                key.hash(&mut entry);
                hash_value(item, &mut entry);
                sum = sum.wrapping_add(entry.finish());
            }
            (5u8, map.len(), sum).hash(state);
        }
    }
}

/// The contents of the code fences in `text` (language tag line removed). An unclosed fence
/// runs to the end of the text.
///
/// The first line after an opening fence is an info string (e.g. `json`) unless it holds a
/// bracket. The next line end and the next bracket are looked up through cursors that only
/// move forward, so a text made of fences without line ends is still read once.
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut newline = NextMatch::new(text.as_bytes(), |b| b == b'\n');
    let mut bracket = NextMatch::new(text.as_bytes(), |b| b == b'{' || b == b'[');
    let mut position = 0;
    while let Some(found) = text[position..].find("```") {
        let after = position + found + 3;
        // The info string (e.g. `json`) runs to the end of the line.
        let body_start = match newline.at_or_after(after) {
            Some(line_end) if bracket.at_or_after(after).is_none_or(|b| b > line_end) => {
                line_end + 1
            }
            _ => after,
        };
        match text[body_start..].find("```") {
            Some(end) => {
                blocks.push(&text[body_start..body_start + end]);
                position = body_start + end + 3;
            }
            None => {
                blocks.push(&text[body_start..]);
                break;
            }
        }
    }
    blocks
}

/// The first byte at or after a position that matches a predicate, for positions that never
/// decrease: each byte is examined at most once over all lookups.
struct NextMatch<'a> {
    bytes: &'a [u8],
    matches: fn(u8) -> bool,
    /// Bytes before `searched` have been examined; `found` is the first match at or after the
    /// position of the last lookup (`None`: no match up to the end).
    searched: usize,
    found: Option<usize>,
}

impl<'a> NextMatch<'a> {
    fn new(bytes: &'a [u8], matches: fn(u8) -> bool) -> Self {
        Self {
            bytes,
            matches,
            searched: 0,
            found: None,
        }
    }

    fn at_or_after(&mut self, position: usize) -> Option<usize> {
        if let Some(found) = self.found {
            if found >= position {
                return Some(found);
            }
        } else if self.searched > position {
            return None;
        }
        let start = self.searched.max(position);
        self.found = self.bytes[start.min(self.bytes.len())..]
            .iter()
            .position(|&b| (self.matches)(b))
            .map(|offset| start + offset);
        self.searched = self.found.map_or(self.bytes.len() + 1, |f| f + 1);
        self.found
    }
}

/// What a scan learned about one opening bracket (outside strings, as the scan read them).
/// Positions are `u32`: texts are cut at [`MAX_SCAN_BYTES`].
#[derive(Clone, Copy, Debug, Default)]
struct Candidate {
    /// Just past the matching closing bracket; [`NO_MATCH`] when it never closes or a closing
    /// bracket of the wrong kind comes first; 0 when no scan has read this bracket.
    end: u32,
    /// Nesting depth of brackets inside it, itself included (saturating).
    depth: u32,
    /// The scan that found it (its trailing commas apply).
    scan: u32,
}

/// [`Candidate::end`] of a bracket that is never matched.
const NO_MATCH: u32 = u32::MAX;

/// Objects and arrays embedded in `text`, outermost first, left to right: at each opening
/// bracket, the text up to its matching bracket is parsed (trailing commas tolerated); a
/// value found there is taken and the search resumes after it, otherwise at the next byte.
///
/// This is what trying every opening bracket with its own bracket matcher gives, computed in
/// linear time: a scan started at an opening bracket matches all the brackets it reads outside
/// strings, and the result for each equals what a scan started there would find. Only brackets
/// that an earlier scan read inside a string need a scan of their own; at most
/// `overlapping_scans` of those start inside an earlier scan's span. A failed parse that stops
/// at byte `e` rules out, without parsing, the candidates nested in it that start before `e`
/// and end after it: the parser read them as values and failed inside them.
fn embedded_values(text: &str, overlapping_scans: usize) -> Vec<Value> {
    let text = prefix(text, MAX_SCAN_BYTES);
    let bytes = text.as_bytes();
    let mut candidates = vec![Candidate::default(); bytes.len()];
    let mut trailing_commas: Vec<Vec<usize>> = Vec::new();
    let mut scanned_until = 0;
    let mut overlapping = 0;
    // (scan, error position) of failed parses whose error lies ahead.
    let mut failures: Vec<(u32, usize)> = Vec::new();
    let mut values = Vec::new();
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] != b'{' && bytes[index] != b'[' {
            index += 1;
            continue;
        }
        if candidates[index].end == 0 {
            let inside_earlier = index < scanned_until;
            if !inside_earlier || overlapping < overlapping_scans {
                overlapping += usize::from(inside_earlier);
                let id = u32::try_from(trailing_commas.len()).unwrap_or(u32::MAX);
                let (commas, stop) = scan(bytes, index, id, &mut candidates);
                trailing_commas.push(commas);
                scanned_until = scanned_until.max(stop);
            }
        }
        failures.retain(|&(_, error)| error > index);
        let Candidate { end, depth, scan } = candidates[index];
        if end != 0 && end != NO_MATCH && depth as usize <= MAX_DEPTH {
            let end = end as usize;
            let ruled_out = failures
                .iter()
                .any(|&(s, error)| s == scan && index + 1 < error && error <= end);
            if !ruled_out {
                match parse_candidate(bytes, index, end, &trailing_commas[scan as usize]) {
                    Ok(value) => {
                        values.push(value);
                        index = end;
                        continue;
                    }
                    Err(error) => failures.push((scan, error)),
                }
            }
        }
        index += 1;
    }
    values
}

/// Matches brackets from the opening bracket at `start` with a fresh string state, until its
/// bracket closes, a closing bracket of the wrong kind comes, or the text ends. Records every
/// opening bracket read outside strings in `candidates` (as scan `id`) and returns the
/// positions of the trailing commas it read (sorted) and the position where it stopped.
fn scan(bytes: &[u8], start: usize, id: u32, candidates: &mut [Candidate]) -> (Vec<usize>, usize) {
    // (position, expected closing bracket, depth so far)
    let mut open: Vec<(usize, u8, u32)> = Vec::new();
    let mut commas = Vec::new();
    let mut comma: Option<usize> = None;
    let mut in_string = false;
    let mut escaped = false;
    // Positions fit in `u32`: the text was cut at `MAX_SCAN_BYTES`.
    let record = |candidates: &mut [Candidate], at: usize, end: Option<usize>, depth| {
        if candidates[at].end == 0 {
            candidates[at] = Candidate {
                end: end.map_or(NO_MATCH, |e| u32::try_from(e).unwrap_or(NO_MATCH)),
                depth,
                scan: id,
            };
        }
    };
    for (position, &byte) in bytes.iter().enumerate().skip(start) {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'{' | b'[' => {
                comma = None;
                let closing = if byte == b'{' { b'}' } else { b']' };
                open.push((position, closing, 1));
            }
            b'}' | b']' => {
                commas.extend(comma.take());
                match open.pop() {
                    Some((at, closing, depth)) if closing == byte => {
                        record(candidates, at, Some(position + 1), depth);
                        match open.last_mut() {
                            Some(parent) => parent.2 = parent.2.max(depth.saturating_add(1)),
                            None => return (commas, position + 1),
                        }
                    }
                    Some((at, _, depth)) => {
                        record(candidates, at, None, depth);
                        for (at, _, depth) in open {
                            record(candidates, at, None, depth);
                        }
                        return (commas, position + 1);
                    }
                    // Not reached: the scan returns when its first bracket closes.
                    None => return (commas, position + 1),
                }
            }
            b'"' => {
                comma = None;
                in_string = true;
            }
            b',' => comma = Some(position),
            b' ' | b'\t' | b'\n' | b'\r' => {}
            _ => comma = None,
        }
    }
    for (at, _, depth) in open {
        record(candidates, at, None, depth);
    }
    (commas, bytes.len())
}

/// Parses `bytes[start..end]` without the trailing commas among `commas` (sorted). On failure,
/// returns the position just past the last byte the parser read: the error is there.
fn parse_candidate(
    bytes: &[u8],
    start: usize,
    end: usize,
    commas: &[usize],
) -> Result<Value, usize> {
    let first = commas.partition_point(|&c| c < start);
    let mut reader = SkippingReader {
        bytes,
        position: start,
        end,
        skip: &commas[first..],
    };
    let mut deserializer = serde_json::Deserializer::from_reader(&mut reader);
    let parsed = Value::deserialize(&mut deserializer).and_then(|value| {
        deserializer.end()?;
        Ok(value)
    });
    parsed.map_err(|_| reader.position)
}

/// Reads `bytes[position..end]`, leaving out the positions in `skip` (sorted).
struct SkippingReader<'a> {
    bytes: &'a [u8],
    position: usize,
    end: usize,
    skip: &'a [usize],
}

impl Read for SkippingReader<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        while let Some((&next, rest)) = self.skip.split_first() {
            if next > self.position {
                break;
            }
            if next == self.position {
                self.position += 1;
            }
            self.skip = rest;
        }
        let stop = self.skip.first().map_or(self.end, |&s| s.min(self.end));
        let count = buffer.len().min(stop.saturating_sub(self.position));
        buffer[..count].copy_from_slice(&self.bytes[self.position..self.position + count]);
        self.position += count;
        Ok(count)
    }
}

/// `text` with every comma that is followed only by whitespace and a closing bracket removed
/// (outside strings).
fn without_trailing_commas(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for (i, &c) in chars.iter().enumerate() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            out.push(c);
            continue;
        }
        if c == '"' {
            in_string = true;
        }
        if c == ',' {
            let next = chars[i + 1..].iter().find(|n| !n.is_whitespace());
            if matches!(next, Some('}') | Some(']')) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn bare_json_is_found() {
        assert_eq!(json_values(r#"{"a": 1}"#), vec![json!({"a": 1})]);
    }

    #[test]
    fn fenced_json_with_language_tag_is_found() {
        let text = "Here you go:\n```json\n{\"a\": [1, 2]}\n```\nDone.";
        assert_eq!(json_values(text), vec![json!({"a": [1, 2]})]);
    }

    #[test]
    fn fence_without_language_tag_and_unclosed_fence() {
        assert_eq!(json_values("```\n{\"a\": 1}\n```"), vec![json!({"a": 1})]);
        assert_eq!(json_values("```json\n{\"a\": 1}"), vec![json!({"a": 1})]);
        assert_eq!(json_values("```{\"a\": 1}```"), vec![json!({"a": 1})]);
    }

    #[test]
    fn prose_around_an_object_is_ignored() {
        let text =
            r#"I will call the tool. {"name": "x", "arguments": {"q": "a } b"}} Hope that helps."#;
        assert_eq!(
            json_values(text),
            vec![json!({"name": "x", "arguments": {"q": "a } b"}})]
        );
    }

    #[test]
    fn trailing_commas_are_tolerated_but_not_inside_strings() {
        assert_eq!(
            parse_lenient(r#"{"a": [1, 2,], "b": ",}",}"#),
            Some(json!({"a": [1, 2], "b": ",}"}))
        );
    }

    #[test]
    fn several_objects_are_returned_left_to_right() {
        let text = r#"first {"a": 1} then {"b": 2}"#;
        assert_eq!(json_values(text), vec![json!({"a": 1}), json!({"b": 2})]);
    }

    #[test]
    fn broken_outer_object_still_yields_inner_ones() {
        let text = r#"{"broken": {"ok": true} oops"#;
        assert_eq!(json_values(text), vec![json!({"ok": true})]);
    }

    #[test]
    fn no_json_gives_nothing() {
        assert!(json_values("The weather is nice, no braces here.").is_empty());
        assert!(json_values("a { b").is_empty());
        assert!(json_values("\"just a string\"").is_empty());
        assert!(json_values("").is_empty());
    }

    /// The former implementation: a bracket matcher started at every opening bracket.
    /// Quadratic, kept as the reference the linear one must agree with.
    fn embedded_values_reference(text: &str) -> Vec<Value> {
        let mut values = Vec::new();
        let bytes = text.as_bytes();
        let mut index = 0;
        while index < bytes.len() {
            if bytes[index] == b'{' || bytes[index] == b'[' {
                if let Some(end) = balanced_end_reference(text, index) {
                    if let Some(value) = parse_lenient(&text[index..end]) {
                        values.push(value);
                        index = end;
                        continue;
                    }
                }
            }
            index += 1;
        }
        values
    }

    fn balanced_end_reference(text: &str, start: usize) -> Option<usize> {
        let mut stack: Vec<u8> = Vec::new();
        let mut in_string = false;
        let mut escaped = false;
        for (offset, byte) in text.as_bytes()[start..].iter().enumerate() {
            if in_string {
                match byte {
                    _ if escaped => escaped = false,
                    b'\\' => escaped = true,
                    b'"' => in_string = false,
                    _ => {}
                }
                continue;
            }
            match byte {
                b'"' => in_string = true,
                b'{' => stack.push(b'}'),
                b'[' => stack.push(b']'),
                b'}' | b']' => {
                    if stack.pop() != Some(*byte) {
                        return None;
                    }
                    if stack.is_empty() {
                        return Some(start + offset + 1);
                    }
                }
                _ => {}
            }
        }
        None
    }

    #[test]
    fn a_bracket_inside_a_string_of_a_broken_candidate_is_still_tried() {
        assert_eq!(json_values(r#"{"a": "x} {"b": 1}"#), vec![json!({"b": 1})]);
        assert_eq!(json_values(r#"{"a": "[1, 2]" oops}"#), vec![json!([1, 2])]);
    }

    #[test]
    fn max_depth_is_serde_json_limit() {
        let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert!(serde_json::from_str::<Value>(&nested(MAX_DEPTH)).is_ok());
        assert!(serde_json::from_str::<Value>(&nested(MAX_DEPTH + 1)).is_err());
        let text = format!("x {} y", nested(MAX_DEPTH + 1));
        // The outer candidate is too deep; the one inside it is not.
        assert_eq!(
            json_values(&text),
            vec![serde_json::from_str::<Value>(&nested(MAX_DEPTH)).unwrap()]
        );
    }

    #[test]
    fn only_the_first_max_scan_bytes_are_read() {
        let text = format!("{}{{\"late\": 1}}", " ".repeat(MAX_SCAN_BYTES));
        assert!(json_values(&text).is_empty());
        let text = format!("{}{{\"early\": 1}}", " ".repeat(MAX_SCAN_BYTES - 20));
        assert_eq!(json_values(&text), vec![json!({"early": 1})]);
        // A cut inside a multi-byte character is moved back to its start.
        assert_eq!(prefix("aé", 2), "a");
    }

    #[test]
    fn duplicates_are_found_whatever_the_key_order() {
        let text = r#"{"a": 1, "b": [2]} and {"b": [2], "a": 1} and [1] [1]"#;
        assert_eq!(
            json_values(text),
            vec![json!({"a": 1, "b": [2]}), json!([1])]
        );
    }

    #[test]
    fn fences_without_line_ends_are_all_read() {
        let text = "```[1]```".repeat(3);
        assert_eq!(json_values(&text), vec![json!([1])]);
        let text = "```json\n[1]\n``` and ```\n[2]```";
        assert_eq!(json_values(text), vec![json!([1]), json!([2])]);
    }

    /// One mebibyte (the scan limit) of adversarial text, then the answer.
    fn adversarial(pattern: &str, answer: &str) -> String {
        let room = MAX_SCAN_BYTES - answer.len();
        let mut text = pattern.repeat(room / pattern.len());
        text.push_str(answer);
        text
    }

    #[test]
    fn adversarial_megabytes_give_the_right_values() {
        let answer = r#"{"name": "search", "arguments": {"q": "x"}}"#;
        let expected = json!({"name": "search", "arguments": {"q": "x"}});
        // Unclosed brackets: the answer closes the innermost ones only.
        assert_eq!(
            json_values(&adversarial("[", answer)),
            vec![expected.clone()]
        );
        // Unclosed objects: `{"a":{"a":...` never closes, the answer is nested in it.
        assert_eq!(
            json_values(&adversarial(r#"{"a":"#, answer)),
            vec![expected.clone()]
        );
        // Unbalanced quotes: every other bracket is inside a string.
        let found = json_values(&adversarial(r#""{"#, answer));
        assert!(
            found.is_empty() || found == vec![expected.clone()],
            "{found:?}"
        );
        // Every bracket after the first is inside a string for every scan before it, so each
        // needs a scan of its own: past `MAX_OVERLAPPING_SCANS` of them the rest, the answer
        // included, is not tried. The text is still read in linear time.
        assert!(json_values(&adversarial(r#"[\""#, answer)).is_empty());
        // Deep nesting that closes: too deep for serde_json, the innermost values are found.
        let depth = MAX_SCAN_BYTES / 2 - 8;
        let text = format!("{}[1]{}", "[".repeat(depth), "]".repeat(depth));
        let mut inner = json!([1]);
        for _ in 1..MAX_DEPTH {
            inner = json!([inner]);
        }
        assert_eq!(json_values(&text), vec![inner]);
        // Many small values, each found once.
        let text = "[1] ".repeat(25_000);
        assert_eq!(json_values(&text), vec![json!([1])]);
        let text: String = (0..50_000).map(|i| format!("[{i}]")).collect();
        assert_eq!(json_values(&text).len(), 50_000);
    }

    proptest! {
        #[test]
        fn linear_search_agrees_with_trying_every_bracket(
            text in "[\\[\\]{}\",:\\\\ a1]{0,40}"
        ) {
            prop_assert_eq!(
                embedded_values(&text, usize::MAX),
                embedded_values_reference(&text)
            );
        }

        #[test]
        fn linear_search_agrees_on_json_like_text(
            text in "(\\{|\\}|\\[|\\]|\"|,|:|\\\\| |1|\"a\"|\\[1,\\]|\\{\"k\":1\\}){0,24}"
        ) {
            prop_assert_eq!(
                embedded_values(&text, usize::MAX),
                embedded_values_reference(&text)
            );
        }

        #[test]
        fn any_object_survives_prose_and_fences(
            key in "[a-z]{1,8}",
            value in "[a-zA-Z0-9 {}\\[\\],:]{0,20}",
            before in "[a-zA-Z .!?]{0,30}",
            after in "[a-zA-Z .!?]{0,30}",
            fenced in any::<bool>(),
        ) {
            let object = json!({ key: value });
            let body = object.to_string();
            let text = if fenced {
                format!("{before}\n```json\n{body}\n```\n{after}")
            } else {
                format!("{before} {body} {after}")
            };
            let found = json_values(&text);
            prop_assert_eq!(found.first(), Some(&object));
        }
    }
}
