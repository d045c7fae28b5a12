//! `MessageStore`: named sections of messages plus parameters.

use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::shared_slice::SharedSlice;
use crate::{Message, Messages, MessagesError, Metadata};

/// One named section of a [`MessageStore`].
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    name: SectionName,
    messages: Messages,
}

/// The names the agents use for their sections (agents-core's `DEFAULT_SECTION`,
/// `EXECUTION_BUFFER_SECTION`, `SUMMARY_SECTION` and `BUFFER_SECTION`): a section named so
/// holds a `&'static str`, so copying it (every change to a shared store copies its list of
/// sections) touches no reference count that the copies of every run share. Any other name
/// works the same, at the cost of that count.
const WELL_KNOWN_NAMES: [&str; 4] = ["messages", "execution_buffer", "summary", "buffer"];

/// A section's name: one of [`WELL_KNOWN_NAMES`], or any other, shared.
#[derive(Clone)]
enum SectionName {
    WellKnown(&'static str),
    Other(Arc<str>),
}

impl SectionName {
    fn new(name: &str) -> Self {
        match WELL_KNOWN_NAMES.iter().find(|known| **known == name) {
            Some(known) => Self::WellKnown(known),
            None => Self::Other(Arc::from(name)),
        }
    }
}

impl std::ops::Deref for SectionName {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            Self::WellKnown(name) => name,
            Self::Other(name) => name,
        }
    }
}

impl std::fmt::Debug for SectionName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl PartialEq for SectionName {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Section {
    /// A section with the given name and messages.
    pub fn new(name: impl Into<String>, messages: impl Into<Messages>) -> Self {
        Self {
            name: SectionName::new(&name.into()),
            messages: messages.into(),
        }
    }

    /// The section's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The section's messages.
    pub fn messages(&self) -> &Messages {
        &self.messages
    }
}

/// Named sections of messages in insertion order, plus free parameters.
///
/// Agents keep their conversation here: `messages` (persistent), `execution_buffer` (the tool
/// trace of the running execution), `summary` and `buffer`. The store is an immutable value:
/// operations return a new store and share everything they did not change.
///
/// Serialized as `{"sections": [{"name", "messages": [..]}], "parameters": {..}}`; section
/// names are unique (a document with a repeated name is rejected).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MessageStore {
    /// Shared between copies; a change copies the (short) list of sections, never messages.
    sections: SharedSlice<Section>,
    parameters: Metadata,
}

