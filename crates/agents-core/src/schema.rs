//! JSON Schemas of tool arguments: generated from Rust types, cleaned up for providers, and used
//! to check a call's arguments before the tool runs.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{Map, Value};

/// The JSON Schema of the arguments type `T`, in the form providers accept: an object schema
/// with `properties` (and `required` when some are), nested types inlined, without the
/// `$schema` and `title` noise schemars adds, and without a top-level `description` (the
/// tool's description says it).
///
/// ```
/// use agents_core::tools::arguments_schema;
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Args {
///     /// The city.
///     city: String,
/// }
///
/// let schema = arguments_schema::<Args>();
/// assert_eq!(schema["type"], "object");
/// assert_eq!(schema["required"][0], "city");
/// assert!(schema.get("title").is_none());
/// ```
pub fn arguments_schema<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .for_deserialize()
        .with(|settings| settings.inline_subschemas = true)
        .into_generator();
    let mut schema = clean_schema(generator.into_root_schema_for::<T>().into());
    // The type's doc comment would repeat the tool's own description.
    if let Value::Object(root) = &mut schema {
        root.remove("description");
    }
    schema
}

/// Removes `$schema` and `title` keywords (at every level), and gives an object schema without
/// `properties` an empty `properties` object (some providers require one).
pub fn clean_schema(schema: Value) -> Value {
    let mut schema = schema;
    if let Value::Object(root) = &mut schema {
        root.remove("$schema");
        clean_subschema(root);
        if root.get("type").and_then(Value::as_str) == Some("object")
            && !root.contains_key("properties")
        {
            root.insert("properties".to_owned(), Value::Object(Map::new()));
        }
    }
    schema
}

/// Checks `arguments` against the top level of an object `schema`: the arguments must be an
/// object, every `required` property must be present, present properties must have the declared
/// `type` (and be one of the `enum` values), and properties not in the schema are refused when it
/// says `additionalProperties: false`. Nested values are not checked here (deserialization does
/// that for typed tools).
///
/// # Errors
/// A message naming every offending parameter, e.g. ``missing required parameter `city` ``.
pub fn validate_arguments(schema: &Value, arguments: &Value) -> Result<(), String> {
    let Some(schema) = schema.as_object() else {
        return Ok(());
    };
    let Some(arguments) = arguments.as_object() else {
        return Err(format!(
            "arguments must be a JSON object, got {}",
            describe_value(arguments)
        ));
    };
    let mut problems = Vec::new();
    check_object("", schema, arguments, &mut problems);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// Checks the properties of `object` against an object `schema`; `prefix` names the parent
/// (`""` at the top, `"location."` inside the `location` parameter).
fn check_object(
    prefix: &str,
    schema: &Map<String, Value>,
    object: &Map<String, Value>,
    problems: &mut Vec<String>,
) {
    // One pass over the schema's few keys instead of a hashed lookup per keyword (this runs
    // for every tool call).
    let (mut properties, mut required, mut closed) = (None, None, false);
    for (keyword, value) in schema {
        match keyword.as_str() {
            "properties" => properties = value.as_object(),
            "required" => required = value.as_array(),
            "additionalProperties" => closed = *value == Value::Bool(false),
            _ => {}
        }
    }

    let missing: Vec<String> = required
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|name| !object.contains_key(*name))
        .map(|name| format!("{prefix}{name}"))
        .collect();
    match missing.as_slice() {
        [] => {}
        [one] => problems.push(format!("missing required parameter `{one}`")),
        many => problems.push(format!(
            "missing required parameters {}",
            quoted_list(many.iter().map(String::as_str))
        )),
    }

    for (name, value) in object {
        // The path is written out only for a problem or a nested check, so a valid argument
        // allocates nothing.
        let path = Path { prefix, name };
        match properties.and_then(|p| p.get(name)) {
            Some(property) => check_value(&path, property, value, problems),
            None if closed => {
                let expected = properties
                    .map(|p| quoted_list(p.keys().map(String::as_str)))
                    .unwrap_or_default();
                problems.push(if expected.is_empty() {
                    format!("unknown parameter `{path}` (none are accepted here)")
                } else {
                    format!("unknown parameter `{path}` (expected one of {expected})")
                });
            }
            None => {}
        }
    }
}

/// Drops `title` from a schema object and every schema nested in it (not from property names).
fn clean_subschema(schema: &mut Map<String, Value>) {
    schema.remove("title");
    for key in ["properties", "$defs", "definitions", "patternProperties"] {
        if let Some(Value::Object(children)) = schema.get_mut(key) {
            children.values_mut().for_each(clean_value);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(children)) = schema.get_mut(key) {
            children.iter_mut().for_each(clean_value);
        }
    }
    for key in ["items", "additionalProperties", "not", "if", "then", "else"] {
        if let Some(child) = schema.get_mut(key) {
            clean_value(child);
        }
    }
}

