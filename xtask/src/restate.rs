//! `cargo xtask restate`: a throwaway Restate server on 127.0.0.1 for the `agents-restate`
//! tests, examples and benchmark.
//!
//! - `cargo xtask restate start` installs the pinned server from npm (once, into
//!   `~/.cache/agents-rs/restate`; `AGENTS_RESTATE_CACHE` moves it), starts it on free ports
//!   with a data directory of its own, waits until its admin API and ingress answer, and
//!   prints `AGENTS_TEST_RESTATE_INGRESS=...`, `AGENTS_TEST_RESTATE_ADMIN=...` and
//!   `AGENTS_TEST_RESTATE_DIR=...`. The server keeps running after the task exits.
//! - `cargo xtask restate stop DIR` stops the server of `DIR` by the pid it wrote (SIGTERM,
//!   SIGKILL after 10 s) and removes `DIR`.
//!
//! The npm package `@restatedev/restate-server` ships the Linux binary in a per-platform
//! package; it is installed with `--ignore-scripts` (its only install script is an analytics
//! ping). The server's licence is the BSL: it is a test tool here, not a dependency of any
//! crate.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::run::Step;

/// The server release the tests were written against (service protocol v5/v6, what
/// restate-sdk 0.13 speaks).
const RESTATE_VERSION: &str = "1.7.12";

/// How long the server gets to answer after it started.
const START_TIMEOUT: Duration = Duration::from_secs(60);

pub fn run(args: &[String]) -> Result<(), String> {
    match args.first().map(String::as_str) {
        Some("start") => start(),
        Some("stop") => {
            let dir = args.get(1).ok_or(
                "usage: cargo xtask restate stop DIR (the AGENTS_TEST_RESTATE_DIR printed by start)",
            )?;
            stop(Path::new(dir))
        }
        Some("install") => install().map(|binary| println!("{}", binary.display())),
        _ => Err("usage: cargo xtask restate start | stop DIR | install".into()),
    }
}

/// The server binary, installed when missing.
fn install() -> Result<PathBuf, String> {
    let cache = cache_dir()?;
    std::fs::create_dir_all(&cache)
        .map_err(|e| format!("cannot create {}: {e}", cache.display()))?;
    let platform = match std::env::consts::ARCH {
        "x86_64" => "linux-x64",
        "aarch64" => "linux-arm64",
        other => return Err(format!("no Restate server package for {other}")),
    };
    let prefix = cache.join("npm");
    let package = prefix.join(format!(
        "node_modules/@restatedev/restate-server-{platform}"
    ));
    let installed = std::fs::read_to_string(package.join("package.json"))
        .map(|manifest| manifest.contains(&format!("\"version\": \"{RESTATE_VERSION}\"")))
        .unwrap_or(false);
    if !installed {
        let mut npm = Command::new("npm");
        npm.args([
            "install",
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            "--prefix",
        ])
        .arg(&prefix)
        .arg(format!("@restatedev/restate-server@{RESTATE_VERSION}"))
        // Our stdout is for the variables; npm's report goes to stderr.
        .stdout(Stdio::from(std::io::stderr()));
        Step::new("npm install @restatedev/restate-server", npm).run()?;
    }
    let binary = package.join("bin/restate-server");
    if !binary.is_file() {
        return Err(format!(
            "{} is missing after npm install; delete {} and run again",
            binary.display(),
            prefix.display()
        ));
    }
    Ok(binary)
}

fn cache_dir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("AGENTS_RESTATE_CACHE") {
        return Ok(PathBuf::from(dir));
    }
    let home = std::env::var_os("HOME").ok_or("HOME is not set")?;
    Ok(PathBuf::from(home)
        .join(".cache")
        .join("agents-rs")
        .join("restate"))
}

