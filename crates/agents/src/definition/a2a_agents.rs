//! The `a2a_agents` section: remote Agent2Agent (A2A 1.0) agents the agent can call, each
//! as a tool of its own.
//!
//! ```yaml
//! a2a_agents:
//!   - name: researcher          # the tool's name
//!     url: http://127.0.0.1:8485/
//!     token: ${RESEARCHER_TOKEN} # the bearer token, if the agent needs one
//!     timeout: 120               # seconds per call (default 120)
//!     max_chars: 20000           # the longest answer the model reads (default 20000)
//! ```

use serde::{Deserialize, Serialize};

use super::DefinitionError;

/// One entry of `a2a_agents`.
///
/// `${NAME}` in `token` is replaced by the environment variable `NAME` when the tool is
/// made, so the secret stays out of the file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct A2aAgentDefinition {
    /// The tool's name (letters, digits, `_`, `-`).
    pub name: String,
    /// The agent's base URL (its card is at `URL/.well-known/agent-card.json`).
    pub url: String,
    /// The bearer token (`${ENV_VAR}` is expanded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// The tool's description (default: says it asks that remote agent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Seconds a call may take (default 120).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
    /// The longest answer returned to the model, in characters (default 20000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<usize>,
}

/// Checks names, URLs, timeouts and caps.
pub(super) fn validate(agents: &[A2aAgentDefinition], source: &str) -> Result<(), DefinitionError> {
    for (index, agent) in agents.iter().enumerate() {
        let field = |name: &str, message: String| DefinitionError::Field {
            file: source.to_owned(),
            field: format!("a2a_agents[{index}].{name}"),
            message,
        };
        if agent.name.is_empty()
            || !agent
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(field(
                "name",
                format!(
                    "use letters, digits, `_` or `-` (it is a tool name), found `{}`",
                    agent.name
                ),
            ));
        }
        if agents[..index].iter().any(|other| other.name == agent.name) {
            return Err(field("name", format!("`{}` is named twice", agent.name)));
        }
        if !(agent.url.starts_with("http://") || agent.url.starts_with("https://")) {
            return Err(field(
                "url",
                format!("expected an http:// or https:// URL, found `{}`", agent.url),
            ));
        }
        if agent.timeout == Some(0) {
            return Err(field("timeout", "must be greater than 0".into()));
        }
        if agent.max_chars == Some(0) {
            return Err(field("max_chars", "must be greater than 0".into()));
        }
    }
    Ok(())
}

#[cfg(feature = "serve")]
impl A2aAgentDefinition {
    /// The tool that calls this agent, with `${NAME}` in the token expanded from the
    /// environment.
    ///
    /// # Errors
    /// A message naming an environment variable that is not set, or a URL the client refuses.
    pub fn to_tool(&self) -> Result<agents_serve::a2a::A2aAgentTool, String> {
        let token = match &self.token {
            Some(token) => Some(
                super::expand_env(token, |name| std::env::var(name).ok()).map_err(|name| {
                    format!(
                        "a2a_agents `{}`: the token names the environment variable `{name}`, which is not set",
                        self.name
                    )
                })?,
            ),
            None => None,
        };
        let mut remote = agents_serve::a2a::A2aRemote::new(self.name.clone(), self.url.clone());
        remote.token = token.filter(|t| !t.is_empty());
        remote.description = self.description.clone();
        if let Some(seconds) = self.timeout {
            remote.timeout = std::time::Duration::from_secs(seconds);
        }
        if let Some(max) = self.max_chars {
            remote.max_chars = max;
        }
        agents_serve::a2a::A2aAgentTool::new(remote)
            .map_err(|e| format!("a2a_agents `{}`: {e}", self.name))
    }
}

#[cfg(test)]
mod tests {
    use super::super::AgentDefinition;

    const BASE: &str = "version: 1\nid: a\nname: A\ndescription: d\nllm: {provider: openai, model: m}\nsystem_prompt: hi\n";

    fn parse(section: &str) -> Result<AgentDefinition, String> {
        AgentDefinition::from_yaml_str(&format!("{BASE}a2a_agents:\n{section}"), "a.yaml")
            .map_err(|e| e.to_string())
    }

    #[test]
    fn entries_parse_with_their_defaults() {
        let definition =
            parse("  - name: researcher\n    url: http://127.0.0.1:8485/\n    token: ${T}\n    timeout: 30\n").unwrap();
        let agent = &definition.a2a_agents[0];
        assert_eq!(agent.name, "researcher");
        assert_eq!(agent.token.as_deref(), Some("${T}"));
        assert_eq!(agent.timeout, Some(30));
        assert_eq!(agent.max_chars, None);
    }

    #[test]
    fn bad_entries_are_refused_by_field() {
        let error = parse("  - name: bad name\n    url: http://x/\n").unwrap_err();
        assert!(error.contains("a2a_agents[0].name"), "{error}");
        let error = parse("  - name: a\n    url: ftp://x/\n").unwrap_err();
        assert!(error.contains("a2a_agents[0].url"), "{error}");
        let error = parse("  - name: a\n    url: http://x/\n  - name: a\n    url: http://y/\n")
            .unwrap_err();
        assert!(error.contains("named twice"), "{error}");
        let error = parse("  - name: a\n    url: http://x/\n    timeout: 0\n").unwrap_err();
        assert!(error.contains("timeout"), "{error}");
        let error = parse("  - name: a\n    url: http://x/\n    retries: 3\n").unwrap_err();
        assert!(error.contains("retries"), "{error}");
    }
}
