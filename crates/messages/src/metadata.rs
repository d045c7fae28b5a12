//! `Metadata`: an ordered, string-keyed map of JSON values.

use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// An ordered (insertion order) map from string keys to JSON values.
///
/// Used for message metadata, store parameters and agent metadata. Methods that change it
/// return a new value, so it can be shared freely: the map sits behind an `Arc` (an empty map
/// allocates nothing), so clones cost a reference count and a change copies the map once.
#[derive(Clone, Default)]
pub struct Metadata(Option<Arc<Map<String, Value>>>);

fn empty_map() -> &'static Map<String, Value> {
    static EMPTY: OnceLock<Map<String, Value>> = OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

impl Metadata {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    fn map(&self) -> &Map<String, Value> {
        self.0.as_deref().unwrap_or_else(|| empty_map())
    }

    fn map_mut(&mut self) -> &mut Map<String, Value> {
        Arc::make_mut(self.0.get_or_insert_with(Arc::default))
    }

    /// The value under `key`, if any.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.map().get(key)
    }

    /// True when `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.map().contains_key(key)
    }

    /// A copy with `key` set to `value` (an existing key keeps its position).
    pub fn with(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.insert(key, value);
        self
    }

    /// Sets `key` to `value` in place.
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<Value>) {
        self.map_mut().insert(key.into(), value.into());
    }

    /// A copy without `key`.
    pub fn without(mut self, key: &str) -> Self {
        self.remove(key);
        self
    }

    /// Removes `key` in place and returns its value.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        if !self.contains_key(key) {
            return None;
        }
        self.map_mut().shift_remove(key)
    }

    /// A copy with every entry of `other` set on top of this one.
    pub fn merged(mut self, other: &Metadata) -> Self {
        if other.is_empty() {
            return self;
        }
        let map = self.map_mut();
        for (key, value) in other.map() {
            map.insert(key.clone(), value.clone());
        }
        self
    }

    /// Keys in insertion order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.map().keys().map(String::as_str)
    }

    /// Entries in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.map().iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.map().len()
    }

    /// True when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.map().is_empty()
    }

    /// The underlying JSON object.
    pub fn as_map(&self) -> &Map<String, Value> {
        self.map()
    }

    /// The map as a JSON object value.
    pub fn to_value(&self) -> Value {
        Value::Object(self.map().clone())
    }
}

impl PartialEq for Metadata {
    fn eq(&self, other: &Self) -> bool {
        self.map() == other.map()
    }
}

impl std::fmt::Debug for Metadata {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.map().fmt(f)
    }
}

impl Serialize for Metadata {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.map().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Metadata {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Map::deserialize(deserializer).map(Self::from)
    }
}

impl From<Map<String, Value>> for Metadata {
    fn from(map: Map<String, Value>) -> Self {
        if map.is_empty() {
            Self(None)
        } else {
            Self(Some(Arc::new(map)))
        }
    }
}

impl From<Metadata> for Map<String, Value> {
    fn from(metadata: Metadata) -> Self {
        metadata.0.map(Arc::unwrap_or_clone).unwrap_or_default()
    }
}

impl<K: Into<String>, V: Into<Value>> FromIterator<(K, V)> for Metadata {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Self::from(
            iter.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect::<Map<String, Value>>(),
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
