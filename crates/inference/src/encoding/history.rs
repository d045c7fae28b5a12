//! `EncodeCache`: the bytes of the messages a model already wrote, reused for the next
//! request of the same history, so a request costs what changed rather than its length.
//!
//! # What the cache is keyed by, and why
//!
//! By *identity in the persistent history*. [`Messages`] is a persistent vector of
//! `Arc<Message>`: consecutive requests of one execution are clones of one history with a few
//! messages appended, so they share the very same `Arc`s, and whole leaves of 32 of them.
//! [`Messages::common_prefix_len`] finds how many leading messages two histories share by
//! comparing leaf pointers (32 messages at a time) and then message pointers: about
//! `n / 32` comparisons, with no hashing and no look at the text. A history whose middle was
//! replaced (a summary) shares only the part before the change, so only that part is reused.
//!
//! Pointers are safe keys here because each cache slot keeps a clone of the history it
//! encoded: the messages it compares against stay alive, so their addresses cannot be reused
//! by other messages. Pointers never leave the cache: what is sent and what is persisted is
//! the JSON, which depends on content only. Content hashes were the alternative; they cost a
//! pass over every message's text on every request, which is the very cost to remove.
//!
//! A message's bytes depend on the writer's [`MessageWriter::State`] before it (e.g. whether
//! an Anthropic run of tool results is open), and that state depends only on the messages
//! before it, so the bytes of a shared prefix are valid as they are. The cache keeps, per
//! message, where its bytes end and the state before it: a request that needs a message
//! written differently (an Anthropic cache breakpoint on it) writes that one message again
//! and splices it in.
//!
//! # Bounds
//!
//! Per model instance (clones of a provider share it): at most [`MAX_SLOTS`] histories and
//! [`MAX_BYTES`] of encoded bytes (counted per slot; slots share the bytes of a common
//! prefix), least recently used first out. A history larger than the byte bound is encoded
//! fresh each time. No globals: a cache lives and dies with its model.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;
use messages::{Message, Messages, SharedSlice};

use super::array_out::{ArrayOut, JsonBytes};
use crate::error::InferenceError;
use crate::request::ToolSchema;

/// Most histories one model keeps the bytes of (e.g. concurrent executions).
pub(crate) const MAX_SLOTS: usize = 8;
/// Most encoded bytes one model keeps (counted per history).
pub(crate) const MAX_BYTES: usize = 64 << 20;
/// Small blocks of messages written by consecutive requests are merged up to this many
/// messages, so a body has about `n / 64` chunks however few messages each step adds.
const BLOCK_MESSAGES: usize = 64;

/// A provider's writer of the `messages` array, one message at a time. The same writer fills
/// the public `Value` bodies and the bytes a provider sends, so they cannot differ.
pub(crate) trait MessageWriter: Send + Sync {
    /// What the writer carries from one message to the next (small, `Copy`).
    type State: Copy + Default + Send + Sync + fmt::Debug + 'static;

    /// Writes what message `index` of `messages` (`message`) adds to the array, given the
    /// state after the messages before it, and returns the state after it. `marked`: the
    /// message carries a prompt-cache breakpoint.
    ///
    /// # Errors
    /// Only when `out` cannot take the JSON.
    fn write<O: ArrayOut>(
        &self,
        messages: &Messages,
        index: usize,
        message: &Message,
        state: Self::State,
        marked: bool,
        out: &mut O,
    ) -> Result<Self::State, InferenceError>;

    /// Writes what closes the array after its last message (not the `]`).
    ///
    /// # Errors
    /// Only when `out` cannot take the JSON.
    fn finish<O: ArrayOut>(
        &self,
        messages: &Messages,
        state: Self::State,
        out: &mut O,
    ) -> Result<(), InferenceError>;
}

/// Writes every message of `messages` to `out`; `marks` (ascending) are the positions of the
/// messages that carry a breakpoint.
pub(crate) fn write_all<W: MessageWriter, O: ArrayOut>(
    writer: &W,
    messages: &Messages,
    marks: &[usize],
    out: &mut O,
) -> Result<(), InferenceError> {
    let mut state = W::State::default();
    for (index, message) in messages.iter().enumerate() {
        let marked = marks.contains(&index);
        state = writer.write(messages, index, message, state, marked, out)?;
    }
    writer.finish(messages, state, out)
}

/// The `messages` array of one request, as chunks.
#[derive(Debug)]
pub(crate) struct EncodedMessages {
    /// The array's bytes, brackets included.
    pub(crate) chunks: Vec<Bytes>,
    /// Positions of the system and developer messages (providers that send the system
    /// prompt apart read their texts).
    pub(crate) system: Vec<usize>,
}