impl MessageStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// A store with one section.
    pub fn with_section_messages(name: impl Into<String>, messages: impl Into<Messages>) -> Self {
        Self::new().section(&name.into()).set(messages)
    }

    /// A store from sections.
    ///
    /// # Errors
    /// [`MessagesError::DuplicateSection`] when two sections share a name.
    pub fn from_sections(
        sections: impl IntoIterator<Item = Section>,
    ) -> Result<Self, MessagesError> {
        let mut store = Self::new();
        for section in sections {
            if store.position(section.name()).is_some() {
                return Err(MessagesError::DuplicateSection {
                    name: section.name.to_string(),
                });
            }
            store.sections = store
                .sections
                .iter()
                .cloned()
                .chain(std::iter::once(section))
                .collect();
        }
        Ok(store)
    }

    /// A handle on the section `name` (which may not exist yet).
    pub fn section<'a>(&'a self, name: &'a str) -> SectionOperator<'a> {
        SectionOperator { store: self, name }
    }

    /// The sections in order.
    pub fn sections(&self) -> &[Section] {
        &self.sections
    }

    /// Section names in order.
    pub fn section_names(&self) -> Vec<&str> {
        self.sections.iter().map(Section::name).collect()
    }

    /// The store's parameters.
    pub fn parameters(&self) -> &Metadata {
        &self.parameters
    }

    /// A copy with the parameter `key` set.
    pub fn with_parameter(&self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        let mut store = self.clone();
        store.parameters.insert(key, value);
        store
    }

    /// A copy without the parameter `key`.
    pub fn without_parameter(&self, key: &str) -> Self {
        let mut store = self.clone();
        store.parameters.remove(key);
        store
    }

    /// A copy with all parameters replaced.
    pub fn with_parameters(&self, parameters: Metadata) -> Self {
        let mut store = self.clone();
        store.parameters = parameters;
        store
    }

    /// The messages of every section, in store order.
    pub fn to_messages(&self) -> Messages {
        self.sections
            .iter()
            .fold(Messages::new(), |acc, s| acc.concat(s.messages()))
    }

    /// A store with only the named sections, in the order given (missing names are skipped).
    pub fn select(&self, names: &[&str]) -> Self {
        let sections = names
            .iter()
            .filter_map(|name| self.position(name).map(|i| self.sections[i].clone()))
            .collect();
        Self {
            sections,
            parameters: self.parameters.clone(),
        }
    }

    /// The store as JSON in its serialized shape.
    pub fn to_value(&self) -> Value {
        let sections = self
            .sections
            .iter()
            .map(|s| {
                let messages: Vec<Value> = s.messages.iter().map(Message::to_value).collect();
                serde_json::json!({"name": &*s.name, "messages": messages})
            })
            .collect();
        serde_json::json!({"sections": Value::Array(sections), "parameters": self.parameters.to_value()})
    }

    /// Reads a store from its serialized shape.
    ///
    /// # Errors
    /// A [`MessagesError`] naming the section and message that cannot be read, or a duplicate
    /// section name.
    pub fn from_value(value: &Value) -> Result<Self, MessagesError> {
        let invalid = |reason: String| MessagesError::InvalidMessage { reason };
        let object = value
            .as_object()
            .ok_or_else(|| invalid(format!("a message store must be an object, got {value}")))?;
        let sections = match object.get("sections") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items.clone(),
            Some(other) => return Err(invalid(format!("`sections` must be a list, got {other}"))),
        };
        let mut parsed = Vec::with_capacity(sections.len());
        for section in &sections {
            let name = section.get("name").and_then(Value::as_str).ok_or_else(|| {
                invalid(format!("a section needs a string `name`, got {section}"))
            })?;
            let messages = match section.get("messages") {
                None | Some(Value::Null) => Messages::new(),
                Some(list) => Messages::from_value(list).map_err(|e| match e {
                    MessagesError::InvalidMessage { reason } => MessagesError::InvalidMessage {
                        reason: format!("section `{name}`: {reason}"),
                    },
                    other => other,
                })?,
            };
            parsed.push(Section::new(name, messages));
        }
        let parameters = match object.get("parameters") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map.clone(),
            Some(Value::Array(items)) if items.is_empty() => Map::new(),
            Some(other) => {
                return Err(invalid(format!(
                    "`parameters` must be an object, got {other}"
                )))
            }
        };
        Ok(Self::from_sections(parsed)?.with_parameters(parameters.into()))
    }

    /// Reads a store from JSON text.
    ///
    /// # Errors
    /// As [`MessageStore::from_value`], or [`MessagesError::Json`] for text that is not JSON.
    pub fn from_json(text: &str) -> Result<Self, MessagesError> {
        let value: Value = serde_json::from_str(text)?;
        Self::from_value(&value)
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.sections.iter().position(|s| &*s.name == name)
    }

    /// Section `name` set to `messages`, in place (added at the end when missing). The list of
    /// sections is copied only when another store shares it.
    fn set_in_place(&mut self, name: &str, messages: Messages) {
        match self.position(name) {
            Some(position) => {
                if let Some(section) = self.sections.make_mut().get_mut(position) {
                    section.messages = messages;
                }
            }
            None => {
                // One allocation: the new list is collected straight into its `Arc`.
                self.sections = self
                    .sections
                    .iter()
                    .cloned()
                    .chain(std::iter::once(Section {
                        name: SectionName::new(name),
                        messages,
                    }))
                    .collect();
            }
        }
    }

    /// A handle that changes the section `name` of this store in place.
    ///
    /// ```
    /// use messages::{Message, MessageStore};
    ///
    /// let mut store = MessageStore::new();
    /// store.section_mut("messages").append(Message::user("Hi"));
    /// store.section_mut("buffer").set(vec![Message::assistant("noted")]);
    /// store.section_mut("buffer").clear();
    /// assert_eq!(store.section("messages").len(), 1);
    /// assert!(store.section("buffer").exists() && store.section("buffer").is_empty());
    /// ```
    pub fn section_mut<'a>(&'a mut self, name: &'a str) -> SectionMut<'a> {
        SectionMut { store: self, name }
    }
}

