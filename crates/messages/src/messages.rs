//! `Messages`: an ordered, immutable, cheaply cloned list of messages.

use std::fmt::Write as _;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::persistent::PersistentVec;
use crate::{Message, MessagesError, Role};

/// An ordered list of messages with structural sharing.
///
/// Cloning is O(1) and appending to a clone is O(log n): histories are shared between clones,
/// never copied. Every method that "changes" the list returns a new one.
#[derive(Clone, Default)]
pub struct Messages {
    /// The list behind one handle (none when empty): a clone touches only the handle's
    /// reference count, never the shared history's. Many runs that each add a message to one
    /// shared history (one system prompt and history, many users) then clone their own
    /// handles, on their own cores, instead of all writing to the history's counts.
    list: Option<Arc<List>>,
}

/// What a [`Messages`] handle holds.
#[derive(Default)]
struct List {
    items: PersistentVec<Arc<Message>>,
    /// How many of the messages carry tool calls, kept by the two places that build a list
    /// (`extended_shared` and `from_iter`), so [`Messages::tool_call_ids`] can stop at the
    /// earliest of them instead of walking the whole history.
    with_calls: usize,
}

/// The items of every empty list.
static NO_ITEMS: PersistentVec<Arc<Message>> = PersistentVec::new();

impl Messages {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// The list of `items`, `with_calls` of them with tool calls.
    fn of(items: PersistentVec<Arc<Message>>, with_calls: usize) -> Self {
        Self {
            list: (items.len() > 0).then(|| Arc::new(List { items, with_calls })),
        }
    }

    fn items(&self) -> &PersistentVec<Arc<Message>> {
        self.list.as_ref().map_or(&NO_ITEMS, |list| &list.items)
    }

    fn with_calls(&self) -> usize {
        self.list.as_ref().map_or(0, |list| list.with_calls)
    }

    /// Number of messages.
    pub fn len(&self) -> usize {
        self.items().len()
    }

    /// True when there are no messages.
    pub fn is_empty(&self) -> bool {
        self.items().len() == 0
    }