/// The bytes of one write of consecutive messages, with where each message's bytes end and
/// the writer's state before each.
struct Block<S> {
    bytes: Bytes,
    first: usize,
    ends: Vec<usize>,
    states: Vec<S>,
}

impl<S> Block<S> {
    fn start(&self, local: usize) -> usize {
        local.checked_sub(1).map_or(0, |i| self.ends[i])
    }
}

/// The first `count` messages of a block.
struct Span<S> {
    block: Arc<Block<S>>,
    count: usize,
}

impl<S> Clone for Span<S> {
    fn clone(&self) -> Self {
        Self {
            block: Arc::clone(&self.block),
            count: self.count,
        }
    }
}

impl<S> Span<S> {
    fn byte_len(&self) -> usize {
        self.block.start(self.count)
    }

    fn end(&self) -> usize {
        self.block.first + self.count
    }
}

/// One history the cache holds the bytes of.
struct Slot<S> {
    id: u64,
    messages: Messages,
    spans: Vec<Span<S>>,
    end_state: S,
    system: Vec<usize>,
    bytes: usize,
    used: u64,
}

/// What a request can reuse: the bytes of its first `len` messages.
struct Prefix<S> {
    /// The slot they came from, when the request extends its whole history.
    extends: Option<u64>,
    len: usize,
    spans: Vec<Span<S>>,
    state: S,
    system: Vec<usize>,
}

struct Inner<S> {
    slots: Vec<Slot<S>>,
    tick: u64,
    next_id: u64,
    tools: Option<(SharedSlice<ToolSchema>, Bytes)>,
}

/// A model's cache of encoded messages (see the module documentation).
pub(crate) struct EncodeCache<S> {
    inner: Mutex<Inner<S>>,
    max_slots: usize,
}

impl<S> fmt::Debug for EncodeCache<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = self.lock();
        f.debug_struct("EncodeCache")
            .field("histories", &inner.slots.len())
            .field("max_histories", &self.max_slots)
            .finish()
    }
}

impl<S> EncodeCache<S> {
    fn lock(&self) -> MutexGuard<'_, Inner<S>> {
        // Nothing panics while the lock is held; a poisoned cache is still consistent.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<S: Copy + Default> EncodeCache<S> {
    /// A cache of at most `max_slots` histories (0: nothing is kept; every request is
    /// encoded fresh).
    pub(crate) fn new(max_slots: usize) -> Self {
        Self {
            inner: Mutex::new(Inner {
                slots: Vec::new(),
                tick: 0,
                next_id: 0,
                tools: None,
            }),
            max_slots,
        }
    }

    /// The `messages` array of a request: the bytes of the longest prefix some earlier
    /// request of this model shared, then the new messages written by `writer`. The messages
    /// at `marks` (ascending) are written marked. The result is byte for byte
    /// [`write_all`] into [`JsonBytes`], in brackets.
    pub(crate) fn encode<W: MessageWriter<State = S>>(
        &self,
        writer: &W,
        messages: &Messages,
        marks: &[usize],
    ) -> Result<EncodedMessages, InferenceError> {
        let prefix = self.prefix(messages);
        let start = prefix.len;
        let mut spans = prefix.spans;
        let mut system = prefix.system;
        let mut state = prefix.state;
        let fresh = messages.len() - start;
        if fresh > 0 {
            let mut out = JsonBytes(Vec::new());
            let mut ends = Vec::with_capacity(fresh);
            let mut states = Vec::with_capacity(fresh);
            for (offset, message) in messages.iter().skip(start).enumerate() {
                let index = start + offset;
                states.push(state);
                state = writer.write(messages, index, message, state, false, &mut out)?;
                ends.push(out.0.len());
                if message.role().is_system() {
                    system.push(index);
                }
            }
            let block = Block {
                bytes: Bytes::from(out.0),
                first: start,
                ends,
                states,
            };
            spans.push(Span {
                block: Arc::new(block),
                count: fresh,
            });
            merge_small_blocks(&mut spans);
        }

        let mut marks = marks.to_vec();
        marks.sort_unstable();
        marks.dedup();
        let mut chunks = Vec::with_capacity(spans.len() + 2 * marks.len() + 2);
        chunks.push(Bytes::from_static(b"["));
        let mut marks = marks.into_iter().peekable();
        for span in &spans {
            let block = &span.block;
            let mut cursor = 0;
            while let Some(mark) = marks.next_if(|m| *m < span.end()) {
                let (Some(local), Some(message)) =
                    (mark.checked_sub(block.first), messages.get(mark))
                else {
                    continue;
                };
                chunks.push(block.bytes.slice(cursor..block.start(local)));
                let mut marked = JsonBytes(Vec::new());
                writer.write(
                    messages,
                    mark,
                    message,
                    block.states[local],
                    true,
                    &mut marked,
                )?;
                chunks.push(Bytes::from(marked.0));
                cursor = block.ends[local];
            }
            chunks.push(block.bytes.slice(cursor..span.byte_len()));
        }
        let mut end = JsonBytes(Vec::new());
        writer.finish(messages, state, &mut end)?;
        end.0.push(b']');
        chunks.push(Bytes::from(end.0));

        if fresh > 0 {
            self.store(prefix.extends, messages, spans, state, system.clone());
        }
        Ok(EncodedMessages { chunks, system })
    }

