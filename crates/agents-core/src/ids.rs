//! Ids: the [`IdSource`] an agent holds, like its clock, so that the ids it makes (execution
//! and step ids) are under the caller's control: uuid v7 by default ([`UuidV7Ids`]), a
//! deterministic sequence for tests and for durable-execution engines that replay a run and
//! need the same ids again ([`SequentialIds`]).

use std::fmt::Debug;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Where an agent's new ids come from.
pub trait IdSource: Send + Sync + Debug {
    /// A new id, unique among the ids this source made.
    fn new_id(&self) -> Arc<str>;
}

/// Uuid v7 ids, hyphenated, lower case: the default. Time-ordered to the millisecond (an id
/// made in a later millisecond sorts later; within one millisecond the order is random) with
/// 74 random bits. Made without any lock or counter shared between threads, so that many
/// runs on many cores never wait for each other for an id (uuid's own `now_v7` serializes
/// every id of the process on one mutex for a strict order nothing here needs).
#[derive(Clone, Copy, Debug, Default)]
pub struct UuidV7Ids;

impl IdSource for UuidV7Ids {
    fn new_id(&self) -> Arc<str> {
        new_id()
    }
}

/// Ids `{prefix}-1`, `{prefix}-2`, ... in the order they are asked for: deterministic, for
/// tests and for replays (a run re-executed from a journal asks in the same order and gets the
/// same ids).
///
/// ```
/// use agents_core::{IdSource, SequentialIds};
///
/// let ids = SequentialIds::new("run");
/// assert_eq!(&*ids.new_id(), "run-1");
/// assert_eq!(&*ids.new_id(), "run-2");
/// ```
#[derive(Debug)]
pub struct SequentialIds {
    prefix: String,
    next: AtomicU64,
}

impl SequentialIds {
    /// Ids starting at `{prefix}-1`.
    pub fn new(prefix: impl Into<String>) -> Self {
        Self {
            prefix: prefix.into(),
            next: AtomicU64::new(1),
        }
    }
}

impl IdSource for SequentialIds {
    fn new_id(&self) -> Arc<str> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        Arc::from(format!("{}-{n}", self.prefix))
    }
}

/// A new uuid v7 id in hyphenated lower case (what [`UuidV7Ids`] gives; records made outside
/// an agent use it directly).
pub(crate) fn new_id() -> Arc<str> {
    let mut buffer = uuid::Uuid::encode_buffer();
    let id = uuid::Uuid::new_v7(uuid::Timestamp::now(uuid::NoContext));
    Arc::from(&*id.hyphenated().encode_lower(&mut buffer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_uuid_v7_unique_and_sort_by_the_millisecond_they_were_made() {
        let ids: Vec<Arc<str>> = (0..10_000).map(|_| new_id()).collect();
        let unique: std::collections::BTreeSet<&str> = ids.iter().map(|id| &**id).collect();
        assert_eq!(unique.len(), ids.len());
        let parsed = uuid::Uuid::parse_str(&ids[0]).unwrap();
        assert_eq!(parsed.get_version_num(), 7);
        // An id made a millisecond later sorts after every earlier one.
        std::thread::sleep(std::time::Duration::from_millis(2));
        let later = new_id();
        assert!(ids.iter().all(|id| *id < later));
    }

    #[test]
    fn ids_made_on_many_threads_at_once_are_unique() {
        let ids: Vec<Arc<str>> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..8)
                .map(|_| scope.spawn(|| (0..5_000).map(|_| new_id()).collect::<Vec<_>>()))
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().unwrap())
                .collect()
        });
        let unique: std::collections::BTreeSet<&str> = ids.iter().map(|id| &**id).collect();
        assert_eq!(unique.len(), 40_000);
    }

    #[test]
    fn sequential_ids_are_deterministic_and_shared_by_clones_of_an_agent() {
        let ids: Arc<dyn IdSource> = Arc::new(SequentialIds::new("x"));
        let other = Arc::clone(&ids);
        assert_eq!(&*ids.new_id(), "x-1");
        assert_eq!(&*other.new_id(), "x-2");
    }
}