    /// Messages in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Message> + ExactSizeIterator + '_ {
        // A persistent vector iterates forwards only; reverse iteration collects indices lazily.
        MessagesIter {
            messages: self,
            front: 0,
            back: self.len(),
        }
    }

    /// The shared messages in order (clone one to keep it without copying the message).
    pub fn iter_shared(&self) -> impl ExactSizeIterator<Item = &Arc<Message>> + '_ {
        self.items().iter()
    }

    /// How many leading messages `self` and `other` share (the same message objects, as in a
    /// list and an extended clone of it). Cheap for lists that share their history: parts held
    /// in common are skipped without looking at their messages.
    ///
    /// ```
    /// use messages::{Message, Messages};
    ///
    /// let history = Messages::from(vec![Message::user("hi"), Message::assistant("hello")]);
    /// let longer = history.appended(Message::user("again"));
    /// assert_eq!(history.common_prefix_len(&longer), 2);
    /// // Equal text is not the same message.
    /// let rebuilt = Messages::from(vec![Message::user("hi")]);
    /// assert_eq!(history.common_prefix_len(&rebuilt), 0);
    /// ```
    pub fn common_prefix_len(&self, other: &Messages) -> usize {
        self.items().common_prefix_len(other.items(), Arc::ptr_eq)
    }

    /// The ids of the tool calls in the list, newest message first (a message's calls in the
    /// order it holds them). Visits only the messages from the last one back to the earliest
    /// that has tool calls: for a history of questions and answers with the calls of one
    /// execution at its end, the cost does not grow with the history.
    ///
    /// ```
    /// use messages::{Message, Messages, ToolCall};
    /// use serde_json::json;
    ///
    /// let history = Messages::from(vec![
    ///     Message::user("hi"),
    ///     Message::assistant("").with_tool_calls(vec![ToolCall::new("call_1", "ls", json!({}))]),
    ///     Message::tool_result("call_1", "ls", "a.txt"),
    ///     Message::assistant("").with_tool_calls(vec![ToolCall::new("call_2", "ls", json!({}))]),
    /// ]);
    /// let ids: Vec<&str> = history.tool_call_ids().collect();
    /// assert_eq!(ids, ["call_2", "call_1"]);
    /// ```
    pub fn tool_call_ids(&self) -> impl Iterator<Item = &str> + '_ {
        let mut left = self.with_calls();
        self.iter()
            .rev()
            .take_while(move |message| {
                let more = left > 0;
                left = left.saturating_sub(usize::from(message.has_tool_calls()));
                more
            })
            .flat_map(|message| message.tool_calls().iter().map(|call| call.id()))
    }

    /// Whether the list ends with `tail`'s messages themselves: the same shared objects, not
    /// equal copies (false for an empty `tail`). A processor that appends a step's messages
    /// uses it to leave messages already in place alone, whatever their text.
    ///
    /// ```
    /// use messages::{Message, Messages};
    ///
    /// let step = Messages::from(vec![Message::assistant("done")]);
    /// let history = Messages::from(vec![Message::user("go")]).concat(&step);
    /// assert!(history.ends_with_same(&step));
    /// // An equal message made again is another message.
    /// assert!(!history.ends_with_same(&Messages::from(vec![Message::assistant("done")])));
    /// ```
    pub fn ends_with_same(&self, tail: &Messages) -> bool {
        let (len, n) = (self.len(), tail.len());
        n > 0
            && n <= len
            && (0..n).all(
                |i| match (self.items().get(len - n + i), tail.items().get(i)) {
                    (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                    _ => false,
                },
            )
    }

    /// The message at `index`.
    pub fn get(&self, index: usize) -> Option<&Message> {
        self.items().get(index).map(Arc::as_ref)
    }

    /// The first message.
    pub fn first(&self) -> Option<&Message> {
        self.get(0)
    }

    /// The last message.
    pub fn last(&self) -> Option<&Message> {
        self.len().checked_sub(1).and_then(|i| self.get(i))
    }

    /// A copy with `message` appended (O(log n); the original is unchanged).
    pub fn appended(&self, message: impl Into<Message>) -> Self {
        self.extended_shared([Arc::new(message.into())])
    }

    /// A copy with all `messages` appended.
    pub fn extended<I>(&self, messages: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<Message>,
    {
        self.extended_shared(messages.into_iter().map(|m| Arc::new(m.into())))
    }

    /// A copy with the shared `messages` appended (no copy of the messages themselves).
    pub fn extended_shared<I>(&self, messages: I) -> Self
    where
        I: IntoIterator<Item = Arc<Message>>,
    {
        let mut messages = messages.into_iter().peekable();
        if messages.peek().is_none() {
            return self.clone();
        }
        let mut items = self.items().clone();
        let mut with_calls = self.with_calls();
        items.reserve(messages.size_hint().0);
        for message in messages {
            with_calls += usize::from(message.has_tool_calls());
            items.push(message);
        }
        Self::of(items, with_calls)
    }

    /// A copy with every message of `other` appended (shares the messages themselves).
    pub fn concat(&self, other: &Messages) -> Self {
        if other.is_empty() {
            return self.clone();
        }
        if self.is_empty() {
            return other.clone();
        }
        self.extended_shared(other.iter_shared().cloned())
    }

    /// The messages for which `predicate` is true.
    pub fn filter(&self, mut predicate: impl FnMut(&Message) -> bool) -> Self {
        self.items()
            .iter()
            .filter(|m| predicate(m))
            .cloned()
            .collect()
    }

    /// Only messages with one of `roles`.
    pub fn for_roles(&self, roles: &[Role]) -> Self {
        self.filter(|m| roles.contains(&m.role()))
    }

    /// Messages without any of `roles`.
    pub fn except_roles(&self, roles: &[Role]) -> Self {
        self.filter(|m| !roles.contains(&m.role()))
    }

    /// The first `n` messages.
    pub fn head(&self, n: usize) -> Self {
        self.items().iter().take(n).cloned().collect()
    }

    /// The last `n` messages.
    pub fn tail(&self, n: usize) -> Self {
        let skip = self.len().saturating_sub(n);
        self.items().iter().skip(skip).cloned().collect()
    }

    /// The messages in reverse order.
    pub fn reversed(&self) -> Self {
        let mut all: Vec<Arc<Message>> = self.items().iter().cloned().collect();
        all.reverse();
        all.into_iter().collect()
    }

    /// Messages with non-empty content, tool calls, a tool call id or metadata.
    pub fn without_empty(&self) -> Self {
        self.filter(|m| !m.is_empty())
    }

    /// Consecutive messages of the same role merged into one: contents concatenated, tool calls
    /// kept (in order), metadata merged. Tool results are never merged, since each answers its
    /// own call.
    pub fn merged_per_role(&self) -> Self {
        let mut merged: Vec<Message> = Vec::new();
        for message in self.iter() {
            let mergeable = message.role() != Role::Tool;
            match merged.last_mut() {
                Some(last) if mergeable && last.role() == message.role() => {
                    let mut content = last.content().clone();
                    for part in message.content().parts() {
                        content = content.with_part(part.clone());
                    }
                    let calls: Vec<_> = last
                        .tool_calls()
                        .iter()
                        .chain(message.tool_calls())
                        .cloned()
                        .collect();
                    let metadata = last.metadata().clone().merged(message.metadata());
                    *last = last
                        .clone()
                        .with_content(content)
                        .with_tool_calls(calls)
                        .with_metadata_map(metadata);
                }
                _ => merged.push(message.clone()),
            }
        }
        Self::from(merged)
    }

    /// The list as a `Vec` of owned messages.
    pub fn to_vec(&self) -> Vec<Message> {
        self.iter().cloned().collect()
    }

    /// A readable rendering, one block per message, for logs and snapshot tests:
    ///
    /// ```text
    /// user: What's the weather in Paris?
    /// assistant -> get_weather {"city":"Paris"} [call_1]
    /// tool get_weather [call_1]: 22°C
    /// assistant: It is 22°C.
    /// ```
    pub fn to_transcript(&self) -> String {
        let mut out = String::new();
        for message in self.iter() {
            write_transcript_entry(&mut out, message);
        }
        out
    }

    /// Reads a list from a JSON array of messages.
    ///
    /// # Errors
    /// A [`MessagesError`] naming the first message that cannot be read.
    pub fn from_value(value: &Value) -> Result<Self, MessagesError> {
        let items = value
            .as_array()
            .ok_or_else(|| MessagesError::InvalidMessage {
                reason: format!("expected a list of messages, got {value}"),
            })?;
        let messages = items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                Message::from_value(item).map_err(|e| match e {
                    MessagesError::InvalidMessage { reason } => MessagesError::InvalidMessage {
                        reason: format!("message {i}: {reason}"),
                    },
                    other => other,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self::from(messages))
    }
}

fn write_transcript_entry(out: &mut String, message: &Message) {
    let role = message.role();
    let text = message.text();
    let mut label = role.as_str().to_owned();
    if let Some(name) = message.name() {
        let _ = write!(label, " ({name})");
    }
    if role == Role::Tool {
        let _ = write!(
            label,
            " {} [{}]",
            message.tool_name().unwrap_or("?"),
            message.tool_call_id().unwrap_or("")
        );
    }
    let extras: Vec<String> = message
        .content()
        .parts()
        .iter()
        .filter(|p| p.as_text().is_none())
        .map(|p| match p {
            crate::ContentPart::ImageUrl { url, .. } => format!("[image {}]", shorten(url)),
            crate::ContentPart::File {
                file_name, file_id, ..
            } => format!(
                "[file {}]",
                file_name.as_deref().or(file_id.as_deref()).unwrap_or("?")
            ),
            crate::ContentPart::Audio { format, .. } => format!("[audio {format}]"),
            crate::ContentPart::Text { .. } => String::new(),
        })
        .collect();
    let mut body = text;
    for extra in extras {
        if !body.is_empty() {
            body.push(' ');
        }
        body.push_str(&extra);
    }
    if !body.is_empty() || message.tool_calls().is_empty() {
        let _ = writeln!(out, "{label}: {}", body.replace('\n', "\n    "));
    }
    for call in message.tool_calls() {
        let _ = writeln!(
            out,
            "{role} -> {} {} [{}]",
            call.name(),
            call.arguments(),
            call.id()
        );
    }
}

fn shorten(url: &str) -> String {
    if url.starts_with("data:") {
        return crate::excerpt::excerpt(url, 24).into_owned();
    }
    url.to_owned()
}

struct MessagesIter<'a> {
    messages: &'a Messages,
    front: usize,
    back: usize,
}

impl<'a> Iterator for MessagesIter<'a> {
    type Item = &'a Message;

    fn next(&mut self) -> Option<Self::Item> {
        if self.front >= self.back {
            return None;
        }
        let item = self.messages.get(self.front);
        self.front += 1;
        item
    }

    /// Jumps to the message `n` places on without visiting those between, so `skip(k)`
    /// costs one lookup rather than `k`.
    fn nth(&mut self, n: usize) -> Option<Self::Item> {
        self.front = self.front.saturating_add(n).min(self.back);
        self.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.back - self.front;
        (left, Some(left))
    }
}

impl DoubleEndedIterator for MessagesIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.front >= self.back {
            return None;
        }
        self.back -= 1;
        self.messages.get(self.back)
    }
}