    /// The bytes of the tool definitions `tools`, written by `write` unless the last request
    /// had the same (shared) list.
    pub(crate) fn tools(
        &self,
        tools: &SharedSlice<ToolSchema>,
        write: impl FnOnce() -> Result<Vec<u8>, InferenceError>,
    ) -> Result<Bytes, InferenceError> {
        if let Some((cached, bytes)) = &self.lock().tools {
            if cached.ptr_eq(tools) {
                return Ok(bytes.clone());
            }
        }
        let bytes = Bytes::from(write()?);
        if self.max_slots > 0 {
            self.lock().tools = Some((tools.clone(), bytes.clone()));
        }
        Ok(bytes)
    }

    /// The longest prefix of `messages` some slot holds.
    fn prefix(&self, messages: &Messages) -> Prefix<S> {
        let mut inner = self.lock();
        inner.tick += 1;
        let tick = inner.tick;
        let best = inner
            .slots
            .iter_mut()
            .map(|slot| (slot.messages.common_prefix_len(messages), slot))
            .filter(|(len, _)| *len > 0)
            .max_by_key(|(len, _)| *len);
        let Some((len, slot)) = best else {
            return Prefix {
                extends: None,
                len: 0,
                spans: Vec::new(),
                state: S::default(),
                system: Vec::new(),
            };
        };
        slot.used = tick;
        let mut spans = Vec::with_capacity(slot.spans.len() + 1);
        let mut state = slot.end_state;
        for span in &slot.spans {
            if span.end() <= len {
                spans.push(span.clone());
                continue;
            }
            let count = len - span.block.first;
            state = span.block.states[count];
            if count > 0 {
                spans.push(Span {
                    block: Arc::clone(&span.block),
                    count,
                });
            }
            break;
        }
        Prefix {
            extends: (len == slot.messages.len()).then_some(slot.id),
            len,
            spans,
            state,
            system: slot.system.iter().copied().filter(|i| *i < len).collect(),
        }
    }

    /// Keeps the bytes of `messages`: in place of the slot they extend, or as a new slot.
    fn store(
        &self,
        extends: Option<u64>,
        messages: &Messages,
        spans: Vec<Span<S>>,
        end_state: S,
        system: Vec<usize>,
    ) {
        let bytes = spans.iter().map(Span::byte_len).sum();
        if self.max_slots == 0 || bytes > MAX_BYTES {
            return;
        }
        let mut inner = self.lock();
        inner.tick += 1;
        inner.next_id += 1;
        let slot = Slot {
            id: inner.next_id,
            messages: messages.clone(),
            spans,
            end_state,
            system,
            bytes,
            used: inner.tick,
        };
        match extends.and_then(|id| inner.slots.iter().position(|s| s.id == id)) {
            Some(position) => inner.slots[position] = slot,
            None => inner.slots.push(slot),
        }
        while inner.slots.len() > self.max_slots
            || inner.slots.iter().map(|s| s.bytes).sum::<usize>() > MAX_BYTES
        {
            let Some(oldest) = inner
                .slots
                .iter()
                .enumerate()
                .min_by_key(|(_, s)| s.used)
                .map(|(i, _)| i)
            else {
                break;
            };
            inner.slots.swap_remove(oldest);
        }
    }
}

