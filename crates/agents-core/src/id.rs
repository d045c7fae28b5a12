//! Fresh ids for agents, steps and step executions: uuid v4 text, without a system call each.

use std::cell::Cell;
use std::sync::Arc;

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
    fn threads_get_different_ids() {
        let here: HashSet<String> = (0..100).map(|_| new_id().to_string()).collect();
        let there: HashSet<String> =
            std::thread::spawn(|| (0..100).map(|_| new_id().to_string()).collect())
                .join()
                .unwrap();
        assert!(here.is_disjoint(&there));
    }
}