impl ExactSizeIterator for MessagesIter<'_> {}

impl std::fmt::Debug for Messages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq for Messages {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl From<Vec<Message>> for Messages {
    fn from(messages: Vec<Message>) -> Self {
        messages.into_iter().map(Arc::new).collect()
    }
}

impl<const N: usize> From<[Message; N]> for Messages {
    fn from(messages: [Message; N]) -> Self {
        messages.into_iter().map(Arc::new).collect()
    }
}

impl From<Message> for Messages {
    fn from(message: Message) -> Self {
        Messages::new().appended(message)
    }
}

impl FromIterator<Message> for Messages {
    fn from_iter<I: IntoIterator<Item = Message>>(iter: I) -> Self {
        iter.into_iter().map(Arc::new).collect()
    }
}

impl FromIterator<Arc<Message>> for Messages {
    fn from_iter<I: IntoIterator<Item = Arc<Message>>>(iter: I) -> Self {
        let mut with_calls = 0;
        let items = iter
            .into_iter()
            .inspect(|message| with_calls += usize::from(message.has_tool_calls()))
            .collect();
        Self::of(items, with_calls)
    }
}

impl<'a> IntoIterator for &'a Messages {
    type Item = &'a Message;
    type IntoIter = Box<dyn DoubleEndedIterator<Item = &'a Message> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl Serialize for Messages {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for Messages {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Vec::<Message>::deserialize(deserializer)?.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolCall;
    use serde_json::json;