/// A handle on one section of a store, returned by [`MessageStore::section`].
///
/// Queries read the section (a missing section reads as empty); mutators return a new store and
/// never touch other sections.
#[derive(Clone, Debug)]
pub struct SectionOperator<'a> {
    store: &'a MessageStore,
    name: &'a str,
}

impl SectionOperator<'_> {
    /// The section's name.
    pub fn name(&self) -> &str {
        self.name
    }

    /// The section's messages (empty when the section does not exist).
    pub fn messages(&self) -> Messages {
        self.store
            .position(self.name)
            .map(|i| self.store.sections[i].messages.clone())
            .unwrap_or_default()
    }

    /// True when the section exists (even if empty).
    pub fn exists(&self) -> bool {
        self.store.position(self.name).is_some()
    }

    /// True when the section is missing or has no messages.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of messages in the section.
    pub fn len(&self) -> usize {
        self.store
            .position(self.name)
            .map_or(0, |i| self.store.sections[i].messages.len())
    }

    /// A store with `messages` appended to this section (created if missing). Appending nothing
    /// returns the store unchanged.
    pub fn append(&self, messages: impl Into<Messages>) -> MessageStore {
        self.changed(|section| section.append(messages))
    }

    /// A store with this section's messages replaced (created if missing).
    pub fn set(&self, messages: impl Into<Messages>) -> MessageStore {
        self.changed(|section| section.set(messages))
    }

    /// A store with this section emptied (kept in place if it exists).
    pub fn clear(&self) -> MessageStore {
        self.changed(|section| section.clear())
    }

    /// A copy of the store with this section changed by `change`.
    fn changed(&self, change: impl FnOnce(SectionMut<'_>)) -> MessageStore {
        let mut store = self.store.clone();
        change(store.section_mut(self.name));
        store
    }

    /// A store without this section.
    pub fn remove(&self) -> MessageStore {
        let mut store = self.store.clone();
        if store.position(self.name).is_some() {
            store.sections = store
                .sections
                .iter()
                .filter(|s| &*s.name != self.name)
                .cloned()
                .collect();
        }
        store
    }
}

impl Serialize for MessageStore {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for MessageStore {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        MessageStore::from_value(&value).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn store() -> MessageStore {
        MessageStore::new()
            .section("messages")
            .append(vec![Message::user("hi")])
            .section("execution_buffer")
            .append(vec![Message::tool_result("c", "t", "r")])
    }

    #[test]
    fn the_agents_section_names_are_static() {
        let s = store().section("notes").append(Message::user("n"));
        let kinds: Vec<bool> = s
            .sections
            .iter()
            .map(|section| matches!(section.name, SectionName::WellKnown(_)))
            .collect();
        assert_eq!(kinds, [true, true, false]);
        assert_eq!(s.section_names(), ["messages", "execution_buffer", "notes"]);
        assert_eq!(
            Section::new("summary", Vec::<Message>::new()).name(),
            "summary"
        );
    }

