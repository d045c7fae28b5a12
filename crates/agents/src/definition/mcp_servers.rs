//! The `mcp_servers` section: MCP servers whose tools the agent gets.
//!
//! ```yaml
//! mcp_servers:
//!   - name: fs
//!     command: npx
//!     args: [-y, "@modelcontextprotocol/server-filesystem", /srv/docs]
//!     env: { NODE_OPTIONS: --max-old-space-size=256 }
//!     prefix: fs
//!     timeout: 30
//!   - url: https://mcp.example.com/mcp
//!     headers: { Authorization: "Bearer ${EXAMPLE_TOKEN}" }
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::DefinitionError;

/// One entry of `mcp_servers`: either `command` (stdio) or `url` (streamable HTTP).
///
/// `${NAME}` in `env` and `headers` values is replaced by the environment variable `NAME` when
/// the server is connected, so secrets stay out of the file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerDefinition {
    /// The server's name in logs and errors (default: the program or the URL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The program of a stdio server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Environment variables for it. A stdio server gets only these and the variables `bash`
    /// gets (`PATH`, `HOME`, `LANG`, ...: `agents_mcp::DEFAULT_MCP_ENV`), never the agent's API
    /// keys, unless `inherit_env` is true.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Whether a stdio server inherits the agent's whole environment, secrets included
    /// (default false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub inherit_env: bool,
    /// Its working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The endpoint of a streamable HTTP server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Headers sent to it (for example `Authorization`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Tool-name prefix: `prefix__tool`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// Per-call timeout in seconds (default 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
}

/// Checks what serde cannot: one transport per entry, URLs, prefixes, timeouts.
pub(super) fn validate(
    servers: &[McpServerDefinition],
    source: &str,
) -> Result<(), DefinitionError> {
    for (index, server) in servers.iter().enumerate() {
        let field = |name: &str, message: String| DefinitionError::Field {
            file: source.to_owned(),
            field: format!("mcp_servers[{index}].{name}"),
            message,
        };
        match (&server.command, &server.url) {
            (Some(_), Some(_)) => {
                return Err(field(
                    "url",
                    "give either `command` (stdio) or `url` (HTTP), not both".into(),
                ))
            }
            (None, None) => {
                return Err(field(
                    "command",
                    "give `command` (a stdio server) or `url` (an HTTP server)".into(),
                ))
            }
            (Some(command), None) if command.trim().is_empty() => {
                return Err(field("command", "must be a non-empty string".into()))
            }
            (None, Some(url)) if !(url.starts_with("http://") || url.starts_with("https://")) => {
                return Err(field(
                    "url",
                    format!("expected an http:// or https:// URL, found `{url}`"),
                ))
            }
            _ => {}
        }
        if server.url.is_some()
            && (!server.args.is_empty()
                || !server.env.is_empty()
                || server.cwd.is_some()
                || server.inherit_env)
        {
            return Err(field(
                "args",
                "`args`, `env`, `inherit_env` and `cwd` belong to a `command` server, not a `url` one".into(),
            ));
        }
        if server.command.is_some() && !server.headers.is_empty() {
            return Err(field(
                "headers",
                "`headers` belong to a `url` server, not a `command` one".into(),
            ));
        }
        if let Some(prefix) = &server.prefix {
            if prefix.is_empty()
                || !prefix
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(field("prefix", format!("use letters, digits, `_` or `-` (tool names allow no more), found `{prefix}`")));
            }
        }
        if server.timeout == Some(0) {
            return Err(field("timeout", "must be greater than 0".into()));
        }
    }
    Ok(())
}

/// `${NAME}` replaced by the environment variable `NAME`; `Err(NAME)` when it is not set.
pub fn expand_env(value: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start + 2..].find('}') else {
            break;
        };
        let name = &rest[start + 2..start + 2 + len];
        out.push_str(&rest[..start]);
        out.push_str(&lookup(name).ok_or_else(|| name.to_owned())?);
        rest = &rest[start + 3 + len..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(feature = "mcp")]
