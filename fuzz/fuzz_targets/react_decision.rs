//! ReAct decisions: any model reply parses to a decision or a typed error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = drivers_react::parse_decision(text);
});
