//! The MCP servers the tests and benchmarks use, found where `cargo xtask mcp-servers` put
//! them (feature `testing`).
//!
//! Found through the environment (`AGENTS_MCP_NODE`, `AGENTS_MCP_EVERYTHING`,
//! `AGENTS_MCP_PYTHON`) or the file `~/.cache/agents-rs/mcp/servers.env` the xtask writes.
//! When they are missing, [`TestServers::find`] panics in CI (`CI=true`), so the tests fail
//! there, and returns `None` with a loud message on a developer machine, so the test skips.

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::server::McpServer;

/// Where the test servers are.
#[derive(Clone, Debug)]
pub struct TestServers {
    /// `node`.
    pub node: PathBuf,
    /// server-everything's `dist/index.js`.
    pub everything: PathBuf,
    /// A python with the `mcp` SDK.
    pub python: PathBuf,
}

impl TestServers {
    /// The installed servers; `None` (with a message on stderr) on a developer machine without
    /// them.
    ///
    /// # Panics
    /// In CI (`CI=true`) when the servers are not installed: there the tests must run.
    pub fn find() -> Option<TestServers> {
        let file = Self::env_file();
        let from_file = file
            .as_ref()
            .and_then(|f| std::fs::read_to_string(f).ok())
            .unwrap_or_default();
        let lookup = |key: &str| -> Option<PathBuf> {
            std::env::var_os(key).map(PathBuf::from).or_else(|| {
                from_file
                    .lines()
                    .filter_map(|line| line.split_once('='))
                    .find(|(k, _)| *k == key)
                    .map(|(_, v)| PathBuf::from(v.trim()))
            })
        };
        let found = (|| {
            let servers = TestServers {
                node: lookup("AGENTS_MCP_NODE")?,
                everything: lookup("AGENTS_MCP_EVERYTHING")?,
                python: lookup("AGENTS_MCP_PYTHON")?,
            };
            (servers.node.exists() && servers.everything.exists() && servers.python.exists())
                .then_some(servers)
        })();
        if found.is_none() {
            let message = format!(
                "MCP test servers not found (looked at the AGENTS_MCP_* variables and {}): run `cargo xtask mcp-servers`",
                file.map(|f| f.display().to_string()).unwrap_or_else(|| "~/.cache/agents-rs/mcp/servers.env".to_owned())
            );
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("{message}");
            }
            #[allow(clippy::print_stderr)]
            {
                eprintln!("\n*** SKIPPED: {message} ***\n");
            }
        }
        found
    }

    fn env_file() -> Option<PathBuf> {
        let cache = match std::env::var_os("AGENTS_MCP_CACHE") {
            Some(dir) => PathBuf::from(dir),
            None => PathBuf::from(std::env::var_os("HOME")?).join(".cache/agents-rs/mcp"),
        };
        Some(cache.join("servers.env"))
    }

    /// server-everything over stdio.
    pub fn everything_stdio(&self) -> McpServer {
        McpServer::stdio(
            self.node.to_string_lossy(),
            [
                self.everything.to_string_lossy().into_owned(),
                "stdio".to_owned(),
            ],
        )
        .with_name("everything")
    }

    /// The Python fixture server (`tests/fixtures/quirky_server.py`) over stdio.
    pub fn quirky(&self) -> McpServer {
        McpServer::stdio(
            self.python.to_string_lossy(),
            [concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/quirky_server.py"
            )],
        )
        .with_name("quirky")
    }

    /// Starts server-everything over streamable HTTP on a free port of 127.0.0.1 (`port` 0) or
    /// on `port`, and waits until it accepts connections.
    ///
    /// # Errors
    /// When node cannot start or the server does not listen within 20 s.
    pub fn start_everything_http(&self, port: u16) -> Result<HttpServer, String> {
        let port = if port == 0 { free_port()? } else { port };
        let child = Command::new(&self.node)
            .arg("--import")
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/loopback.mjs"
            ))
            .arg(&self.everything)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start node: {e}"))?;
        let server = HttpServer { child, port };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline {
                return Err(format!(
                    "server-everything did not listen on 127.0.0.1:{port} within 20 s"
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(server)
    }
}

/// A server-everything HTTP process; killed (by pid) and reaped when dropped.
#[derive(Debug)]
pub struct HttpServer {
    child: Child,
    port: u16,
}

impl HttpServer {
    /// Its MCP endpoint.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> Result<u16, String> {
    TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port on 127.0.0.1: {e}"))
}