impl McpServerDefinition {
    /// The server to connect to, with `${NAME}` expanded from the environment.
    ///
    /// # Errors
    /// A message naming the environment variable that is not set.
    pub fn to_server(&self) -> Result<agents_mcp::McpServer, String> {
        let lookup = |name: &str| std::env::var(name).ok();
        let expand = |value: &str| {
            expand_env(value, lookup).map_err(|name| {
                format!(
                    "MCP server settings name the environment variable `{name}`, which is not set"
                )
            })
        };
        let mut server = match (&self.command, &self.url) {
            (Some(command), _) => {
                let mut server = agents_mcp::McpServer::stdio(command.clone(), self.args.clone());
                for (key, value) in &self.env {
                    server = server.with_env(key.clone(), expand(value)?);
                }
                if let Some(dir) = &self.cwd {
                    server = server.with_current_dir(dir);
                }
                server = server.with_inherited_env(self.inherit_env);
                server
            }
            (None, Some(url)) => {
                let mut server = agents_mcp::McpServer::http(url.clone());
                for (key, value) in &self.headers {
                    server = server.with_header(key.clone(), expand(value)?);
                }
                server
            }
            (None, None) => return Err("an MCP server entry needs `command` or `url`".to_owned()),
        };
        if let Some(name) = &self.name {
            server = server.with_name(name.clone());
        }
        if let Some(prefix) = &self.prefix {
            server = server.with_prefix(prefix.clone());
        }
        if let Some(seconds) = self.timeout {
            server = server.with_call_timeout(std::time::Duration::from_secs(seconds));
        }
        Ok(server)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::AgentDefinition;

    const BASE: &str = "version: 1\nid: a\nname: A\ndescription: d\nsystem_prompt: p\nllm: { provider: openai, model: m }\n";

    fn parse(servers: &str) -> Result<AgentDefinition, DefinitionError> {
        AgentDefinition::from_yaml_str(&format!("{BASE}mcp_servers:\n{servers}"), "a.yaml")
    }

    #[test]
    fn stdio_and_http_entries_parse_and_round_trip() {
        let definition = parse(
            "  - { name: fs, command: npx, args: [-y, server-fs, /tmp], env: { A: b }, prefix: fs, timeout: 30 }\n  - { url: 'http://127.0.0.1:3001/mcp', headers: { Authorization: 'Bearer x' } }\n",
        )
        .unwrap();
        assert_eq!(definition.mcp_servers.len(), 2);
        assert_eq!(definition.mcp_servers[0].command.as_deref(), Some("npx"));
        assert_eq!(definition.mcp_servers[0].timeout, Some(30));
        assert_eq!(
            definition.mcp_servers[1].headers["Authorization"],
            "Bearer x"
        );
        let again =
            AgentDefinition::from_yaml_str(&definition.to_yaml().unwrap(), "again").unwrap();
        assert_eq!(again, definition);
    }

    #[test]
    fn bad_entries_name_the_field() {
        let cases = [
            ("  - { prefix: fs }\n", "a.yaml: `mcp_servers[0].command`: give `command` (a stdio server) or `url` (an HTTP server)"),
            ("  - { command: x, url: 'http://h' }\n", "a.yaml: `mcp_servers[0].url`: give either `command` (stdio) or `url` (HTTP), not both"),
            ("  - { url: 'ftp://h' }\n", "a.yaml: `mcp_servers[0].url`: expected an http:// or https:// URL, found `ftp://h`"),
            ("  - { command: x, prefix: 'a b' }\n", "a.yaml: `mcp_servers[0].prefix`: use letters, digits, `_` or `-` (tool names allow no more), found `a b`"),
            ("  - { command: x }\n  - { command: y, timeout: 0 }\n", "a.yaml: `mcp_servers[1].timeout`: must be greater than 0"),
            ("  - { command: x, headers: { A: b } }\n", "a.yaml: `mcp_servers[0].headers`: `headers` belong to a `url` server, not a `command` one"),
        ];
        for (yaml, expected) in cases {
            assert_eq!(parse(yaml).unwrap_err().to_string(), expected, "{yaml}");
        }
        let unknown = parse("  - { command: x, comand: y }\n")
            .unwrap_err()
            .to_string();
        assert!(
            unknown.starts_with("a.yaml: `mcp_servers[0].comand`: unknown field `comand`, expected one of `name`, `command`"),
            "{unknown}"
        );
    }

    #[test]
    fn environment_references_are_expanded() {
        let lookup = |name: &str| (name == "TOKEN").then(|| "s3cret".to_owned());
        assert_eq!(
            expand_env("Bearer ${TOKEN}", lookup),
            Ok("Bearer s3cret".to_owned())
        );
        assert_eq!(expand_env("no refs", lookup), Ok("no refs".to_owned()));
        assert_eq!(expand_env("${MISSING}", lookup), Err("MISSING".to_owned()));
        assert_eq!(
            expand_env("unclosed ${X", lookup),
            Ok("unclosed ${X".to_owned())
        );
    }
}
