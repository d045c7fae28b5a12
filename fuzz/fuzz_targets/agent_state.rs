//! State documents: any text loads or gives a typed error; a loaded state writes back to JSON
//! that loads again.
#![no_main]

use agents_core::AgentState;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(state) = AgentState::from_json(text) {
        if let Ok(json) = state.to_json() {
            assert!(
                AgentState::from_json(&json).is_ok(),
                "a written state does not load"
            );
        }
    }
});