fn clean_value(schema: &mut Value) {
    if let Value::Object(object) = schema {
        clean_subschema(object);
    }
}

/// A parameter's name with the path of its parent (`location.` or `stops[2].`), written out
/// only when needed.
struct Path<'a> {
    prefix: &'a str,
    name: &'a str,
}

impl std::fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.prefix, self.name)
    }
}

/// The keywords of a property schema the checks read, found in one pass over its keys.
#[derive(Default)]
struct Keywords<'a> {
    type_: Option<&'a Value>,
    enum_: Option<&'a Vec<Value>>,
    minimum: Option<&'a Value>,
    maximum: Option<&'a Value>,
    any_of: Option<&'a Vec<Value>>,
    one_of: Option<&'a Vec<Value>>,
    items: Option<&'a Value>,
    /// `properties` or `required`: an object value is checked inside.
    nested: bool,
}

impl<'a> Keywords<'a> {
    fn of(property: &'a Value) -> Self {
        let mut keywords = Self::default();
        let Some(object) = property.as_object() else {
            return keywords;
        };
        for (keyword, value) in object {
            match keyword.as_str() {
                "type" => keywords.type_ = Some(value),
                "enum" => keywords.enum_ = value.as_array(),
                "minimum" => keywords.minimum = Some(value),
                "maximum" => keywords.maximum = Some(value),
                "anyOf" => keywords.any_of = value.as_array(),
                "oneOf" => keywords.one_of = value.as_array(),
                "items" => keywords.items = Some(value).filter(|items| items.is_object()),
                "properties" | "required" => keywords.nested = true,
                _ => {}
            }
        }
        keywords
    }
}

