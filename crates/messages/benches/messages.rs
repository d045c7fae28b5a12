//! `messages/append_clone`: the cost of appending one message to a clone of a long history.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use messages::{Message, Messages};
use std::hint::black_box;

fn append_clone(c: &mut Criterion) {
    let mut group = c.benchmark_group("messages/append_clone");
    for size in [10usize, 1_000, 100_000] {
        let history: Messages = (0..size)
            .map(|i| Message::user(format!("message number {i}")))
            .collect();
        let extra = Message::assistant("one more");
        group.bench_with_input(BenchmarkId::from_parameter(size), &history, |b, history| {
            b.iter(|| {
                let clone = black_box(history).clone();
                black_box(clone.appended(extra.clone()))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, append_clone);
criterion_main!(benches);
