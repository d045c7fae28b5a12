//! Strict parsing: serde for shape and types (with the failing field's path), then the checks
//! serde cannot express (version, non-empty strings, positive limits).

use std::path::Path;

use super::{AgentDefinition, DefinitionError};

impl AgentDefinition {
    /// Parses and validates a definition; `source` names it in errors (usually the file path).
    ///
    /// # Errors
    /// [`DefinitionError::Syntax`] for malformed YAML, [`DefinitionError::Field`] naming the
    /// field for unknown, missing, mistyped or invalid values.
    pub fn from_yaml_str(yaml: &str, source: &str) -> Result<Self, DefinitionError> {
        parse_definition(yaml, source)
    }

    /// Reads, parses and validates a definition file.
    ///
    /// # Errors
    /// [`DefinitionError::Io`] when the file cannot be read, else as [`Self::from_yaml_str`].
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, DefinitionError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| DefinitionError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_yaml_str(&text, &path.display().to_string())
    }
}

/// Parses and validates one definition.
pub(super) fn parse_definition(
    yaml: &str,
    source: &str,
) -> Result<AgentDefinition, DefinitionError> {
    if yaml.trim().is_empty() {
        return Err(syntax(
            source,
            "the file is empty; expected a YAML mapping with `version: 1`",
        ));
    }
    let deserializer = serde_yaml::Deserializer::from_str(yaml);
    let mut definition: AgentDefinition =
        serde_path_to_error::deserialize(deserializer).map_err(|error| {
            let path = error.path().to_string();
            let inner = error.into_inner();
            let location = inner
                .location()
                .filter(|_| !strip_location(&inner.to_string()).contains(" column "))
                .map(|l| format!(" (line {}, column {})", l.line(), l.column()))
                .unwrap_or_default();
            let message = strip_location(&inner.to_string());
            // serde_yaml prefixes the path itself; it is reported separately
            let message = match message.split_once(": ") {
                Some((prefix, rest)) if !prefix.contains(' ') && path.starts_with(prefix) => {
                    rest.to_owned()
                }
                _ => message,
            };
            let message = humanize(&message);
            match field_of(&path, &message) {
                Some(field) => DefinitionError::Field {
                    file: source.to_owned(),
                    field,
                    message: format!("{message}{location}"),
                },
                None => syntax(source, &format!("{message}{location}")),
            }
        })?;
    validate(&mut definition, source)?;
    super::mcp_servers::validate(&definition.mcp_servers, source)?;
    super::a2a_agents::validate(&definition.a2a_agents, source)?;
    Ok(definition)
}

fn validate(definition: &mut AgentDefinition, source: &str) -> Result<(), DefinitionError> {
    if definition.version != 1 {
        return Err(field(
            source,
            "version",
            format!("unsupported version {}; expected 1", definition.version),
        ));
    }
    for (name, value) in [
        ("id", &mut definition.id),
        ("name", &mut definition.name),
        ("description", &mut definition.description),
        ("system_prompt", &mut definition.system_prompt),
        ("llm.model", &mut definition.llm.model),
    ] {
        let trimmed = value.trim();
        if trimmed.is_empty() {
            return Err(field(source, name, "must be a non-empty string".into()));
        }
        *value = trimmed.to_owned();
    }
    if let Some(url) = &definition.llm.base_url {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(field(
                source,
                "llm.base_url",
                format!("expected an http:// or https:// URL, found `{url}`"),
            ));
        }
    }
    if let Some(temperature) = definition.llm.temperature {
        if !(0.0..=2.0).contains(&temperature) {
            return Err(field(
                source,
                "llm.temperature",
                format!("must be between 0 and 2, found {temperature}"),
            ));
        }
    }
    let execution = &definition.execution;
    for (name, zero) in [
        ("llm.max_tokens", definition.llm.max_tokens == Some(0)),
        (
            "llm.request_timeout_sec",
            definition.llm.request_timeout_sec == Some(0),
        ),
        (
            "llm.context_window",
            definition.llm.context_window == Some(0),
        ),
        ("execution.max_steps", execution.max_steps == Some(0)),
        ("execution.max_tokens", execution.max_tokens == Some(0)),
        ("execution.timeout_sec", execution.timeout_sec == Some(0)),
        (
            "execution.masked_executions",
            execution.masked_executions == Some(0),
        ),
    ] {
        if zero {
            return Err(field(source, name, "must be greater than 0".into()));
        }
    }
    if execution.masked_executions.is_some()
        && execution.trace != Some(super::agent_definition::TraceMode::Masked)
    {
        return Err(field(
            source,
            "execution.masked_executions",
            "applies to `trace: masked` only; set `trace: masked` or remove it".into(),
        ));
    }
    let lists = [
        (
            "tools.allow",
            definition.tools.allow.clone().unwrap_or_default(),
        ),
        ("tools.deny", definition.tools.deny.clone()),
        ("capabilities", definition.capabilities.clone()),
    ];
    for (name, list) in lists {
        if list.iter().any(|item| item.trim().is_empty()) {
            return Err(field(
                source,
                name,
                "entries must be non-empty strings".into(),
            ));
        }
    }
    Ok(())
}

