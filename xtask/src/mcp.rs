//! `cargo xtask mcp-servers`: installs the MCP servers the `agents-mcp` tests talk to, and the
//! clients the interop tests (`crates/agents/tests/cli_interop.rs`) point at our servers.
//!
//! npm `@modelcontextprotocol/server-everything` goes into `~/.cache/agents-rs/mcp/npm`, PyPI
//! `mcp` (for the Python fixture server and the interop tests' MCP client) and
//! `a2a-sdk[http-server]` (the interop tests' A2A client and A2A agent) into the venv
//! `~/.cache/agents-rs/mcp/venv`, npm `@modelcontextprotocol/inspector` (its CLI mode) into
//! `~/.cache/agents-rs/mcp/inspector`. All are pinned and installed only when missing. The task writes `~/.cache/agents-rs/mcp/servers.env`
//! (`KEY=value` lines), which the tests read; it also prints the lines, so a shell can export
//! them. `AGENTS_MCP_CACHE` moves the cache directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::run::Step;

/// The server-everything release the tests were written against.
const EVERYTHING_VERSION: &str = "2026.8.31";
/// The Python SDK release the fixture server was written against.
const PYTHON_MCP_VERSION: &str = "2.3.0";
/// The A2A Python SDK release the interop tests speak A2A 1.0 with.
const A2A_SDK_VERSION: &str = "1.3.0";
/// The MCP Inspector release whose CLI mode the interop tests run: the last line (1.x) that
/// runs on Debian's Node.js 20 (2.x needs Node 22.19).
const INSPECTOR_VERSION: &str = "1.0.3";

pub fn install() -> Result<(), String> {
    let cache = cache_dir()?;
    std::fs::create_dir_all(&cache)
        .map_err(|e| format!("cannot create {}: {e}", cache.display()))?;
    let node = which("node")
        .ok_or("node is not installed: install Node.js 18 or later (apt-get install nodejs npm)")?;
    let everything = ensure_everything(&cache)?;
    let python = ensure_python_sdk(&cache)?;
    let inspector = ensure_inspector(&cache)?;
    let lines = [
        format!("AGENTS_MCP_NODE={}", node.display()),
        format!("AGENTS_MCP_EVERYTHING={}", everything.display()),
        format!("AGENTS_MCP_PYTHON={}", python.display()),
        format!("AGENTS_MCP_INSPECTOR={}", inspector.display()),
    ];
    let file = cache.join("servers.env");
    std::fs::write(&file, lines.join("\n") + "\n")
        .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    eprintln!("MCP test servers ready; written to {}:", file.display());
    for line in lines {
        println!("{line}");
    }
    Ok(())
}

fn cache_dir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("AGENTS_MCP_CACHE") {
        return Ok(PathBuf::from(dir));
    }
    let home = std::env::var_os("HOME").ok_or("HOME is not set")?;
    Ok(PathBuf::from(home)
        .join(".cache")
        .join("agents-rs")
        .join("mcp"))
}

/// The entry script of server-everything (run with `node <script> stdio|streamableHttp`).
fn ensure_everything(cache: &Path) -> Result<PathBuf, String> {
    let prefix = cache.join("npm");
    let package = prefix.join("node_modules/@modelcontextprotocol/server-everything");
    let installed = std::fs::read_to_string(package.join("package.json"))
        .map(|manifest| manifest.contains(&format!("\"version\": \"{EVERYTHING_VERSION}\"")))
        .unwrap_or(false);
    if !installed {
        let mut npm = Command::new("npm");
        npm.args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&prefix)
            .arg(format!(
                "@modelcontextprotocol/server-everything@{EVERYTHING_VERSION}"
            ));
        Step::new("npm install server-everything", npm).run()?;
    }
    let script = package.join("dist/index.js");
    if !script.exists() {
        return Err(format!(
            "{} is missing after npm install; delete {} and run again",
            script.display(),
            prefix.display()
        ));
    }
    Ok(script)
}

/// The venv's python, with the `mcp` SDK installed.
fn ensure_python_sdk(cache: &Path) -> Result<PathBuf, String> {
    let venv = cache.join("venv");
    let python = venv.join("bin/python");
    if !python.exists() {
        let mut create = Command::new("python3");
        create.args(["-m", "venv"]).arg(&venv);
        Step::new("python venv", create).run()?;
    }
    for (step, package, extra, version) in [
        ("pip install mcp", "mcp", "", PYTHON_MCP_VERSION),
        (
            "pip install a2a-sdk",
            "a2a-sdk",
            "[http-server]",
            A2A_SDK_VERSION,
        ),
    ] {
        let installed = Command::new(&python)
            .args([
                "-c",
                &format!(
                    "import importlib.metadata as m, sys; sys.exit(m.version('{package}') != '{version}')"
                ),
            ])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        if !installed {
            let mut pip = Command::new(&python);
            pip.args(["-m", "pip", "install", "-q"])
                .arg(format!("{package}{extra}=={version}"));
            Step::new(step, pip).run()?;
        }
    }
    Ok(python)
}

/// The MCP Inspector's entry script (run with `node <script> --cli ...`).
fn ensure_inspector(cache: &Path) -> Result<PathBuf, String> {
    let prefix = cache.join("inspector");
    let package = prefix.join("node_modules/@modelcontextprotocol/inspector");
    let installed = std::fs::read_to_string(package.join("package.json"))
        .map(|manifest| manifest.contains(&format!("\"version\": \"{INSPECTOR_VERSION}\"")))
        .unwrap_or(false);
    if !installed {
        let mut npm = Command::new("npm");
        npm.args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&prefix)
            .arg(format!(
                "@modelcontextprotocol/inspector@{INSPECTOR_VERSION}"
            ));
        Step::new("npm install inspector", npm).run()?;
    }
    let script = package.join("cli/build/cli.js");
    if !script.exists() {
        return Err(format!(
            "{} is missing after npm install; delete {} and run again",
            script.display(),
            prefix.display()
        ));
    }
    Ok(script)
}

fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}
