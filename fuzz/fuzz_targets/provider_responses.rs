//! Provider answers (`complete`): any body parses or gives a typed error, for both providers.
#![no_main]

use inference::providers::{anthropic, openai};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|body: &str| {
    let _ = openai::parse_response(body);
    let _ = anthropic::parse_response(body);
});
