//! JSON found in model text: any text, no panic; every value found is an object or array,
//! and parse_lenient agrees with serde_json on valid JSON.
#![no_main]

use inference::lenient_json::{json_values, parse_lenient};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    for value in json_values(text) {
        assert!(value.is_object() || value.is_array());
    }
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(text) {
        assert_eq!(parse_lenient(text), Some(value));
    }
});