/// Adds a message to `problems` unless `value` fits `property` (or the schema is too complex
/// to tell); recurses into nested objects and array items.
fn check_value(
    name: &dyn std::fmt::Display,
    property: &Value,
    value: &Value,
    problems: &mut Vec<String>,
) {
    let keywords = Keywords::of(property);
    if let Some(problem) = shallow_problem(name, &keywords, value) {
        problems.push(problem);
        return;
    }
    match value {
        Value::Object(object) if keywords.nested => {
            if let Some(schema) = property.as_object() {
                check_object(&format!("{name}."), schema, object, problems);
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = keywords.items {
                for (index, item) in items.iter().enumerate() {
                    check_value(&format!("{name}[{index}]"), item_schema, item, problems);
                }
            }
        }
        _ => {}
    }
}

/// The first problem of `value` against `property`'s own keywords (`type`, `enum`,
/// `minimum`/`maximum`, `anyOf`/`oneOf`), not looking inside it.
fn shallow_problem(
    name: &dyn std::fmt::Display,
    keywords: &Keywords<'_>,
    value: &Value,
) -> Option<String> {
    if let Some(expected) = keywords.type_ {
        if !type_matches(expected, value) {
            return Some(format!(
                "parameter `{name}` must be {}, got {}",
                describe_types(&declared_types(expected)),
                describe_value(value)
            ));
        }
    }
    if let Some(allowed) = keywords.enum_ {
        if !allowed.contains(value) {
            let options: Vec<String> = allowed
                .iter()
                .filter(|option| !option.is_null())
                .map(Value::to_string)
                .collect();
            return Some(format!(
                "parameter `{name}` must be one of {}, got {}",
                options.join(", "),
                describe_value(value)
            ));
        }
    }
    if let Some(number) = value.as_f64() {
        if let Some(minimum) = keywords
            .minimum
            .filter(|m| m.as_f64().is_some_and(|m| number < m))
        {
            return Some(format!(
                "parameter `{name}` must be at least {minimum}, got {value}"
            ));
        }
        if let Some(maximum) = keywords
            .maximum
            .filter(|m| m.as_f64().is_some_and(|m| number > m))
        {
            return Some(format!(
                "parameter `{name}` must be at most {maximum}, got {value}"
            ));
        }
    }
    for alternatives in [keywords.any_of, keywords.one_of].into_iter().flatten() {
        let problems: Vec<String> = alternatives
            .iter()
            .filter_map(|alternative| {
                let mut found = Vec::new();
                check_value(name, alternative, value, &mut found);
                (!found.is_empty()).then(|| found.join("; "))
            })
            .collect();
        if alternatives.is_empty() || problems.len() < alternatives.len() {
            continue;
        }
        let types: Vec<&str> = alternatives
            .iter()
            .filter_map(|alternative| alternative.get("type"))
            .flat_map(declared_types)
            .collect();
        return Some(
            if types.iter().any(|t| has_type(value, t)) || types.is_empty() {
                problems.join(" or ")
            } else {
                format!(
                    "parameter `{name}` must be {}, got {}",
                    describe_types(&types),
                    describe_value(value)
                )
            },
        );
    }
    None
}

/// True when `value` has one of the types `expected` declares (or it declares none).
fn type_matches(expected: &Value, value: &Value) -> bool {
    match expected {
        Value::String(one) => has_type(value, one),
        Value::Array(many) => {
            let mut names = many.iter().filter_map(Value::as_str).peekable();
            names.peek().is_none() || names.any(|t| has_type(value, t))
        }
        _ => true,
    }
}

fn declared_types(expected: &Value) -> Vec<&str> {
    match expected {
        Value::String(one) => vec![one.as_str()],
        Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn has_type(value: &Value, expected: &str) -> bool {
    match expected {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}

fn describe_types(types: &[&str]) -> String {
    let named: Vec<&str> = types
        .iter()
        .map(|t| match *t {
            "string" => "a string",
            "number" => "a number",
            "integer" => "an integer",
            "boolean" => "a boolean",
            "array" => "an array",
            "object" => "an object",
            "null" => "null",
            other => other,
        })
        .collect();
    named.join(" or ")
}

/// The value as JSON, shortened so a huge argument does not flood the message.
fn describe_value(value: &Value) -> String {
    const MAX_CHARS: usize = 80;
    let text = value.to_string();
    if text.chars().count() <= MAX_CHARS {
        return text;
    }
    let cut: String = text.chars().take(MAX_CHARS).collect();
    format!("{cut}...")
}

fn quoted_list<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "note": {"type": ["string", "null"]},
                "title": {"type": "string", "title": "noise"}
            },
            "required": ["city"],
            "additionalProperties": false
        })
    }

    #[test]
    fn accepts_valid_arguments() {
        let args = json!({"city": "Paris", "days": 3, "unit": "celsius", "note": null});
        assert_eq!(validate_arguments(&schema(), &args), Ok(()));
    }

    #[test]
    fn names_a_missing_required_parameter() {
        let error = validate_arguments(&schema(), &json!({})).unwrap_err();
        assert_eq!(error, "missing required parameter `city`");
    }

    #[test]
    fn names_all_missing_required_parameters() {
        let schema = json!({"type": "object", "properties": {}, "required": ["a", "b"]});
        let error = validate_arguments(&schema, &json!({})).unwrap_err();
        assert_eq!(error, "missing required parameters `a`, `b`");
    }

    #[test]
    fn reports_a_wrong_type_with_the_value() {
        let error =
            validate_arguments(&schema(), &json!({"city": "Paris", "days": "three"})).unwrap_err();
        assert_eq!(error, "parameter `days` must be an integer, got \"three\"");
    }

    #[test]
    fn a_float_is_not_an_integer() {
        let error =
            validate_arguments(&schema(), &json!({"city": "Paris", "days": 2.5})).unwrap_err();
        assert_eq!(error, "parameter `days` must be an integer, got 2.5");
    }

    #[test]
    fn reports_a_value_outside_the_enum() {
        let error =
            validate_arguments(&schema(), &json!({"city": "Paris", "unit": "kelvin"})).unwrap_err();
        assert_eq!(
            error,
            "parameter `unit` must be one of \"celsius\", \"fahrenheit\", got \"kelvin\""
        );
    }

    #[test]
    fn refuses_unknown_parameters_when_the_schema_is_closed() {
        let error =
            validate_arguments(&schema(), &json!({"city": "Paris", "town": "x"})).unwrap_err();
        assert!(error.starts_with("unknown parameter `town` (expected one of `city`"));
    }

    #[test]
    fn accepts_unknown_parameters_when_the_schema_is_open() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert_eq!(validate_arguments(&schema, &json!({"b": 1})), Ok(()));
    }

    #[test]
    fn reports_every_problem_at_once() {
        let error = validate_arguments(&schema(), &json!({"days": true})).unwrap_err();
        assert_eq!(
            error,
            "missing required parameter `city`; parameter `days` must be an integer, got true"
        );
    }

    #[test]
    fn checks_nested_objects_and_array_items_by_path() {
        let schema = json!({"type": "object", "properties": {
            "location": {"type": "object", "properties": {
                "latitude": {"type": "number"},
                "longitude": {"type": "number"}
            }, "required": ["latitude", "longitude"]},
            "tags": {"type": "array", "items": {"type": "string"}}
        }});
        let error = validate_arguments(
            &schema,
            &json!({"location": {"latitude": "north"}, "tags": ["a", 2]}),
        )
        .unwrap_err();
        assert_eq!(
            error,
            "missing required parameter `location.longitude`; \
             parameter `location.latitude` must be a number, got \"north\"; \
             parameter `tags[1]` must be a string, got 2"
        );
    }

    #[test]
    fn checks_numeric_bounds() {
        let schema = json!({"type": "object", "properties": {
            "days": {"type": "integer", "minimum": 1, "maximum": 7}
        }});
        assert_eq!(
            validate_arguments(&schema, &json!({"days": 9})).unwrap_err(),
            "parameter `days` must be at most 7, got 9"
        );
        assert_eq!(
            validate_arguments(&schema, &json!({"days": 0})).unwrap_err(),
            "parameter `days` must be at least 1, got 0"
        );
    }

    #[test]
    fn refuses_non_object_arguments() {
        let error = validate_arguments(&schema(), &json!([1, 2])).unwrap_err();
        assert_eq!(error, "arguments must be a JSON object, got [1,2]");
    }

    #[test]
    fn any_of_accepts_any_alternative() {
        let schema = json!({"type": "object", "properties": {
            "n": {"anyOf": [{"type": "integer"}, {"type": "string"}]}
        }});
        assert_eq!(validate_arguments(&schema, &json!({"n": "x"})), Ok(()));
        let error = validate_arguments(&schema, &json!({"n": false})).unwrap_err();
        assert_eq!(
            error,
            "parameter `n` must be an integer or a string, got false"
        );
    }

    #[test]
    fn long_values_are_shortened_in_messages() {
        let long = "x".repeat(500);
        let error = validate_arguments(&schema(), &json!({"city": 1, "note": 2, "days": long}))
            .unwrap_err();
        assert!(error.len() < 400, "{error}");
        assert!(error.contains("..."));
    }

    #[test]
    fn cleaning_keeps_a_property_called_title_but_drops_title_keywords() {
        let cleaned = clean_schema(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Args",
            "type": "object",
            "properties": {"title": {"type": "string", "title": "noise"}}
        }));
        assert_eq!(
            cleaned,
            json!({"type": "object", "properties": {"title": {"type": "string"}}})
        );
    }

    #[test]
    fn cleaning_adds_empty_properties_to_an_object_schema() {
        let cleaned = clean_schema(json!({"type": "object"}));
        assert_eq!(cleaned, json!({"type": "object", "properties": {}}));
    }

    fn arbitrary_json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            "[a-z]{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map("[a-z]{1,4}", inner, 0..4)
                    .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    /// Arguments that are often, but not always, valid for `schema()`.
    fn near_valid_arguments() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        (
            prop_oneof![
                Just(None),
                arbitrary_json().prop_map(Some),
                "[a-z]{0,6}".prop_map(|c| Some(Value::String(c)))
            ],
            prop_oneof![
                Just(None),
                arbitrary_json().prop_map(Some),
                any::<i32>().prop_map(|d| Some(Value::from(d)))
            ],
            prop_oneof![
                Just(None),
                Just(Some(json!("celsius"))),
                Just(Some(json!("kelvin")))
            ],
        )
            .prop_map(|(city, days, unit)| {
                let mut object = Map::new();
                for (key, value) in [("city", city), ("days", days), ("unit", unit)] {
                    if let Some(value) = value {
                        object.insert(key.to_owned(), value);
                    }
                }
                Value::Object(object)
            })
    }

    proptest::proptest! {
        #[test]
        fn validation_never_panics_and_accepts_exactly_well_typed_cities(
            arguments in proptest::prop_oneof![arbitrary_json(), near_valid_arguments()]
        ) {
            let result = validate_arguments(&schema(), &arguments);
            let well_formed = arguments.as_object().is_some_and(|object| {
                object.get("city").is_some_and(Value::is_string)
                    && object.keys().all(|k| ["city", "days", "unit", "note", "title"].contains(&k.as_str()))
                    && object.get("days").is_none_or(|d| d.is_i64() || d.is_u64())
                    && object.get("unit").is_none_or(|u| u == "celsius" || u == "fahrenheit")
                    && object.get("note").is_none_or(|n| n.is_string() || n.is_null())
                    && object.get("title").is_none_or(Value::is_string)
            });
            proptest::prop_assert_eq!(result.is_ok(), well_formed, "{:?}", result);
        }
    }
}
