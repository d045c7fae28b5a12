//! `Metadata`: an ordered, string-keyed map of JSON values.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// An ordered (insertion order) map from string keys to JSON values.
///
/// Used for message metadata, store parameters and agent metadata. Methods that change it
/// return a new value, so it can be shared freely.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Metadata(Map<String, Value>);

impl Metadata {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// The value under `key`, if any.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }

    /// True when `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    /// A copy with `key` set to `value` (an existing key keeps its position).
    pub fn with(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.0.insert(key.into(), value.into());
        self
    }

    /// Sets `key` to `value` in place.
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<Value>) {
        self.0.insert(key.into(), value.into());
    }

    /// A copy without `key`.
    pub fn without(mut self, key: &str) -> Self {
        self.0.shift_remove(key);
        self
    }

    /// Removes `key` in place and returns its value.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.0.shift_remove(key)
    }

    /// A copy with every entry of `other` set on top of this one.
    pub fn merged(mut self, other: &Metadata) -> Self {
        for (key, value) in &other.0 {
            self.0.insert(key.clone(), value.clone());
        }
        self
    }

    /// Keys in insertion order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// Entries in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The underlying JSON object.
    pub fn as_map(&self) -> &Map<String, Value> {
        &self.0
    }

    /// The map as a JSON object value.
    pub fn to_value(&self) -> Value {
        Value::Object(self.0.clone())
    }
}

impl From<Map<String, Value>> for Metadata {
    fn from(map: Map<String, Value>) -> Self {
        Self(map)
    }
}

impl From<Metadata> for Map<String, Value> {
    fn from(metadata: Metadata) -> Self {
        metadata.0
    }
}

impl<K: Into<String>, V: Into<Value>> FromIterator<(K, V)> for Metadata {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Self(
            iter.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_insertion_order_and_replaces_in_place() {
        let m = Metadata::new().with("b", 1).with("a", 2).with("b", 3);
        assert_eq!(m.keys().collect::<Vec<_>>(), ["b", "a"]);
        assert_eq!(m.get("b"), Some(&json!(3)));
        assert_eq!(serde_json::to_string(&m).unwrap(), r#"{"b":3,"a":2}"#);
    }

    #[test]
    fn without_and_merged_return_new_maps() {
        let base = Metadata::new().with("a", 1);
        let merged = base.clone().merged(&Metadata::new().with("b", 2));
        assert_eq!(base.len(), 1);
        assert_eq!(merged.len(), 2);
        assert!(!merged.without("a").contains_key("a"));
    }
}