    #[test]
    fn operators_only_touch_their_section() {
        let s = store();
        let appended = s.section("messages").append(Message::assistant("hello"));
        assert_eq!(appended.section("messages").len(), 2);
        assert_eq!(
            appended.section("execution_buffer").messages(),
            s.section("execution_buffer").messages()
        );
        assert_eq!(s.section("messages").len(), 1, "original unchanged");

        let cleared = s.section("execution_buffer").clear();
        assert!(cleared.section("execution_buffer").exists());
        assert!(cleared.section("execution_buffer").is_empty());
        assert_eq!(cleared.section_names(), ["messages", "execution_buffer"]);

        let removed = s.section("messages").remove();
        assert!(!removed.section("messages").exists());
        assert_eq!(removed.section_names(), ["execution_buffer"]);

        let set = s.section("summary").set(vec![Message::system("sum")]);
        assert_eq!(
            set.section_names(),
            ["messages", "execution_buffer", "summary"]
        );
    }

    #[test]
    fn missing_sections_read_as_empty_and_noop_operations_keep_the_store() {
        let s = store();
        assert!(!s.section("nope").exists());
        assert!(s.section("nope").is_empty());
        assert_eq!(s.section("nope").clear(), s);
        assert_eq!(s.section("nope").append(Messages::new()), s);
        assert_eq!(s.section("nope").remove(), s);
    }

    #[test]
    fn parameters_and_select() {
        let s = store().with_parameter("lang", "en");
        assert_eq!(s.parameters().get("lang"), Some(&json!("en")));
        assert!(!s
            .without_parameter("lang")
            .parameters()
            .contains_key("lang"));
        let selected = s.select(&["execution_buffer", "missing", "messages"]);
        assert_eq!(selected.section_names(), ["execution_buffer", "messages"]);
        assert_eq!(s.to_messages().len(), 2);
    }

    #[test]
    fn serde_shape_and_duplicate_sections() {
        let s = store().with_parameter("p", 1);
        let value = serde_json::to_value(&s).unwrap();
        assert_eq!(
            value,
            json!({"sections":[
                {"name":"messages","messages":[{"role":"user","content":"hi"}]},
                {"name":"execution_buffer","messages":[{"role":"tool","content":"r","tool_call_id":"c","tool_name":"t"}]}
            ],"parameters":{"p":1}})
        );
        assert_eq!(MessageStore::from_value(&value).unwrap(), s);
        let dup = json!({"sections":[{"name":"a","messages":[]},{"name":"a","messages":[]}]});
        let err = MessageStore::from_value(&dup).unwrap_err();
        assert!(matches!(err, MessagesError::DuplicateSection { ref name } if name == "a"));
        assert!(serde_json::from_value::<MessageStore>(dup).is_err());
        let bad = json!({"sections":[{"name":"messages","messages":[{"role":"x"}]}]});
        assert!(MessageStore::from_value(&bad)
            .unwrap_err()
            .to_string()
            .contains("`x`"));
    }
}

/// A handle that changes one section of a store in place, returned by
/// [`MessageStore::section_mut`]: the counterpart of [`SectionOperator`]'s mutators for a
/// store you own (a processor's, say), which copies the list of sections only when another
/// store shares it.
#[derive(Debug)]
pub struct SectionMut<'a> {
    store: &'a mut MessageStore,
    name: &'a str,
}

impl SectionMut<'_> {
    /// Appends `messages` to the section (created if missing). Appending nothing changes
    /// nothing.
    pub fn append(self, messages: impl Into<Messages>) {
        let messages = messages.into();
        if messages.is_empty() {
            return;
        }
        let appended = self.store.section(self.name).messages().concat(&messages);
        self.store.set_in_place(self.name, appended);
    }

    /// Replaces the section's messages (created if missing).
    pub fn set(self, messages: impl Into<Messages>) {
        self.store.set_in_place(self.name, messages.into());
    }

    /// Empties the section (kept where it is if it exists; nothing happens if it does not).
    pub fn clear(self) {
        if self.store.section(self.name).exists() {
            self.store.set_in_place(self.name, Messages::new());
        }
    }
}