/// The dotted field path for an error, or `None` when it concerns the document as a whole.
fn field_of(path: &str, message: &str) -> Option<String> {
    let base = if path == "." { "" } else { path };
    // serde reports a missing field at its parent; name the field itself.
    if let Some(missing) = between(message, "missing field `", "`") {
        return Some(join(base, missing));
    }
    (!base.is_empty()).then(|| base.to_owned())
}

fn join(base: &str, name: &str) -> String {
    if base.is_empty() {
        name.to_owned()
    } else {
        format!("{base}.{name}")
    }
}

fn between<'a>(text: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let rest = &text[text.find(start)? + start.len()..];
    Some(&rest[..rest.find(end)?])
}

/// serde_yaml appends ` at line L column C`; the location is reported separately.
fn strip_location(message: &str) -> String {
    match message
        .rfind(" at line ")
        .filter(|i| !message[*i..].contains(','))
    {
        Some(index) => message[..index].to_owned(),
        None => message.to_owned(),
    }
}

/// Rewrites serde's type names into words: `expected usize` → `expected an integer`.
fn humanize(message: &str) -> String {
    let message = message
        .replace("a sequence", "a list")
        .replace("a map", "a mapping")
        .replace("struct AgentDefinition", "a mapping")
        .replace("struct LlmSettings", "a mapping")
        .replace("struct ExecutionSettings", "a mapping")
        .replace("struct ToolPolicy", "a mapping")
        .replace("struct McpServerDefinition", "a mapping");
    let integer = ["usize", "u64", "u32", "an integer"];
    if let (Some(found), Some(expected)) = (
        between(&format!("{message}\u{0}"), "invalid type: ", ", expected "),
        message.split(", expected ").nth(1),
    ) {
        if integer.contains(&expected) && found.starts_with("integer `-") {
            return format!("expected a non-negative integer, found {found}");
        }
        let expected = if integer.contains(&expected) {
            "an integer"
        } else if expected == "f32" || expected == "f64" {
            "a number"
        } else {
            expected
        };
        return format!("expected {expected}, found {found}");
    }
    if let Some(rest) = message.strip_prefix("invalid value: ") {
        if let Some((found, expected)) = rest.split_once(", expected ") {
            if integer.contains(&expected) {
                return format!("expected a non-negative integer, found {found}");
            }
        }
    }
    message
}

fn field(source: &str, name: &str, message: String) -> DefinitionError {
    DefinitionError::Field {
        file: source.to_owned(),
        field: name.to_owned(),
        message,
    }
}

fn syntax(source: &str, message: &str) -> DefinitionError {
    DefinitionError::Syntax {
        file: source.to_owned(),
        message: message.to_owned(),
    }
}
