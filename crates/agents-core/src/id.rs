//! Fresh ids for agents, steps and step executions: uuid v4 text, without a system call each.

use std::cell::Cell;
use std::sync::{Arc, OnceLock};

thread_local! {
    /// Per-thread (seed, counter); the seed comes from the OS once per thread.
    static GENERATOR: Cell<Option<(u64, u64, u64)>> = const { Cell::new(None) };
}

/// SplitMix64's finalizer: a bijection on `u64` that scrambles well.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A new uuid v4 in its hyphenated lower-case text form.
///
/// Each thread seeds 128 bits from the operating system once, then derives ids from a counter
/// through a bijective mix: ids never repeat within a thread (the low half is a bijection of
/// the counter), and two threads or processes collide only if their 128-bit seeds do. This
/// avoids one `getrandom` system call per id, which was a visible share of a step's cost.
pub(crate) fn new_id() -> Arc<str> {
    let (a, b, n) = GENERATOR.with(|cell| {
        let (a, b, n) = cell.get().unwrap_or_else(|| {
            let seed = uuid::Uuid::new_v4().as_u128();
            ((seed >> 64) as u64, seed as u64, 0)
        });
        cell.set(Some((a, b, n.wrapping_add(1))));
        (a, b, n)
    });
    let high = mix(a ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let low = mix(b.wrapping_add(n));
    let bits = (u128::from(high) << 64) | u128::from(low);
    let id = uuid::Builder::from_random_bytes(bits.to_be_bytes()).into_uuid();
    let mut buffer = uuid::Uuid::encode_buffer();
    Arc::from(&*id.hyphenated().encode_lower(&mut buffer))
}

/// A step's id: given, or adopted from the execution that records the step (so a step and
/// its execution share one id, and the loop makes one id per step), or made when first read.
///
/// A clone or a comparison reads the id first, so copies of a step always agree on it.
pub(crate) struct StepId(OnceLock<Arc<str>>);

impl StepId {
    /// Not assigned yet.
    pub(crate) fn unassigned() -> Self {
        Self(OnceLock::new())
    }

    /// This id.
    pub(crate) fn given(id: Arc<str>) -> Self {
        Self(OnceLock::from(id))
    }

    /// The id, made now if it was never assigned.
    pub(crate) fn get(&self) -> &Arc<str> {
        self.0.get_or_init(new_id)
    }

    /// Takes `id` unless the step already has one.
    pub(crate) fn adopt(&self, id: &Arc<str>) {
        // An id that is already set (given, or read before) stays.
        let _ = self.0.set(Arc::clone(id));
    }
}

impl Clone for StepId {
    fn clone(&self) -> Self {
        Self::given(Arc::clone(self.get()))
    }
}

impl PartialEq for StepId {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl std::fmt::Debug for StepId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self.get(), f)
    }
}

impl serde::Serialize for StepId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.get())
    }
}

impl<'de> serde::Deserialize<'de> for StepId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Arc::<str>::deserialize(deserializer).map(Self::given)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_uuid_v4_and_do_not_repeat() {
        let ids: Vec<Arc<str>> = (0..10_000).map(|_| new_id()).collect();
        let unique: HashSet<&str> = ids.iter().map(|id| &**id).collect();
        assert_eq!(unique.len(), ids.len());
        for id in ids.iter().take(100) {
            let parsed = uuid::Uuid::parse_str(id).unwrap();
            assert_eq!(parsed.get_version_num(), 4);
            assert_eq!(parsed.get_variant(), uuid::Variant::RFC4122);
        }
    }

    #[test]
    fn a_step_id_is_given_adopted_or_made_once() {
        let given = StepId::given(Arc::from("step-1"));
        given.adopt(&Arc::from("other"));
        assert_eq!(&**given.get(), "step-1");

        let adopted = StepId::unassigned();
        adopted.adopt(&Arc::from("exec-1"));
        assert_eq!(&**adopted.get(), "exec-1");

        let made = StepId::unassigned();
        let copy = made.clone();
        assert_eq!(copy, made, "a clone reads the id first");
        made.adopt(&Arc::from("too late"));
        assert_eq!(made.get(), copy.get());
        assert_eq!(made.get().len(), 36);
    }

    #[test]
    fn threads_get_different_ids() {
        let here: HashSet<String> = (0..100).map(|_| new_id().to_string()).collect();
        let there: HashSet<String> =
            std::thread::spawn(|| (0..100).map(|_| new_id().to_string()).collect())
                .join()
                .unwrap();
        assert!(here.is_disjoint(&there));
    }
}
