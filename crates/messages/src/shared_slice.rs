//! `SharedSlice`: an immutable list that clones by reference count, and an empty one that has
//! no count at all.

use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An immutable list shared between its copies, like `Arc<[T]>`, except that an empty list
/// holds no `Arc`.
///
/// Why not `Arc<[T]>`: the standard library's `Arc::<[T]>::default()` (and
/// `Arc::<str>::default()`) hands out one static allocation that every empty list of the
/// process shares, so each clone or drop of an empty list writes to one reference count that
/// every core touches. Messages without tool calls, responses without calls and executions
/// without steps are the common case, and a server running conversations on 16 cores spent
/// about half of its time waiting on that one count (issue 35, session 15). An empty
/// `SharedSlice` is `None` inside: it is made, cloned and dropped without touching memory any
/// other thread uses.
///
/// ```
/// use messages::SharedSlice;
///
/// let calls: SharedSlice<u32> = [1, 2, 3].into_iter().collect();
/// let copy = calls.clone(); // one reference count, no copy of the items
/// assert_eq!(&*copy, &[1, 2, 3]);
/// assert!(SharedSlice::<u32>::default().is_empty());
/// ```
pub struct SharedSlice<T>(Option<Arc<[T]>>);

impl<T> SharedSlice<T> {
    /// An empty list (allocates nothing, shares no count).
    pub const fn new() -> Self {
        Self(None)
    }

    /// The items.
    pub fn as_slice(&self) -> &[T] {
        self.0.as_deref().unwrap_or(&[])
    }

    /// The items to change in place, when no other copy shares them (`None` when shared or
    /// empty).
    pub fn get_mut(&mut self) -> Option<&mut [T]> {
        self.0.as_mut().and_then(Arc::get_mut)
    }

    /// The items to change in place, copied first when another copy shares them (like
    /// [`Arc::make_mut`]).
    pub fn make_mut(&mut self) -> &mut [T]
    where
        T: Clone,
    {
        match &mut self.0 {
            Some(items) => Arc::make_mut(items),
            None => &mut [],
        }
    }

    /// True when both are the same shared list (two empty lists are).
    pub fn ptr_eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }
}

impl<T> Clone for SharedSlice<T> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<T> Default for SharedSlice<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Deref for SharedSlice<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T> AsRef<[T]> for SharedSlice<T> {
    fn as_ref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for SharedSlice<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl<T: PartialEq> PartialEq for SharedSlice<T> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Eq> Eq for SharedSlice<T> {}

impl<T> FromIterator<T> for SharedSlice<T> {
    /// Collects straight into the shared allocation (one allocation for an iterator of known
    /// length; none for one known to be empty).
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        let items = items.into_iter();
        if items.size_hint().1 == Some(0) {
            return Self(None);
        }
        Self::from(items.collect::<Arc<[T]>>())
    }
}

impl<T> From<Vec<T>> for SharedSlice<T> {
    fn from(items: Vec<T>) -> Self {
        if items.is_empty() {
            Self(None)
        } else {
            Self(Some(items.into()))
        }
    }
}

/// Shares `items` (an empty one is dropped: the result holds no count).
impl<T> From<Arc<[T]>> for SharedSlice<T> {
    fn from(items: Arc<[T]>) -> Self {
        if items.is_empty() {
            Self(None)
        } else {
            Self(Some(items))
        }
    }
}

impl<T: Serialize> Serialize for SharedSlice<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize(serializer)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for SharedSlice<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<T>::deserialize(deserializer).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The count of the standard library's one static empty `Arc<[T]>` (every empty
    /// `Arc<[T]>::default()` and `Arc<str>::default()` shares it), less the probe's own.
    fn static_empty_count() -> usize {
        let probe: Arc<[u8]> = Arc::default();
        Arc::strong_count(&probe) - 1
    }

    #[test]
    fn empty_lists_touch_no_count_that_other_threads_share() {
        let before = static_empty_count();
        let empty: SharedSlice<String> = SharedSlice::default();
        let copies: Vec<_> = (0..8).map(|_| empty.clone()).collect();
        let collected: SharedSlice<String> = std::iter::empty().collect();
        let from_arc = SharedSlice::from(Arc::<[String]>::from(Vec::new()));
        assert_eq!(static_empty_count(), before);
        assert!(copies.iter().all(|c| c.is_empty() && c.ptr_eq(&collected)));
        assert!(from_arc.is_empty());
    }

    #[test]
    fn copies_share_their_items() {
        let list: SharedSlice<String> = vec!["a".to_owned(), "b".to_owned()].into();
        let mut copy = list.clone();
        assert!(copy.ptr_eq(&list));
        assert!(copy.get_mut().is_none(), "shared: no change in place");
        drop(list);
        copy.get_mut().expect("unique now")[0] = "c".to_owned();
        assert_eq!(&*copy, &["c".to_owned(), "b".to_owned()]);
    }

    #[test]
    fn serializes_as_a_plain_list() {
        let list: SharedSlice<u32> = vec![1, 2].into();
        let text = serde_json::to_string(&list).expect("serializes");
        assert_eq!(text, "[1,2]");
        let back: SharedSlice<u32> = serde_json::from_str(&text).expect("reads");
        assert_eq!(back, list);
        let empty: SharedSlice<u32> = serde_json::from_str("[]").expect("reads");
        assert!(empty.is_empty() && empty.ptr_eq(&SharedSlice::new()));
    }
}
