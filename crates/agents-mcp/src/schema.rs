//! Input schemas as servers send them, made acceptable to every provider.
//!
//! Servers send schemas with quirks that one provider or another rejects: no `type`, no
//! `properties`, a top level that is not an object, `$ref`s into `$defs`/`definitions`.
//! [`normalize_schema`] returns an object schema with `properties` and every local reference
//! inlined (recursive references, and inlining past a fixed budget, become `{}`: any value).

use serde_json::{Map, Value};

/// The most schema nodes inlining may copy; past it a reference becomes `{}` (keeps a
/// pathological schema from growing exponentially).
const INLINE_BUDGET: usize = 10_000;

/// An object schema equivalent to `schema` that both providers accept.
pub fn normalize_schema(schema: &Value) -> Value {
    let Value::Object(root) = schema else {
        return empty_object_schema();
    };
    let definitions = collect_definitions(root);
    let mut budget = INLINE_BUDGET;
    let mut stack = Vec::new();
    let mut top = Map::with_capacity(root.len());
    for (key, value) in root {
        if matches!(key.as_str(), "$defs" | "definitions" | "$schema" | "$id") {
            continue;
        }
        top.insert(
            key.clone(),
            inline(value, &definitions, &mut stack, &mut budget),
        );
    }
    // A top level that is only a reference: take the referenced schema's keys.
    if let Some(Value::String(reference)) = top.remove("$ref") {
        if let Some(Value::Object(target)) =
            resolve(&reference, &definitions, &mut stack, &mut budget)
        {
            for (key, value) in target {
                top.entry(key).or_insert(value);
            }
        }
    }
    top.insert("type".to_owned(), Value::String("object".to_owned()));
    match top.get("properties") {
        Some(Value::Object(_)) => {}
        _ => {
            top.insert("properties".to_owned(), Value::Object(Map::new()));
        }
    }
    if let Some(required) = top.get("required") {
        if !required.is_array() {
            top.remove("required");
        }
    }
    Value::Object(top)
}

fn empty_object_schema() -> Value {
    let mut map = Map::new();
    map.insert("type".to_owned(), Value::String("object".to_owned()));
    map.insert("properties".to_owned(), Value::Object(Map::new()));
    Value::Object(map)
}

fn collect_definitions(root: &Map<String, Value>) -> Map<String, Value> {
    let mut definitions = Map::new();
    for section in ["definitions", "$defs"] {
        if let Some(Value::Object(defs)) = root.get(section) {
            for (name, schema) in defs {
                definitions.insert(format!("#/{section}/{name}"), schema.clone());
            }
        }
    }
    definitions
}

fn inline(
    value: &Value,
    definitions: &Map<String, Value>,
    stack: &mut Vec<String>,
    budget: &mut usize,
) -> Value {
    *budget = budget.saturating_sub(1);
    match value {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get("$ref") {
                let mut resolved = match resolve(reference, definitions, stack, budget) {
                    Some(Value::Object(target)) => target,
                    _ => Map::new(),
                };
                // Sibling keywords (a description next to the $ref) win over the target's.
                for (key, sibling) in map {
                    if !matches!(key.as_str(), "$ref" | "$defs" | "definitions") {
                        resolved.insert(key.clone(), inline(sibling, definitions, stack, budget));
                    }
                }
                return Value::Object(resolved);
            }
            Value::Object(
                map.iter()
                    .filter(|(key, _)| !matches!(key.as_str(), "$defs" | "definitions"))
                    .map(|(key, v)| (key.clone(), inline(v, definitions, stack, budget)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| inline(v, definitions, stack, budget))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The inlined target of a local reference; `None` for unknown, remote, recursive or
/// over-budget references (the caller uses `{}`).
fn resolve(
    reference: &str,
    definitions: &Map<String, Value>,
    stack: &mut Vec<String>,
    budget: &mut usize,
) -> Option<Value> {
    if *budget == 0 || stack.iter().any(|r| r == reference) {
        return None;
    }
    let target = definitions.get(reference)?;
    stack.push(reference.to_owned());
    let inlined = inline(target, definitions, stack, budget);
    stack.pop();
    Some(inlined)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn a_missing_schema_becomes_an_empty_object_schema() {
        assert_eq!(
            normalize_schema(&Value::Null),
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(
            normalize_schema(&json!({})),
            json!({"type": "object", "properties": {}})
        );
    }

    #[test]
    fn a_schema_without_type_gets_type_object_and_keeps_its_properties() {
        let schema = json!({"properties": {"path": {"type": "string"}}, "required": ["path"]});
        assert_eq!(
            normalize_schema(&schema),
            json!({"properties": {"path": {"type": "string"}}, "required": ["path"], "type": "object"})
        );
    }

    #[test]
    fn local_references_are_inlined_and_definitions_dropped() {
        let schema = json!({
            "type": "object",
            "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}}},
            "definitions": {"Name": {"type": "string"}},
            "properties": {
                "at": {"$ref": "#/$defs/Point", "description": "where"},
                "name": {"$ref": "#/definitions/Name"}
            }
        });
        assert_eq!(
            normalize_schema(&schema),
            json!({
                "type": "object",
                "properties": {
                    "at": {"type": "object", "properties": {"x": {"type": "number"}}, "description": "where"},
                    "name": {"type": "string"}
                }
            })
        );
    }

    #[test]
    fn a_recursive_reference_ends_in_any_value() {
        let schema = json!({
            "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
            "$ref": "#/$defs/Node"
        });
        assert_eq!(
            normalize_schema(&schema),
            json!({"type": "object", "properties": {"next": {}}})
        );
    }

    #[test]
    fn exponential_reference_fan_out_stays_within_the_budget() {
        // Each level references the next twice: naive inlining would copy 2^40 nodes.
        let mut defs = Map::new();
        for level in 0..40 {
            defs.insert(
                format!("L{level}"),
                json!({"type": "object", "properties": {
                    "a": {"$ref": format!("#/$defs/L{}", level + 1)},
                    "b": {"$ref": format!("#/$defs/L{}", level + 1)}
                }}),
            );
        }
        defs.insert("L40".to_owned(), json!({"type": "string"}));
        let schema = json!({"$defs": defs, "$ref": "#/$defs/L0"});
        let normalized = normalize_schema(&schema);
        let size = normalized.to_string().len();
        assert!(size < 2_000_000, "normalized schema has {size} bytes");
        assert_eq!(normalized["type"], "object");
    }

    fn arbitrary_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            "[a-z$#/]{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(
                    prop_oneof![
                        Just("$ref".to_owned()),
                        Just("$defs".to_owned()),
                        Just("type".to_owned()),
                        Just("properties".to_owned()),
                        "[a-z]{1,6}"
                    ],
                    inner,
                    0..5
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn every_normalized_schema_is_an_object_schema_without_references(schema in arbitrary_json()) {
            let normalized = normalize_schema(&schema);
            prop_assert_eq!(&normalized["type"], "object");
            prop_assert!(normalized["properties"].is_object());
            prop_assert!(normalized.get("$defs").is_none());
            // normalizing twice changes nothing
            prop_assert_eq!(normalize_schema(&normalized), normalized);
        }
    }
}
