//! `McpServer`: how to reach an MCP server and how to treat it.

use std::path::PathBuf;
use std::time::Duration;

/// The default per-call timeout.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// The default time allowed to start a server and finish the handshake.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// The default bound on the text of one converted tool result, in characters.
pub const DEFAULT_MAX_RESULT_CHARS: usize = 100_000;
/// The default number of reconnection attempts after a server stopped.
pub const DEFAULT_MAX_RECONNECTS: u32 = 3;

/// Environment variables a stdio server gets from the agent's process when they are set (a
/// name ending in `*` is a prefix), the same list `bash` gets. Everything else (API keys
/// included) is left out unless given with [`McpServer::with_env`], or unless the server
/// inherits the whole environment ([`McpServer::with_inherited_env`]).
pub const DEFAULT_MCP_ENV: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TERM", "TZ", "TMPDIR",
];

/// Whether `name` is on [`DEFAULT_MCP_ENV`].
pub(crate) fn passes_default_env(name: &str) -> bool {
    DEFAULT_MCP_ENV
        .iter()
        .any(|allowed| match allowed.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == *allowed,
        })
}

/// How the client reaches a server. Its `Debug` shows header and environment names, never
/// their values.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpTransport {
    /// A local program spoken to over its stdin and stdout.
    Stdio {
        /// The program to run.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Environment variables given to it, besides [`DEFAULT_MCP_ENV`].
        env: Vec<(String, String)>,
        /// Its working directory (the caller's when `None`).
        current_dir: Option<PathBuf>,
        /// Whether it inherits the agent's whole environment (default: only
        /// [`DEFAULT_MCP_ENV`] and `env`).
        inherit_env: bool,
    },
    /// A remote server spoken to over streamable HTTP.
    Http {
        /// The endpoint URL, for example `http://127.0.0.1:3001/mcp`.
        url: String,
        /// Extra headers sent with every request (for example `Authorization`).
        headers: Vec<(String, String)>,
    },
}

impl std::fmt::Debug for McpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = |pairs: &[(String, String)]| {
            pairs
                .iter()
                .map(|(name, _)| format!("{name}=<redacted>"))
                .collect::<Vec<_>>()
        };
        match self {
            McpTransport::Stdio {
                program,
                args,
                env,
                current_dir,
                inherit_env,
            } => f
                .debug_struct("Stdio")
                .field("program", program)
                .field("args", args)
                .field("env", &names(env))
                .field("current_dir", current_dir)
                .field("inherit_env", inherit_env)
                .finish(),
            McpTransport::Http { url, headers } => f
                .debug_struct("Http")
                .field("url", &shown_url(url))
                .field("headers", &names(headers))
                .finish(),
        }
    }
}

/// An MCP server to connect to, with the limits the client applies to it.
///
/// ```
/// use std::time::Duration;
/// use agents_mcp::McpServer;
///
/// let fs = McpServer::stdio("npx", ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"])
///     .with_prefix("fs")
///     .with_call_timeout(Duration::from_secs(20));
/// assert_eq!(fs.name(), "npx");
/// let remote = McpServer::http("https://mcp.example.com/mcp")
///     .with_header("Authorization", "Bearer secret")
///     .with_name("example");
/// assert_eq!(remote.name(), "example");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpServer {
    pub(crate) transport: McpTransport,
    pub(crate) name: String,
    pub(crate) prefix: Option<String>,
    pub(crate) call_timeout: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) max_result_chars: usize,
    pub(crate) max_reconnects: u32,
}

impl McpServer {
    /// A server started as `program args..`, spoken to over stdio. Its stderr goes to
    /// `tracing` (target `agents_mcp::stderr`); its process group is killed and reaped when the
    /// client is dropped or closed.
    pub fn stdio<I, S>(program: impl Into<String>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let program = program.into();
        let name = program_name(&program);
        Self::new(
            McpTransport::Stdio {
                program,
                args: args.into_iter().map(Into::into).collect(),
                env: Vec::new(),
                current_dir: None,
                inherit_env: false,
            },
            name,
        )
    }

    /// A server at `url`, spoken to over streamable HTTP (`http://` or `https://`).
    pub fn http(url: impl Into<String>) -> Self {
        let url = url.into();
        let name = url.clone();
        Self::new(
            McpTransport::Http {
                url,
                headers: Vec::new(),
            },
            name,
        )
    }

    fn new(transport: McpTransport, name: String) -> Self {
        Self {
            transport,
            name,
            prefix: None,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            max_result_chars: DEFAULT_MAX_RESULT_CHARS,
            max_reconnects: DEFAULT_MAX_RECONNECTS,
        }
    }