    fn sample() -> Messages {
        Messages::from(vec![
            Message::system("be brief"),
            Message::user("hi"),
            Message::assistant_tool_calls([ToolCall::new("c1", "t", json!({"a": 1}))]),
            Message::tool_result("c1", "t", "ok"),
            Message::assistant("done"),
        ])
    }

    #[test]
    fn skipping_and_stepping_from_both_ends_agree_with_indices() {
        let long: Messages = (0..100).map(|i| Message::user(format!("m{i}"))).collect();
        for k in [0, 1, 31, 32, 33, 99, 100, 150] {
            let texts: Vec<String> = long.iter().skip(k).map(Message::text).collect();
            let expected: Vec<String> = (k.min(100)..100).map(|i| format!("m{i}")).collect();
            assert_eq!(texts, expected, "skip {k}");
        }
        let mut iter = long.iter();
        assert_eq!(iter.nth(10).map(Message::text).as_deref(), Some("m10"));
        assert_eq!(iter.next_back().map(Message::text).as_deref(), Some("m99"));
        assert_eq!(iter.nth(87).map(Message::text).as_deref(), Some("m98"));
        assert!(iter.next().is_none());
    }

    #[test]
    fn clones_of_a_branch_leave_the_shared_history_alone() {
        // The server case: one shared history, each run adds its message and then clones
        // its list many times (sections, requests, records) on its own core.
        let shared: Messages = (0..100).map(|i| Message::user(format!("m{i}"))).collect();
        let alone = shared.items().shared_counts();
        let branch = shared.appended(Message::user("mine"));
        let branched = shared.items().shared_counts();
        assert_eq!(
            branched,
            (alone.0 + 1, alone.1 + 1),
            "the branch holds the history once"
        );
        let clones: Vec<Messages> = (0..10).map(|_| branch.clone()).collect();
        let concatenated = branch.concat(&Messages::new());
        assert_eq!(shared.items().shared_counts(), branched);
        assert_eq!(clones[9], branch);
        assert_eq!(concatenated.len(), 101);
        assert_eq!(Messages::new().concat(&branch), branch);
        assert_eq!(shared.items().shared_counts(), branched);
    }

