//! A persistent (immutable, structurally shared) vector: a 32-way trie with a tail buffer.
//!
//! Appending to a clone copies at most one path of the trie plus the tail (each at most 32
//! pointers), so it costs O(log32 n) however long the history is. This is what makes
//! `Messages` and therefore `AgentState` cheap to clone and extend.

use std::sync::Arc;

const BITS: usize = 5;
const WIDTH: usize = 1 << BITS;
const MASK: usize = WIDTH - 1;

#[derive(Clone, Debug)]
enum Node<T> {
    Branch(Vec<Arc<Node<T>>>),
    Leaf(Vec<T>),
}

/// Most segments in a tail before appending copies it into one: bounds the walk to an
/// element of the tail.
const MAX_SEGMENTS: usize = 8;

/// A piece of the tail (the last, not yet full, leaf), newest first. A segment shared by
/// several vectors is never changed: a vector that appends after a shared segment starts a
/// new one in front of it. So a clone that appends neither copies the elements it shares nor
/// touches their reference counts, which would make every core that branches from one shared
/// history write to the same cache lines.
#[derive(Debug)]
struct Segment<T> {
    prev: Option<Arc<Segment<T>>>,
    /// Elements in `prev` and the segments before it.
    before: usize,
    /// Segments in the chain, this one included.
    depth: usize,
    items: Items<T>,
}

/// A segment's elements: the first beside the segment's other fields, the rest in a `Vec`.
/// Most segments hold one message (a list of one, a message appended to a shared history),
/// and the first element inline spares them the `Vec`'s allocation (issue 35: two of a
/// 2-step run's 83 heap blocks per new list).
#[derive(Debug)]
struct Items<T> {
    /// The first element; `None` only while `rest` is empty too.
    first: Option<T>,
    rest: Vec<T>,
}

impl<T> Items<T> {
    /// Room for `capacity` elements.
    fn with_capacity(capacity: usize) -> Self {
        Self {
            first: None,
            rest: Vec::with_capacity(capacity.saturating_sub(1)),
        }
    }

    fn one(value: T) -> Self {
        Self {
            first: Some(value),
            rest: Vec::new(),
        }
    }

    fn len(&self) -> usize {
        usize::from(self.first.is_some()) + self.rest.len()
    }

    fn push(&mut self, value: T) {
        if self.first.is_none() {
            self.first = Some(value);
        } else {
            self.rest.push(value);
        }
    }

    /// Room for `additional` more elements.
    fn reserve(&mut self, additional: usize) {
        let inline = usize::from(self.first.is_none());
        self.rest.reserve(additional.saturating_sub(inline));
    }

    /// The elements from `index` to the end of the part holding it (the first element is a
    /// part of its own); `None` past the end.
    fn slice_at(&self, index: usize) -> Option<&[T]> {
        let first = self.first.as_ref()?;
        match index.checked_sub(1) {
            None => Some(std::slice::from_ref(first)),
            Some(in_rest) if in_rest < self.rest.len() => self.rest.get(in_rest..),
            Some(_) => None,
        }
    }

    fn iter(&self) -> impl Iterator<Item = &T> {
        self.first.iter().chain(&self.rest)
    }
}

impl<T> IntoIterator for Items<T> {
    type Item = T;
    type IntoIter = std::iter::Chain<std::option::IntoIter<T>, std::vec::IntoIter<T>>;

    fn into_iter(self) -> Self::IntoIter {
        self.first.into_iter().chain(self.rest)
    }
}

impl<T> Extend<T> for Items<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, values: I) {
        for value in values {
            self.push(value);
        }
    }
}

impl<T> Segment<T> {
    fn with_capacity(prev: Option<Arc<Segment<T>>>, capacity: usize) -> Self {
        let (before, depth) = prev
            .as_ref()
            .map_or((0, 1), |p| (p.before + p.items.len(), p.depth + 1));
        Self {
            prev,
            before,
            depth,
            items: Items::with_capacity(capacity),
        }
    }

    fn len(&self) -> usize {
        self.before + self.items.len()
    }

    /// The elements from `local` (an index into the whole tail) to the end of their segment.
    fn slice_at(&self, local: usize) -> Option<&[T]> {
        let mut segment = self;
        while local < segment.before {
            segment = segment.prev.as_deref()?;
        }
        segment.items.slice_at(local - segment.before)
    }
}

