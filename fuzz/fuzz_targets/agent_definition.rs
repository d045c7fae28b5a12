//! YAML agent definitions: any text loads or gives a typed error, never a panic.
#![no_main]

use agents::definition::AgentDefinition;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(definition) = AgentDefinition::from_yaml_str(text, "fuzz.yaml") {
        let _ = definition.to_yaml();
    }
});
