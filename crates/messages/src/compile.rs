//! Section compilers: how a store becomes the list of messages a model sees.

use crate::{MessageStore, Messages};

/// Turns a [`MessageStore`] into one list of messages.
pub trait CompileMessages: Send + Sync {
    /// The compiled messages.
    fn compile(&self, store: &MessageStore) -> Messages;
}

/// The listed sections, in the order listed; missing sections are skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelectedSections {
    names: Vec<String>,
}

impl SelectedSections {
    /// A compiler for the given section names.
    pub fn new<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            names: names.into_iter().map(Into::into).collect(),
        }
    }

    /// The section names, in compile order.
    pub fn names(&self) -> &[String] {
        &self.names
    }
}

impl CompileMessages for SelectedSections {
    fn compile(&self, store: &MessageStore) -> Messages {
        self.names.iter().fold(Messages::new(), |acc, name| {
            acc.concat(&store.section(name).messages())
        })
    }
}

/// Every section, in store order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AllSections;

impl CompileMessages for AllSections {
    fn compile(&self, store: &MessageStore) -> Messages {
        store.to_messages()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;

    #[test]
    fn selected_sections_follow_list_order_and_skip_missing_ones() {
        let store = MessageStore::new()
            .section("b")
            .append(Message::user("from b"))
            .section("a")
            .append(Message::user("from a"));
        let compiled = SelectedSections::new(["a", "missing", "b"]).compile(&store);
        let texts: Vec<String> = compiled.iter().map(Message::text).collect();
        assert_eq!(texts, ["from a", "from b"]);
        let all: Vec<String> = AllSections
            .compile(&store)
            .iter()
            .map(Message::text)
            .collect();
        assert_eq!(all, ["from b", "from a"]);
    }
}