    /// Names the server in logs and errors (default: the program's file name, or the URL).
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Gives a stdio server an environment variable (ignored over HTTP). Its value never
    /// appears in `Debug`, logs or errors.
    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let McpTransport::Stdio { env, .. } = &mut self.transport {
            env.push((key.into(), value.into()));
        }
        self
    }

    /// Lets a stdio server inherit the agent's whole environment, API keys included (ignored
    /// over HTTP). By default it gets only [`DEFAULT_MCP_ENV`] and what
    /// [`with_env`](Self::with_env) gives it.
    pub fn with_inherited_env(mut self, inherit: bool) -> Self {
        if let McpTransport::Stdio { inherit_env, .. } = &mut self.transport {
            *inherit_env = inherit;
        }
        self
    }

    /// Sets the working directory of a stdio server (ignored over HTTP).
    pub fn with_current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        if let McpTransport::Stdio { current_dir, .. } = &mut self.transport {
            *current_dir = Some(dir.into());
        }
        self
    }

    /// Adds a header sent with every HTTP request, for example `Authorization` (ignored over
    /// stdio). Header values never appear in logs or errors.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let McpTransport::Http { headers, .. } = &mut self.transport {
            headers.push((name.into(), value.into()));
        }
        self
    }

    /// Prefixes every tool name with `prefix__` (`fs__read_file`), so two servers can offer
    /// tools of the same name.
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// How long one tool call may take (default 60 s); past it the call is cancelled on the
    /// server and the model gets a tool error.
    pub fn with_call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// How long starting the server and the handshake may take (default 30 s).
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The most characters of one converted result the model sees (default 100,000); longer
    /// results are cut with a note saying how much was left out.
    pub fn with_max_result_chars(mut self, chars: usize) -> Self {
        self.max_result_chars = chars;
        self
    }

    /// How many times a call may try to reconnect to a server that stopped (default 3), with
    /// exponential backoff between attempts.
    pub fn with_max_reconnects(mut self, attempts: u32) -> Self {
        self.max_reconnects = attempts;
        self
    }

    /// The server's name in logs and errors.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tool-name prefix, if any.
    pub fn prefix(&self) -> Option<&str> {
        self.prefix.as_deref()
    }

    /// How the client reaches the server.
    pub fn transport(&self) -> &McpTransport {
        &self.transport
    }

    /// The per-call timeout.
    pub fn call_timeout(&self) -> Duration {
        self.call_timeout
    }

    /// The name the model sees for the server's tool `tool`.
    pub fn exposed_name(&self, tool: &str) -> String {
        match &self.prefix {
            Some(prefix) => format!("{prefix}__{tool}"),
            None => tool.to_owned(),
        }
    }
}

/// `url` without its user information and with its query values hidden: the parts a server
/// URL may carry a secret in.
fn shown_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.set_fragment(None);
            if parsed.query().is_some() {
                let keys: Vec<String> = parsed.query_pairs().map(|(k, _)| k.into_owned()).collect();
                parsed
                    .query_pairs_mut()
                    .clear()
                    .extend_pairs(keys.iter().map(|k| (k.as_str(), "<redacted>")));
            }
            parsed.to_string()
        }
        Err(_) => "<an unreadable URL>".to_owned(),
    }
}

fn program_name(program: &str) -> String {
    std::path::Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(program)
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_names_headers_and_variables_but_never_shows_their_values() {
        let http = McpServer::http("https://me:pw@mcp.example.com/mcp?token=t0k3n")
            .with_name("remote")
            .with_header("X-Api-Key", "s3cr3t-header");
        let stdio = McpServer::stdio("server", ["--flag"]).with_env("API_KEY", "s3cr3t-env");
        let shown = format!("{http:?} {stdio:?} {:?}", http.transport());
        for secret in ["pw", "t0k3n", "s3cr3t-header", "s3cr3t-env"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        for name in [
            "X-Api-Key=<redacted>",
            "API_KEY=<redacted>",
            "mcp.example.com",
            "--flag",
        ] {
            assert!(shown.contains(name), "{name} not in {shown}");
        }
    }

    #[test]
    fn the_default_environment_is_the_bash_allow_list() {
        for name in ["PATH", "HOME", "LC_ALL", "TMPDIR"] {
            assert!(passes_default_env(name), "{name}");
        }
        for name in [
            "OPENAI_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "PATHX",
            "GITHUB_TOKEN",
        ] {
            assert!(!passes_default_env(name), "{name}");
        }
    }
}