/// Merges the last blocks while together they hold at most [`BLOCK_MESSAGES`] messages, so
/// steps that each add a few messages do not leave a chunk per step.
fn merge_small_blocks<S: Copy>(spans: &mut Vec<Span<S>>) {
    while let [.., a, b] = spans.as_slice() {
        if a.count + b.count > BLOCK_MESSAGES || a.end() != b.block.first {
            return;
        }
        let a_len = a.byte_len();
        let mut bytes = Vec::with_capacity(a_len + b.byte_len());
        bytes.extend_from_slice(&a.block.bytes[..a_len]);
        bytes.extend_from_slice(&b.block.bytes[..b.byte_len()]);
        let mut ends = a.block.ends[..a.count].to_vec();
        ends.extend(b.block.ends[..b.count].iter().map(|e| e + a_len));
        let mut states = a.block.states[..a.count].to_vec();
        states.extend_from_slice(&b.block.states[..b.count]);
        let merged = Span {
            count: a.count + b.count,
            block: Arc::new(Block {
                bytes: Bytes::from(bytes),
                first: a.block.first,
                ends,
                states,
            }),
        };
        spans.truncate(spans.len() - 2);
        spans.push(merged);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use messages::Role;
    use serde_json::{json, Value};

    /// Writes each message as `{"n": text}`, and a `{"run": k}` element before the first
    /// message after a run of tool messages, `k` its length (state-dependent bytes); marked
    /// messages get `"m": true`.
    struct Toy;

    impl MessageWriter for Toy {
        type State = (bool, u8);

        fn write<O: ArrayOut>(
            &self,
            _messages: &Messages,
            _index: usize,
            message: &Message,
            (any, run): (bool, u8),
            marked: bool,
            out: &mut O,
        ) -> Result<(bool, u8), InferenceError> {
            if message.role() == Role::Tool {
                return Ok((any, run.saturating_add(1)));
            }
            let mut first = !any;
            if run > 0 {
                out.element(json!({ "run": run }), first)?;
                first = false;
            }
            let mut value = json!({ "n": message.text() });
            if marked {
                value["m"] = json!(true);
            }
            out.element(value, first)?;
            Ok((true, 0))
        }

        fn finish<O: ArrayOut>(
            &self,
            _messages: &Messages,
            (any, run): (bool, u8),
            out: &mut O,
        ) -> Result<(), InferenceError> {
            if run > 0 {
                out.element(json!({ "run": run }), !any)?;
            }
            Ok(())
        }
    }

    fn fresh(messages: &Messages, marks: &[usize]) -> Vec<u8> {
        let mut values = Vec::new();
        write_all(&Toy, messages, marks, &mut values).unwrap();
        serde_json::to_vec(&Value::Array(values)).unwrap()
    }

    fn history(n: usize) -> Messages {
        (0..n)
            .map(|i| match i % 3 {
                2 => Message::tool_result(format!("c{i}"), "f", "r"),
                _ => Message::user(format!("m{i}")),
            })
            .collect()
    }

    #[test]
    fn extending_a_history_reuses_its_bytes_and_merges_small_blocks() {
        let cache = EncodeCache::new(MAX_SLOTS);
        let mut messages = history(200);
        let first = cache.encode(&Toy, &messages, &[]).unwrap();
        assert_eq!(first.chunks.concat(), fresh(&messages, &[]));
        for step in 0..100 {
            messages = messages.concat(&history(3 + step % 2));
            let marks = [messages.len() / 2, messages.len() - 1];
            let encoded = cache.encode(&Toy, &messages, &marks).unwrap();
            assert_eq!(
                encoded.chunks.concat(),
                fresh(&messages, &marks),
                "step {step}"
            );
            assert!(encoded.chunks.len() < 20, "{} chunks", encoded.chunks.len());
        }
        assert_eq!(
            cache.lock().slots.len(),
            1,
            "each request extended the last"
        );
    }

    #[test]
    fn a_replaced_middle_reuses_only_what_comes_before_it() {
        let cache = EncodeCache::new(MAX_SLOTS);
        let long = history(100);
        cache.encode(&Toy, &long, &[]).unwrap();
        let head: Messages = long.iter_shared().take(40).cloned().collect();
        let summarized = head.appended(Message::user("summary")).concat(&history(7));
        let encoded = cache.encode(&Toy, &summarized, &[3]).unwrap();
        assert_eq!(encoded.chunks.concat(), fresh(&summarized, &[3]));
        // Both histories stay: the second did not extend the first.
        assert_eq!(cache.lock().slots.len(), 2);
        let again = cache.encode(&Toy, &long, &[]).unwrap();
        assert_eq!(again.chunks.concat(), fresh(&long, &[]));
    }

    #[test]
    fn slots_are_bounded_and_a_disabled_cache_keeps_nothing() {
        let cache = EncodeCache::new(3);
        for i in 0..10 {
            let messages = Messages::from(vec![Message::user(format!("conversation {i}"))]);
            cache.encode(&Toy, &messages, &[]).unwrap();
        }
        assert_eq!(cache.lock().slots.len(), 3);
        let off = EncodeCache::new(0);
        let messages = history(10);
        let encoded = off.encode(&Toy, &messages, &[]).unwrap();
        assert_eq!(encoded.chunks.concat(), fresh(&messages, &[]));
        assert!(off.lock().slots.is_empty());
    }
}