impl<T: Clone> Segment<T> {
    /// Every element of the chain, oldest first: moved out where this chain is the only
    /// owner, cloned otherwise.
    fn into_items(this: Arc<Self>) -> Vec<T> {
        match Arc::try_unwrap(this) {
            Ok(segment) if segment.prev.is_none() => segment.items.into_iter().collect(),
            Ok(segment) => {
                let mut items = segment.prev.map(Self::into_items).unwrap_or_default();
                items.extend(segment.items);
                items
            }
            Err(shared) => {
                let mut items = Vec::with_capacity(shared.len());
                shared.clone_items_into(&mut items);
                items
            }
        }
    }

    /// Appends a clone of every element of the chain, oldest first, to `out`.
    fn clone_items_into(&self, out: &mut impl Extend<T>) {
        if let Some(prev) = &self.prev {
            prev.clone_items_into(out);
        }
        out.extend(self.items.iter().cloned());
    }
}

/// An immutable vector with cheap clones and O(log n) append on a shared copy.
///
/// The root and the tail are allocated on first use, so an empty vector (and a clone of one)
/// costs no allocation.
#[derive(Clone, Debug)]
pub(crate) struct PersistentVec<T> {
    len: usize,
    shift: usize,
    root: Option<Arc<Node<T>>>,
    tail: Option<Arc<Segment<T>>>,
}