/// Starts a server and prints where it listens.
fn start() -> Result<(), String> {
    let binary = install()?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let dir = std::env::temp_dir().join(format!("agents-restate-{}-{stamp}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let [ingress, admin, fabric] = free_ports()?;
    let identity = request_identity(&dir);
    let config = dir.join("restate.toml");
    let key_file = identity.as_ref().map(|(file, _)| file.as_path());
    std::fs::write(&config, config_text(&dir, ingress, admin, fabric, key_file))
        .map_err(|e| format!("cannot write {}: {e}", config.display()))?;
    let log_path = dir.join("restate.log");
    let log = std::fs::File::create(&log_path)
        .map_err(|e| format!("cannot create {}: {e}", log_path.display()))?;
    let log_err = log
        .try_clone()
        .map_err(|e| format!("cannot open {}: {e}", log_path.display()))?;
    let child = Command::new(&binary)
        .arg("--config-file")
        .arg(&config)
        .arg("--no-logo")
        .env("RESTATE_LOG_DISABLE_ANSI_CODES", "true")
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
    let pid = child.id();
    std::fs::write(dir.join("restate.pid"), pid.to_string())
        .map_err(|e| format!("cannot write the pid file: {e}"))?;
    let deadline = Instant::now() + START_TIMEOUT;
    while !(answers(admin, "/health") && answers(ingress, "/restate/health")) {
        if Instant::now() > deadline {
            let _ = stop(&dir);
            return Err(format!(
                "Restate did not answer within {}s; its log was {}",
                START_TIMEOUT.as_secs(),
                log_path.display()
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    println!("AGENTS_TEST_RESTATE_INGRESS=http://127.0.0.1:{ingress}");
    println!("AGENTS_TEST_RESTATE_ADMIN=http://127.0.0.1:{admin}");
    println!("AGENTS_TEST_RESTATE_DIR={}", dir.display());
    if let Some((_, public_key)) = identity {
        println!("AGENTS_TEST_RESTATE_IDENTITY={public_key}");
    }
    eprintln!(
        "restate-server {RESTATE_VERSION} pid {pid}, log {}",
        log_path.display()
    );
    Ok(())
}

/// The server's configuration: loopback only, small (2 partitions, 256 MiB of RocksDB
/// memory: CI machines have 2 cores), no telemetry, no fsync of its log (it is thrown
/// away), retries quick enough for tests.
fn config_text(
    dir: &Path,
    ingress: u16,
    admin: u16,
    fabric: u16,
    identity_key: Option<&Path>,
) -> String {
    let invoker = identity_key.map_or_else(String::new, |key| {
        format!(
            "\n# Requests to services are signed with this key (services may check the signature).\n\
             [worker.invoker]\nrequest-identity-private-key-pem-file = \"{}\"\n",
            key.display()
        )
    });
    format!(
        r#"roles = ["http-ingress", "admin", "worker", "log-server", "metadata-server"]
node-name = "agents-test"
cluster-name = "agents-test"
auto-provision = true
default-num-partitions = 2
disable-telemetry = true
rocksdb-total-memory-size = "256 MiB"
log-filter = "warn,restate=info"
base-dir = "{base}"
bind-address = "127.0.0.1:{fabric}"
advertised-address = "http://127.0.0.1:{fabric}/"
listen-mode = "tcp"

# A service killed mid-invocation is retried quickly (the default starts at 500 ms).
[default-retry-policy]
initial-interval = "50ms"
exponentiation-factor = 2.0
max-interval = "1s"
max-attempts = 200
on-max-attempts = "pause"

# A throwaway server: no fsync of the log (like the Postgres test cluster's fsync=off).
[bifrost.local]
rocksdb-disable-wal-fsync = true

[log-server]
rocksdb-disable-wal-fsync = true

[admin]
bind-address = "127.0.0.1:{admin}"
disable-web-ui = true

[ingress]
bind-address = "127.0.0.1:{ingress}"
{invoker}"#,
        base = dir.join("data").display(),
    )
}

/// A fresh Ed25519 key for signing Restate's requests to services (`openssl genpkey`), and
/// its public key as services name it (`publickeyv1_` + base58 of the raw key). `None`, with
/// a note, when openssl is not installed.
fn request_identity(dir: &Path) -> Option<(PathBuf, String)> {
    let key = dir.join("identity.pem");
    let generated = Command::new("openssl")
        .args(["genpkey", "-algorithm", "ed25519", "-out"])
        .arg(&key)
        .output()
        .is_ok_and(|output| output.status.success());
    let public = generated
        .then(|| {
            Command::new("openssl")
                .args(["pkey", "-pubout", "-outform", "DER", "-in"])
                .arg(&key)
                .output()
                .ok()
        })
        .flatten()
        .filter(|output| output.status.success() && output.stdout.len() == 44);
    let Some(public) = public else {
        eprintln!("note: no openssl, so Restate's requests to services are not signed");
        return None;
    };
    // SPKI DER of an Ed25519 key: a 12-byte header, then the 32-byte key.
    Some((key, format!("publickeyv1_{}", base58(&public.stdout[12..]))))
}

/// Bitcoin-alphabet base58 (what Restate's key names use).
fn base58(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    let mut digits: Vec<u8> = Vec::new();
    for &byte in bytes {
        let mut carry = u32::from(byte);
        for digit in &mut digits {
            carry += u32::from(*digit) << 8;
            *digit = (carry % 58) as u8;
            carry /= 58;
        }
        while carry > 0 {
            digits.push((carry % 58) as u8);
            carry /= 58;
        }
    }
    let zeros = bytes.iter().take_while(|&&b| b == 0).count();
    std::iter::repeat_n('1', zeros)
        .chain(
            digits
                .iter()
                .rev()
                .map(|&d| char::from(ALPHABET[usize::from(d)])),
        )
        .collect()
}

/// Stops the server of `dir` and removes `dir`.
fn stop(dir: &Path) -> Result<(), String> {
    let pid_file = dir.join("restate.pid");
    if let Ok(pid) = std::fs::read_to_string(&pid_file) {
        let pid = pid.trim();
        let _ = Command::new("kill").args(["-TERM", pid]).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while alive(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        if alive(pid) {
            let _ = Command::new("kill").args(["-KILL", pid]).status();
        }
    }
    std::fs::remove_dir_all(dir).map_err(|e| format!("cannot remove {}: {e}", dir.display()))
}

/// Whether process `pid` still runs (a zombie counts as gone).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| !stat.contains(") Z "))
        .unwrap_or(false)
}

/// Whether `GET path` on 127.0.0.1:`port` answers 200.
fn answers(port: u16, path: &str) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).is_ok() && head.ends_with(b"200")
}

/// Three distinct ports nothing listens on right now (held together while they are chosen,
/// dropped before Restate binds them).
fn free_ports() -> Result<[u16; 3], String> {
    let bind =
        || TcpListener::bind("127.0.0.1:0").map_err(|e| format!("cannot find a free port: {e}"));
    let listeners = [bind()?, bind()?, bind()?];
    let mut ports = [0; 3];
    for (port, listener) in ports.iter_mut().zip(&listeners) {
        *port = listener
            .local_addr()
            .map_err(|e| format!("cannot find a free port: {e}"))?
            .port();
    }
    Ok(ports)
}

#[cfg(test)]
mod tests {
    use super::base58;

    #[test]
    fn base58_matches_the_bitcoin_alphabet() {
        assert_eq!(base58(b""), "");
        assert_eq!(base58(&[0]), "1");
        assert_eq!(base58(&[0, 0, 1]), "112");
        assert_eq!(base58(b"hello world"), "StV1DL6CwTryKyV");
        assert_eq!(base58(&[255; 4]), "7YXq9G");
    }
}
