//! Provider streams: any body, in any chunking, decodes to events and at most one error (the
//! last item), for both providers.
#![no_main]

use inference::{replay_stream, StreamFormat};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (bool, u8, &[u8])| {
    let (anthropic, chunk_size, body) = input;
    let format = if anthropic {
        StreamFormat::Anthropic
    } else {
        StreamFormat::OpenAi
    };
    let chunks: Vec<Vec<u8>> = body
        .chunks(usize::from(chunk_size).max(1))
        .map(<[u8]>::to_vec)
        .collect();
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    else {
        return;
    };
    let items = runtime.block_on(replay_stream(format, chunks));
    if let Some(position) = items.iter().position(Result::is_err) {
        assert_eq!(position, items.len() - 1, "items after an error");
    }
});
