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

/// How the client reaches a server.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpTransport {
    /// A local program spoken to over its stdin and stdout.
    Stdio {
        /// The program to run.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables.
        env: Vec<(String, String)>,
        /// Its working directory (the caller's when `None`).
        current_dir: Option<PathBuf>,
    },
    /// A remote server spoken to over streamable HTTP.
    Http {
        /// The endpoint URL, for example `http://127.0.0.1:3001/mcp`.
        url: String,
        /// Extra headers sent with every request (for example `Authorization`).
        headers: Vec<(String, String)>,
    },
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

    /// Adds an environment variable for a stdio server (ignored over HTTP).
    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let McpTransport::Stdio { env, .. } = &mut self.transport {
            env.push((key.into(), value.into()));
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

fn program_name(program: &str) -> String {
    std::path::Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(program)
        .to_owned()
}