    #[test]
    fn appended_leaves_the_original_unchanged() {
        let base = sample();
        let longer = base.appended(Message::user("more"));
        assert_eq!(base.len(), 5);
        assert_eq!(longer.len(), 6);
        assert_eq!(longer.last().unwrap().text(), "more");
        assert_eq!(base.last().unwrap().text(), "done");
    }

    #[test]
    fn role_filters_head_tail_reversed() {
        let m = sample();
        assert_eq!(m.for_roles(&[Role::User, Role::System]).len(), 2);
        assert_eq!(m.except_roles(&[Role::Tool]).len(), 4);
        assert_eq!(m.head(2).last().unwrap().text(), "hi");
        assert_eq!(m.tail(1).first().unwrap().text(), "done");
        assert_eq!(m.tail(99).len(), 5);
        assert_eq!(m.reversed().first().unwrap().text(), "done");
        assert_eq!(m.iter().next_back().unwrap().text(), "done");
        assert_eq!(m.filter(Message::is_tool_trace).len(), 2);
    }

    #[test]
    fn merged_per_role_keeps_tool_calls_and_separate_tool_results() {
        let m = Messages::from(vec![
            Message::user("a"),
            Message::user("b"),
            Message::assistant("thinking").with_metadata("k", 1),
            Message::assistant_tool_calls([ToolCall::new("c1", "t", json!({}))]),
            Message::assistant_tool_calls([ToolCall::new("c2", "t", json!({}))]),
            Message::tool_result("c1", "t", "1"),
            Message::tool_result("c2", "t", "2"),
        ]);
        let merged = m.merged_per_role();
        assert_eq!(merged.len(), 4);
        assert_eq!(merged.get(0).unwrap().text(), "a\nb");
        let assistant = merged.get(1).unwrap();
        assert_eq!(assistant.text(), "thinking");
        assert_eq!(assistant.tool_calls().len(), 2);
        assert!(assistant.metadata().contains_key("k"));
    }

    #[test]
    fn serde_is_a_plain_list_and_errors_name_the_message() {
        let m = sample();
        let value = serde_json::to_value(&m).unwrap();
        assert!(value.is_array());
        assert_eq!(Messages::from_value(&value).unwrap(), m);
        let err = Messages::from_value(&json!([{"role":"user"}, {"content":"x"}])).unwrap_err();
        assert!(err.to_string().contains("message 1: missing `role`"));
    }

    #[test]
    fn transcript_is_readable() {
        let t = sample().to_transcript();
        assert_eq!(
            t,
            "system: be brief\nuser: hi\nassistant -> t {\"a\":1} [c1]\ntool t [c1]: ok\nassistant: done\n"
        );
    }
}