impl<T: Clone> Default for PersistentVec<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Clone> PersistentVec<T> {
    pub(crate) const fn new() -> Self {
        Self {
            len: 0,
            shift: BITS,
            root: None,
            tail: None,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// How many vectors hold this one's trie root and its newest tail segment.
    #[cfg(test)]
    pub(crate) fn shared_counts(&self) -> (usize, usize) {
        (
            self.root.as_ref().map_or(0, Arc::strong_count),
            self.tail.as_ref().map_or(0, Arc::strong_count),
        )
    }

    fn tail_offset(&self) -> usize {
        if self.len < WIDTH {
            0
        } else {
            ((self.len - 1) >> BITS) << BITS
        }
    }

    /// The elements from `index` to the end of the leaf or tail segment holding it.
    fn slice_at(&self, index: usize) -> Option<&[T]> {
        if index >= self.len {
            return None;
        }
        let tail_offset = self.tail_offset();
        if index >= tail_offset {
            return self.tail.as_deref()?.slice_at(index - tail_offset);
        }
        let mut node = self.root.as_ref()?;
        let mut level = self.shift;
        loop {
            match node.as_ref() {
                Node::Branch(children) => {
                    node = children.get((index >> level) & MASK)?;
                    level = level.saturating_sub(BITS);
                }
                Node::Leaf(items) => return items.get(index & MASK..),
            }
        }
    }

    pub(crate) fn get(&self, index: usize) -> Option<&T> {
        self.slice_at(index)?.first()
    }

    pub(crate) fn push(&mut self, value: T) {
        if self.len - self.tail_offset() < WIDTH {
            self.push_to_tail(value);
            self.len += 1;
            return;
        }
        let full_tail = self
            .tail
            .replace(Arc::new(Segment {
                prev: None,
                before: 0,
                depth: 1,
                items: Items::one(value),
            }))
            .map(Segment::into_items)
            .unwrap_or_default();
        let tail_node = Arc::new(Node::Leaf(full_tail));
        let root = self
            .root
            .take()
            .unwrap_or_else(|| Arc::new(Node::Branch(Vec::new())));
        if (self.len >> BITS) > (1 << self.shift) {
            let path = new_path(self.shift, tail_node);
            self.root = Some(Arc::new(Node::Branch(vec![root, path])));
            self.shift += BITS;
        } else {
            self.root = Some(push_tail(self.len, self.shift, &root, tail_node));
        }
        self.len += 1;
    }

    /// Appends to a tail with room: in place when this vector owns its newest segment, else
    /// in a new segment in front of the shared ones (copying them into one only past
    /// [`MAX_SEGMENTS`]).
    fn push_to_tail(&mut self, value: T) {
        let Some(head) = &mut self.tail else {
            let mut segment = Segment::with_capacity(None, 4);
            segment.items.push(value);
            self.tail = Some(Arc::new(segment));
            return;
        };
        if let Some(owned) = Arc::get_mut(head) {
            owned.items.push(value);
            return;
        }
        let mut segment = if head.depth >= MAX_SEGMENTS {
            let mut items = Items::with_capacity(head.len() + 4);
            head.clone_items_into(&mut items);
            Segment {
                prev: None,
                before: 0,
                depth: 1,
                items,
            }
        } else {
            Segment::with_capacity(Some(Arc::clone(head)), 4)
        };
        segment.items.push(value);
        *head = Arc::new(segment);
    }

    /// Makes room in the tail for up to `additional` pushes (as far as the tail reaches), so
    /// the pushes that follow do not reallocate it; a shared tail gets a new segment in front.
    pub(crate) fn reserve(&mut self, additional: usize) {
        let in_tail = self.len - self.tail_offset();
        let room = (in_tail + additional).min(WIDTH).saturating_sub(in_tail);
        if room == 0 {
            return;
        }
        let Some(head) = &mut self.tail else {
            self.tail = Some(Arc::new(Segment::with_capacity(None, room)));
            return;
        };
        if let Some(owned) = Arc::get_mut(head) {
            owned.items.reserve(room);
        } else if head.depth < MAX_SEGMENTS {
            *head = Arc::new(Segment::with_capacity(Some(Arc::clone(head)), room));
        }
    }

    /// How many leading elements `self` and `other` share, compared with `same`. Leaves (and
    /// tail segments) that are the same allocation in both are skipped whole, so for a vector
    /// and an extended clone of it this costs O(n / 32) chunk lookups rather than n
    /// comparisons.
    pub(crate) fn common_prefix_len(&self, other: &Self, same: impl Fn(&T, &T) -> bool) -> usize {
        let limit = self.len.min(other.len);
        let mut index = 0;
        while index < limit {
            // A whole subtree that is one allocation in both: skipped in one descent.
            let shared = self.shared_subtree_run(other, index);
            if shared > 0 {
                index += shared;
                continue;
            }
            let (Some(a), Some(b)) = (self.slice_at(index), other.slice_at(index)) else {
                break;
            };
            let n = a.len().min(b.len()).min(limit - index);
            if n == 0 {
                break;
            }
            // The same elements of one shared allocation: equal.
            if !std::ptr::eq(a.as_ptr(), b.as_ptr()) {
                if let Some(k) = (0..n).find(|&k| !same(&a[k], &b[k])) {
                    return index + k;
                }
            }
            index += n;
        }
        index
    }

    /// How many elements from `index` on lie in one subtree that `self` and `other` share
    /// (the same allocation at the same place in both tries, so the same elements); 0 when
    /// the leaf holding `index` is not shared, or `index` is in a tail.
    fn shared_subtree_run(&self, other: &Self, index: usize) -> usize {
        let tree_end = self.tail_offset().min(other.tail_offset());
        if index >= tree_end || self.shift != other.shift {
            return 0;
        }
        let (Some(mut a), Some(mut b)) = (self.root.as_ref(), other.root.as_ref()) else {
            return 0;
        };
        if Arc::ptr_eq(a, b) {
            return tree_end - index;
        }
        let mut level = self.shift;
        while let (Node::Branch(left), Node::Branch(right)) = (a.as_ref(), b.as_ref()) {
            let slot = (index >> level) & MASK;
            let (Some(x), Some(y)) = (left.get(slot), right.get(slot)) else {
                return 0;
            };
            if Arc::ptr_eq(x, y) {
                // The child covers 2^level elements; the tree part of either vector may end
                // inside it (its rightmost subtree), and nothing of it lies past that end.
                let end = ((index >> level) + 1) << level;
                return end.min(tree_end) - index;
            }
            if level < BITS {
                return 0;
            }
            (a, b, level) = (x, y, level - BITS);
        }
        0
    }

    pub(crate) fn iter(&self) -> Iter<'_, T> {
        Iter {
            vec: self,
            index: 0,
            chunk: &[],
        }
    }
}

fn new_path<T>(level: usize, node: Arc<Node<T>>) -> Arc<Node<T>> {
    if level == 0 {
        return node;
    }
    Arc::new(Node::Branch(vec![new_path(level - BITS, node)]))
}

fn push_tail<T: Clone>(
    len: usize,
    level: usize,
    parent: &Arc<Node<T>>,
    tail: Arc<Node<T>>,
) -> Arc<Node<T>> {
    let sub_index = ((len - 1) >> level) & MASK;
    let mut children = match parent.as_ref() {
        Node::Branch(children) => children.clone(),
        Node::Leaf(_) => Vec::new(),
    };
    let inserted = if level == BITS {
        tail
    } else {
        match children.get(sub_index) {
            Some(child) => push_tail(len, level - BITS, child, tail),
            None => new_path(level - BITS, tail),
        }
    };
    if sub_index < children.len() {
        children[sub_index] = inserted;
    } else {
        children.push(inserted);
    }
    Arc::new(Node::Branch(children))
}

/// Iterator over a [`PersistentVec`], one leaf at a time.
pub(crate) struct Iter<'a, T> {
    vec: &'a PersistentVec<T>,
    index: usize,
    chunk: &'a [T],
}

