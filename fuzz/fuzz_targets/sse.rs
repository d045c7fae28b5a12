//! The SSE parser: any bytes, in any chunking, under a small event limit. The events must not
//! depend on the chunking (until the first error), and no event may exceed the limit.
#![no_main]

use inference::SseParser;
use libfuzzer_sys::fuzz_target;

const LIMIT: usize = 256;

fn parse(chunks: &[&[u8]]) -> (Vec<inference::SseEvent>, bool) {
    let mut parser = SseParser::new().with_max_event_bytes(LIMIT);
    let mut events = Vec::new();
    for chunk in chunks {
        match parser.push(chunk) {
            Ok(more) => events.extend(more),
            Err(_) => return (events, true),
        }
    }
    match parser.finish() {
        Ok(last) => events.extend(last),
        Err(_) => return (events, true),
    }
    (events, false)
}

fuzz_target!(|input: (u8, &[u8])| {
    let (chunk_size, bytes) = input;
    let chunk_size = usize::from(chunk_size).max(1);
    let chunked: Vec<&[u8]> = bytes.chunks(chunk_size).collect();
    let (events, failed) = parse(&chunked);
    let (whole, whole_failed) = parse(&[bytes]);
    for event in &events {
        assert!(
            event.data.len() <= LIMIT,
            "event of {} bytes",
            event.data.len()
        );
    }
    if !failed && !whole_failed {
        assert_eq!(events, whole, "chunking changed the events");
    }
});