impl<'a, T: Clone> Iterator for Iter<'a, T> {
    type Item = &'a T;

    fn next(&mut self) -> Option<Self::Item> {
        if self.chunk.is_empty() {
            self.chunk = self.vec.slice_at(self.index)?;
        }
        let (first, rest) = self.chunk.split_first()?;
        self.chunk = rest;
        self.index += 1;
        Some(first)
    }

    /// Jumps to the element `n` places on without visiting those between (`skip` uses this).
    fn nth(&mut self, n: usize) -> Option<Self::Item> {
        if n < self.chunk.len() {
            self.chunk = &self.chunk[n..];
            self.index += n;
        } else if n > 0 {
            self.index = self.index.saturating_add(n).min(self.vec.len);
            self.chunk = &[];
        }
        self.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.vec.len - self.index;
        (left, Some(left))
    }
}

impl<T: Clone> ExactSizeIterator for Iter<'_, T> {}

impl<T: Clone> FromIterator<T> for PersistentVec<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let iter = iter.into_iter();
        let mut vec = Self::new();
        vec.reserve(iter.size_hint().0);
        for item in iter {
            vec.push(item);
        }
        vec
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn deep_tries_compare_shared_parts_without_their_elements_and_find_where_branches_part() {
        // Three levels of branches: 40,000 elements.
        let n = 40_000;
        let base: PersistentVec<usize> = (0..n).collect();
        let mut longer = base.clone();
        for i in 0..5_000 {
            longer.push(n + i);
        }
        let looked = std::cell::Cell::new(0usize);
        let counting = |a: &usize, b: &usize| {
            looked.set(looked.get() + 1);
            a == b
        };
        assert_eq!(base.common_prefix_len(&longer, counting), n);
        assert_eq!(longer.common_prefix_len(&base, counting), n);
        // Only the shorter one's tail (under 32 elements) is compared one by one.
        assert!(
            looked.get() <= 2 * WIDTH,
            "compared {} elements",
            looked.get()
        );
        // Two branches of one history differ only after it.
        let mut a = longer.clone();
        let mut b = longer.clone();
        a.push(1);
        b.push(2);
        assert_eq!(a.common_prefix_len(&b, counting), n + 5_000);
    }

    #[test]
    fn common_prefix_of_a_vector_and_its_extended_clone() {
        let n = WIDTH * WIDTH + 40;
        let base: PersistentVec<usize> = (0..n).collect();
        let mut longer = base.clone();
        for i in 0..100 {
            longer.push(n + i);
        }
        let eq = |a: &usize, b: &usize| a == b;
        assert_eq!(base.common_prefix_len(&longer, eq), n);
        assert_eq!(longer.common_prefix_len(&base, eq), n);
        // Built separately: equal by comparison, not by allocation.
        let rebuilt: PersistentVec<usize> = (0..n).map(|i| if i == 700 { 0 } else { i }).collect();
        assert_eq!(base.common_prefix_len(&rebuilt, eq), 700);
        assert_eq!(base.common_prefix_len(&PersistentVec::new(), eq), 0);
    }

    #[test]
    fn appending_to_a_clone_leaves_the_shared_elements_alone() {
        // 40 elements: 32 in the trie, 8 in the tail.
        let handles: Vec<Arc<usize>> = (0..40).map(Arc::new).collect();
        let shared: PersistentVec<Arc<usize>> = handles.iter().cloned().collect();
        let mut branches = Vec::new();
        for i in 0..20 {
            let mut branch = shared.clone();
            branch.reserve(3);
            for k in 0..3 {
                branch.push(Arc::new(1000 + 10 * i + k));
            }
            branches.push(branch);
        }
        // Every branch appended without copying (and counting) the shared tail's elements.
        assert!(handles.iter().all(|h| Arc::strong_count(h) == 2));
        for (i, branch) in branches.iter().enumerate() {
            assert_eq!(branch.len(), 43);
            assert_eq!(**branch.get(39).unwrap(), 39);
            assert_eq!(**branch.get(42).unwrap(), 1000 + 10 * i + 2);
            assert_eq!(branch.common_prefix_len(&shared, Arc::ptr_eq), 40);
        }
        // A chain of clones, each one step longer, stays readable and bounded.
        let mut chain = vec![shared.clone()];
        for i in 0..30 {
            let mut next = chain[chain.len() - 1].clone();
            next.push(Arc::new(2000 + i));
            chain.push(next);
        }
        let last = &chain[chain.len() - 1];
        assert_eq!(last.len(), 70);
        assert!(last.iter().map(|x| **x).eq((0..40).chain(2000..2030)));
        assert_eq!(last.common_prefix_len(&chain[10], Arc::ptr_eq), 50);
    }

    #[test]
    fn skipping_jumps_to_the_right_element() {
        let n = WIDTH * WIDTH + 40;
        let v: PersistentVec<usize> = (0..n).collect();
        for start in [0, 1, 31, 32, 33, 1000, 1024, n - 1, n, n + 5] {
            assert!(
                v.iter().skip(start).copied().eq(start.min(n)..n),
                "from {start}"
            );
        }
        let mut iter = v.iter();
        assert_eq!(iter.next(), Some(&0));
        assert_eq!(iter.nth(3), Some(&4));
        assert_eq!(iter.nth(40), Some(&45));
        assert_eq!(iter.len(), n - 46);
    }

    #[test]
    fn grows_through_several_trie_levels() {
        let n = WIDTH * WIDTH * 2 + 7;
        let v: PersistentVec<usize> = (0..n).collect();
        assert_eq!(v.len(), n);
        for i in [0, 31, 32, 1023, 1024, 1055, n - 1] {
            assert_eq!(v.get(i), Some(&i));
        }
        assert_eq!(v.get(n), None);
        assert!(v.iter().copied().eq(0..n));
    }

    /// One change in a random history of persistent vectors.
    #[derive(Clone, Debug)]
    enum Op {
        /// Push onto the current vector.
        Push,
        /// Reserve room, then push onto the current vector.
        Reserve(usize),
        /// Keep the current vector as a snapshot and go on with a clone of it.
        Snapshot,
        /// Go on with an earlier snapshot (by index, wrapped).
        Resume(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => Just(Op::Push),
            1 => (0usize..40).prop_map(Op::Reserve),
            2 => Just(Op::Snapshot),
            1 => (0usize..8).prop_map(Op::Resume),
        ]
    }

    proptest! {
        /// Whatever mix of pushes, reserves and clones, every snapshot keeps exactly what it
        /// held when it was taken (growing a vector in place never shows through a clone).
        #[test]
        fn snapshots_never_change(ops in proptest::collection::vec(op(), 0..300)) {
            let mut current: PersistentVec<usize> = PersistentVec::new();
            let mut model: Vec<usize> = Vec::new();
            let mut snapshots: Vec<(PersistentVec<usize>, Vec<usize>)> = Vec::new();
            let mut next = 0;
            for op in ops {
                match op {
                    Op::Push => {
                        current.push(next);
                        model.push(next);
                        next += 1;
                    }
                    Op::Reserve(n) => {
                        current.reserve(n);
                        current.push(next);
                        model.push(next);
                        next += 1;
                    }
                    Op::Snapshot => snapshots.push((current.clone(), model.clone())),
                    Op::Resume(i) => {
                        if let Some((vec, items)) = snapshots.get(i % snapshots.len().max(1)) {
                            current = vec.clone();
                            model = items.clone();
                        }
                    }
                }
            }
            snapshots.push((current, model));
            for (vec, items) in &snapshots {
                prop_assert_eq!(vec.len(), items.len());
                prop_assert!(vec.iter().eq(items.iter()));
                for (i, item) in items.iter().enumerate() {
                    prop_assert_eq!(vec.get(i), Some(item));
                }
                prop_assert_eq!(vec.get(items.len()), None);
            }
            // The common prefix skips shared leaves yet agrees with comparing every element.
            for (a, a_items) in &snapshots {
                for (b, b_items) in &snapshots {
                    let naive = a_items.iter().zip(b_items).take_while(|(x, y)| x == y).count();
                    prop_assert_eq!(a.common_prefix_len(b, |x, y| x == y), naive);
                }
            }
        }

        #[test]
        fn behaves_like_vec_and_clones_are_independent(n in 0usize..3000, extra in 0usize..70) {
            let v: PersistentVec<usize> = (0..n).collect();
            let mut clone = v.clone();
            for i in 0..extra {
                clone.push(n + i);
            }
            prop_assert!(v.iter().copied().eq(0..n));
            prop_assert!(clone.iter().copied().eq(0..n + extra));
            prop_assert_eq!(v.len(), n);
            for i in (0..n + extra).step_by(97) {
                prop_assert_eq!(clone.get(i), Some(&i));
            }
        }
    }
}
