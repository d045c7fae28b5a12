//! `bash`: run a shell command in the workspace, under a policy.
//!
//! What protects the machine is the working directory, the environment policy and the limits
//! (timeout, output cap, killing the whole process tree), not the deny list: see
//! [`BashPolicy`] and `docs/security.md`.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use agents_core::tools::{arguments_schema, Tool, ToolContext, ToolError, ToolOutput};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::sync::watch;

/// How long the output pipes may stay open after the command's process group is gone: a
/// process that escaped the group (`setsid`, a double fork) may hold them forever.
const PIPE_GRACE: Duration = Duration::from_millis(300);

/// After the readers are told to stop, they keep reading while data keeps arriving within
/// this gap (what was already written is never dropped)…
const DRAIN_IDLE: Duration = Duration::from_millis(20);

/// …but no more than this many bytes (an escaped process writing without end cannot keep
/// them reading).
const DRAIN_MAX_BYTES: usize = 1 << 20;

/// Environment variables every command gets from the agent's process when they are set
/// (a name ending in `*` is a prefix). Everything else is left out unless the policy lists
/// it: see [`BashPolicy::with_env_var`].
pub const DEFAULT_BASH_ENV: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TERM", "TZ", "TMPDIR",
];

/// Parts of a variable name that mark it as a secret (compared case-insensitively): such a
/// variable reaches a command only when listed by its exact name.
const SECRET_NAME_PARTS: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
    "SESSION",
    "PRIVATE",
];

/// Limits, refusals and the environment of [`BashTool`].
///
/// **What protects the machine**: commands run in the tool's working directory with stdin
/// closed, a clean environment (only [`DEFAULT_BASH_ENV`] plus the variables listed with
/// [`with_env_var`](Self::with_env_var); never a variable whose name looks like a key, token,
/// secret, password or credential unless listed by its exact name), a timeout after which the
/// command's whole process tree is killed, and an output cap. Background processes are killed
/// when the command ends, including those that left the process group (on Linux, every
/// process still holding the command's output pipes).
///
/// **What does not**: the deny list. It refuses obviously destructive commands (matched as
/// case-insensitive substrings, with runs of whitespace collapsed) so a confused model does
/// not run them by accident; it is trivially bypassed (`r""m -rf /`, a script file, `eval`,
/// base64) and can refuse harmless commands (`echo mkfs`). The shell runs with the agent's
/// user and can read and write whatever that user can: run untrusted agents in a container
/// or a VM, with a working directory holding only what they need.
#[derive(Clone, Debug, PartialEq)]
pub struct BashPolicy {
    /// How long a command may run before it (and its process group) is killed. Keep it below the
    /// tool executor's timeout so the model sees the partial output.
    pub timeout: Duration,
    /// Longer stdout or stderr is cut to its head and tail.
    pub max_output_chars: usize,
    /// Characters kept from the start of a cut output.
    pub head_chars: usize,
    /// Characters kept from the end of a cut output.
    pub tail_chars: usize,
    /// Commands containing any of these (case-insensitively) are refused (a convenience, not a
    /// security boundary).
    pub deny_patterns: Vec<String>,
    /// Variables passed from the agent's process besides [`DEFAULT_BASH_ENV`]: exact names, or
    /// prefixes ending in `*` (a prefix never passes a secret-looking name).
    pub env_vars: Vec<String>,
}

impl Default for BashPolicy {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(50),
            max_output_chars: 50_000,
            head_chars: 8_000,
            tail_chars: 40_000,
            deny_patterns: [
                "rm -rf /",
                "rm -fr /",
                "mkfs",
                "shutdown",
                "reboot",
                "poweroff",
                "dd if=/dev/zero",
                "dd if=/dev/random",
                ":(){",
                "> /dev/sd",
                "chmod -r 777 /",
            ]
            .map(String::from)
            .to_vec(),
            env_vars: Vec::new(),
        }
    }
}

impl BashPolicy {
    /// A copy with another timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// A copy with other output limits (`head + tail` should stay below `max`).
    pub fn with_output_limits(
        mut self,
        max_chars: usize,
        head_chars: usize,
        tail_chars: usize,
    ) -> Self {
        self.max_output_chars = max_chars;
        self.head_chars = head_chars;
        self.tail_chars = tail_chars;
        self
    }

    /// A copy that also refuses commands containing `pattern`.
    pub fn with_deny_pattern(mut self, pattern: impl Into<String>) -> Self {
        self.deny_patterns.push(pattern.into());
        self
    }

    /// A copy without any deny pattern.
    pub fn without_deny_patterns(mut self) -> Self {
        self.deny_patterns.clear();
        self
    }

    /// A copy that also passes the variable `name` from the agent's process to commands (when
    /// it is set). A name ending in `*` passes every variable starting with the rest, except
    /// those that look like secrets: a key, token, secret, password or credential passes only
    /// when listed by its exact name, for example `with_env_var("GITHUB_TOKEN")`.
    pub fn with_env_var(mut self, name: impl Into<String>) -> Self {
        self.env_vars.push(name.into());
        self
    }

    /// Whether a variable called `name` in the agent's process is passed to commands.
    pub fn passes_env(&self, name: &str) -> bool {
        if self.env_vars.iter().any(|listed| listed == name) {
            return true;
        }
        let matches = |pattern: &str| match pattern.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => pattern == name,
        };
        let listed = DEFAULT_BASH_ENV.iter().copied().any(matches)
            || self.env_vars.iter().map(String::as_str).any(matches);
        listed && !looks_secret(name)
    }

    /// The deny pattern `command` contains, if any.
    pub fn denied_pattern(&self, command: &str) -> Option<&str> {
        let command = collapse_whitespace(&command.to_lowercase());
        self.deny_patterns
            .iter()
            .find(|pattern| {
                let pattern = collapse_whitespace(&pattern.to_lowercase());
                !pattern.is_empty() && command.contains(&pattern)
            })
            .map(String::as_str)
    }

    /// `text` as is when it fits `max_output_chars`, else its head and tail around a marker.
    pub fn truncate(&self, text: &str) -> String {
        let total = text.chars().count();
        if total <= self.max_output_chars {
            return text.to_owned();
        }
        self.cut(text, text, &format!("{total} characters"))
    }

    /// The first `head_chars` of `head` and the last `tail_chars` of `tail` around a marker
    /// saying the output was `size` long.
    fn cut(&self, head: &str, tail: &str, size: &str) -> String {
        let head: String = head.chars().take(self.head_chars).collect();
        let tail_len = tail.chars().count();
        let tail: String = tail
            .chars()
            .skip(tail_len.saturating_sub(self.tail_chars))
            .collect();
        format!(
            "[output truncated: {size}, showing the first {} and the last {} characters]\n{head}\n...\n{tail}",
            head.chars().count(),
            tail.chars().count()
        )
    }

    /// Bytes kept from the start of a stream while it runs (enough for any cut).
    fn capture_head_bytes(&self) -> usize {
        self.max_output_chars
            .max(self.head_chars)
            .saturating_mul(4)
            .saturating_add(4)
    }

    /// Bytes kept from the end of a stream while it runs.
    fn capture_tail_bytes(&self) -> usize {
        self.tail_chars.saturating_mul(4).saturating_add(4)
    }
}

/// `bash{command}`: runs `command` with `bash -c` in the workspace root and returns its output:
/// `Exit code: N` when non-zero, then stdout, then `STDERR:` and stderr, separated by blank
/// lines; `(no output)` when there is none.
///
/// The command runs with stdin closed and a clean environment (see [`BashPolicy`]), in a
/// process group of its own. Commands matching the policy's deny list are refused. When the
/// command ends, is killed at the policy's timeout or is cancelled, its whole process group is
/// killed (background processes included, and on Linux processes that left the group but
/// still hold its output pipes), and the model gets what it printed; the group is also killed
/// when the call is dropped.
#[derive(Clone, Debug)]
pub struct BashTool {
    working_dir: PathBuf,
    policy: BashPolicy,
    shell: String,
}

/// Arguments of `bash`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashArgs {
    /// The command line to run with `bash -c`.
    pub command: String,
}

impl BashTool {
    /// A bash tool running commands in `working_dir` under the default policy.
    pub fn new(working_dir: impl Into<PathBuf>) -> Self {
        Self {
            working_dir: working_dir.into(),
            policy: BashPolicy::default(),
            shell: "bash".to_owned(),
        }
    }

    /// A copy with another policy.
    pub fn with_policy(mut self, policy: BashPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// A copy using another shell program (it must accept `-c <command>`).
    pub fn with_shell(mut self, shell: impl Into<String>) -> Self {
        self.shell = shell.into();
        self
    }

    /// The policy.
    pub fn policy(&self) -> &BashPolicy {
        &self.policy
    }

    /// The directory commands run in.
    pub fn working_dir(&self) -> &Path {
        &self.working_dir
    }

    async fn run(
        &self,
        command_line: &str,
        context: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let mut command = Command::new(&self.shell);
        command
            .arg("-c")
            .arg(command_line)
            .current_dir(&self.working_dir)
            .env_clear()
            .envs(std::env::vars_os().filter(|(name, _)| {
                name.to_str()
                    .is_some_and(|name| self.policy.passes_env(name))
            }))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        let mut child = command.spawn().map_err(|e| {
            ToolError::failed(format!(
                "cannot start `{}` in `{}`: {e}",
                self.shell,
                self.working_dir.display()
            ))
        })?;
        // From here on, dropping this future kills the group and stops the readers; and if
        // this process dies (even by SIGKILL), the watchdog kills the group.
        let _watchdog = child.id().and_then(|pid| {
            agents_core::GroupWatchdog::join(pid)
                .map_err(|error| {
                    // The group is already gone (the command exited at once), or no `sh`.
                    tracing::debug!(%error, "no watchdog for the bash command's process group");
                })
                .ok()
        });
        let mut group = ProcessGroup::new(child.id());
        let pipes = escape::PipeIds::of(child.stdout.as_ref(), child.stderr.as_ref());
        let (stop, stopped) = watch::channel(false);
        let head = self.policy.capture_head_bytes();
        let tail = self.policy.capture_tail_bytes();
        let mut stdout = tokio::spawn(capture(child.stdout.take(), head, tail, stopped.clone()));
        let mut stderr = tokio::spawn(capture(child.stderr.take(), head, tail, stopped));

        let ending = tokio::select! {
            status = tokio::time::timeout(self.policy.timeout, child.wait()) => match status {
                Ok(Ok(status)) => Ending::Exited(status.code()),
                Ok(Err(error)) => Ending::WaitFailed(error.to_string()),
                Err(_) => Ending::TimedOut,
            },
            () = context.cancellation.cancelled() => Ending::Cancelled,
        };
        // Stop what is still running in the command's group: the command itself after a timeout
        // or cancellation, background processes it left behind otherwise.
        group.kill();
        if !matches!(ending, Ending::Exited(_)) {
            let _ = child.kill().await;
        }
        // The pipes close once every process holding them is gone; one that escaped the group
        // keeps them open, so it is killed too (where it can be found) and the readers stop.
        let deadline = tokio::time::Instant::now() + PIPE_GRACE;
        let out = tokio::time::timeout_at(deadline, &mut stdout).await.ok();
        let err = tokio::time::timeout_at(deadline, &mut stderr).await.ok();
        if out.is_none() || err.is_none() {
            // Reading /proc is blocking file I/O: off the runtime's threads.
            let killed = tokio::task::spawn_blocking(move || pipes.kill_holders())
                .await
                .unwrap_or(0);
            if killed > 0 {
                tracing::debug!(
                    killed,
                    "killed processes that escaped the bash command's group"
                );
            }
            let _ = stop.send(true);
        }
        let out = match out {
            Some(done) => done,
            None => stdout.await,
        };
        let err = match err {
            Some(done) => done,
            None => stderr.await,
        };
        let stdout = collect(out.ok(), &self.policy);
        let stderr = collect(err.ok(), &self.policy);

        let mut parts = Vec::new();
        match &ending {
            Ending::Exited(Some(0)) => {}
            Ending::Exited(Some(code)) => parts.push(format!("Exit code: {code}")),
            Ending::Exited(None) => parts.push("Exit code: none (killed by a signal)".to_owned()),
            Ending::TimedOut => parts.push(format!(
                "Command timed out after {:?} and was killed.",
                self.policy.timeout
            )),
            Ending::Cancelled => {
                parts.push("Command stopped: the agent run was cancelled.".to_owned())
            }
            Ending::WaitFailed(error) => {
                parts.push(format!("Could not wait for the command: {error}"))
            }
        }
        if !stdout.is_empty() {
            parts.push(stdout);
        }
        if !stderr.is_empty() {
            parts.push(format!("STDERR:\n{stderr}"));
        }
        let text = if parts.is_empty() {
            "(no output)".to_owned()
        } else {
            parts.join("\n\n")
        };
        match ending {
            Ending::Exited(_) => Ok(ToolOutput::text(text)),
            _ => Err(ToolError::failed(text)),
        }
    }
}

#[async_trait]
impl Tool for BashTool {
    fn name(&self) -> &str {
        "bash"
    }

    fn description(&self) -> &str {
        "Run a bash command in the workspace directory and return its exit code, stdout and \
         stderr. Commands are killed after a timeout; avoid interactive programs."
    }

    fn other_names(&self) -> &[&str] {
        // What no file tool does (delete, copy, an empty folder) is a shell command.
        &[
            "shell",
            "sh",
            "run",
            "exec",
            "execute",
            "command",
            "terminal",
            "run_command",
            "run_shell_command",
            "execute_command",
            "shell_command",
            "run_bash",
            "delete_file",
            "remove_file",
            "delete_folder",
            "remove_folder",
            "rm",
            "copy_file",
            "cp",
            "mkdir",
            "create_directory",
            "create_folder",
            "count_lines",
            "wc",
        ]
    }

    fn parameters(&self) -> Value {
        arguments_schema::<BashArgs>()
    }

    async fn call(&self, arguments: Value, context: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: BashArgs = serde_json::from_value(arguments)
            .map_err(|e| ToolError::invalid_arguments(e.to_string()))?;
        let command = args.command.trim();
        if command.is_empty() {
            return Err(ToolError::invalid_arguments("command is empty"));
        }
        if let Some(pattern) = self.policy.denied_pattern(command) {
            tracing::warn!(%command, %pattern, "bash command refused by policy");
            return Err(ToolError::failed(format!(
                "command blocked by the safety policy (it contains `{pattern}`)"
            )));
        }
        tracing::debug!(%command, "running bash command");
        self.run(command, context).await
    }
}

enum Ending {
    Exited(Option<i32>),
    TimedOut,
    Cancelled,
    WaitFailed(String),
}

/// Whether a variable's name looks like it holds a secret.
fn looks_secret(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    SECRET_NAME_PARTS.iter().any(|part| name.contains(part))
}

/// The command's process group (its id is the shell's pid): killed on [`kill`](Self::kill)
/// and, unless killed already, when dropped, so a dropped tool call (an executor timeout, an
/// aborted task) leaves nothing running. `kill_on_drop` alone would kill only the shell.
struct ProcessGroup {
    pid: Option<u32>,
}

impl ProcessGroup {
    fn new(pid: Option<u32>) -> Self {
        Self { pid }
    }

    /// Sends SIGKILL to every process in the group (once).
    fn kill(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self
            .pid
            .take()
            .and_then(|pid| i32::try_from(pid).ok())
            .and_then(rustix::process::Pid::from_raw)
        {
            // ESRCH (the group is already gone) is the common case after a clean exit.
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        #[cfg(not(unix))]
        self.pid.take();
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The start and end of a stream, its middle dropped once it is long.
struct Captured {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    dropped: bool,
    total_bytes: usize,
}

impl Captured {
    fn push(&mut self, mut chunk: &[u8], head_cap: usize, tail_cap: usize) {
        self.total_bytes = self.total_bytes.saturating_add(chunk.len());
        let room = head_cap.saturating_sub(self.head.len());
        if room > 0 {
            let taken = room.min(chunk.len());
            self.head.extend_from_slice(&chunk[..taken]);
            chunk = &chunk[taken..];
        }
        for byte in chunk {
            if self.tail.len() == tail_cap {
                self.tail.pop_front();
                self.dropped = true;
            }
            self.tail.push_back(*byte);
        }
    }
}

/// Reads `reader` to its end, or until `stop` turns true (or its sender is dropped); then
/// reads on while data keeps arriving (within [`DRAIN_IDLE`], up to [`DRAIN_MAX_BYTES`]), so
/// what the command wrote before it ended is kept.
async fn capture<R: AsyncRead + Unpin>(
    reader: Option<R>,
    head_cap: usize,
    tail_cap: usize,
    mut stop: watch::Receiver<bool>,
) -> Captured {
    let mut captured = Captured {
        head: Vec::new(),
        tail: VecDeque::new(),
        dropped: false,
        total_bytes: 0,
    };
    let Some(mut reader) = reader else {
        return captured;
    };
    let mut buffer = [0u8; 8192];
    loop {
        let read = tokio::select! {
            biased;
            _ = stop.wait_for(|stop| *stop) => break,
            read = reader.read(&mut buffer) => read,
        };
        match read {
            Ok(0) | Err(_) => return captured,
            Ok(read) => captured.push(&buffer[..read], head_cap, tail_cap),
        }
    }
    let mut drained = 0usize;
    while drained < DRAIN_MAX_BYTES {
        match tokio::time::timeout(DRAIN_IDLE, reader.read(&mut buffer)).await {
            Ok(Ok(read)) if read > 0 => {
                drained += read;
                captured.push(&buffer[..read], head_cap, tail_cap);
            }
            _ => break,
        }
    }
    captured
}

/// The captured text, cut by `policy` (empty when the reader failed).
fn collect(captured: Option<Captured>, policy: &BashPolicy) -> String {
    let Some(captured) = captured else {
        return String::new();
    };
    let head = String::from_utf8_lossy(&captured.head);
    let tail: Vec<u8> = captured.tail.into_iter().collect();
    let tail = String::from_utf8_lossy(&tail);
    if !captured.dropped {
        let text = format!("{head}{tail}");
        return policy.truncate(text.trim_end_matches('\n'));
    }
    let size = format!("{} bytes", captured.total_bytes);
    policy.cut(&head, tail.trim_end_matches('\n'), &size)
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Finding and killing processes that left the command's process group (`setsid`, a double
/// fork) but still hold its output pipes. Linux only (it reads `/proc`); elsewhere such a
/// process keeps running and only our end of the pipes is closed.
mod escape {
    /// The identities of the command's output pipes (`pipe:[inode]` on Linux).
    pub(super) struct PipeIds(#[cfg_attr(not(target_os = "linux"), allow(dead_code))] Vec<String>);

    impl PipeIds {
        /// The pipes behind `stdout` and `stderr` (our read ends).
        #[cfg(target_os = "linux")]
        pub(super) fn of(
            stdout: Option<&tokio::process::ChildStdout>,
            stderr: Option<&tokio::process::ChildStderr>,
        ) -> Self {
            use std::os::fd::AsRawFd;
            let fds = [
                stdout.map(AsRawFd::as_raw_fd),
                stderr.map(AsRawFd::as_raw_fd),
            ];
            let ids = fds
                .into_iter()
                .flatten()
                .filter_map(|fd| std::fs::read_link(format!("/proc/self/fd/{fd}")).ok())
                .filter_map(|link| link.to_str().map(str::to_owned))
                .filter(|link| link.starts_with("pipe:"))
                .collect();
            Self(ids)
        }

        /// Nothing to find outside Linux.
        #[cfg(not(target_os = "linux"))]
        pub(super) fn of<O, E>(_stdout: Option<&O>, _stderr: Option<&E>) -> Self {
            Self(Vec::new())
        }

        /// Sends SIGKILL to every other process holding one of the pipes; how many there were.
        /// Our own children are skipped: a command started at the same moment may hold our
        /// pipes between its fork and its exec.
        #[cfg(target_os = "linux")]
        pub(super) fn kill_holders(&self) -> usize {
            if self.0.is_empty() {
                return 0;
            }
            let me = std::process::id();
            let Ok(processes) = std::fs::read_dir("/proc") else {
                return 0;
            };
            let mut killed = 0;
            for process in processes.flatten() {
                let Some(pid) = process
                    .file_name()
                    .to_str()
                    .and_then(|name| name.parse::<u32>().ok())
                else {
                    continue;
                };
                if pid == me || parent_of(pid) == Some(me) || !self.held_by(pid) {
                    continue;
                }
                let target = i32::try_from(pid)
                    .ok()
                    .and_then(rustix::process::Pid::from_raw);
                if let Some(target) = target {
                    if rustix::process::kill_process(target, rustix::process::Signal::KILL).is_ok()
                    {
                        killed += 1;
                    }
                }
            }
            killed
        }

        /// Nothing to kill outside Linux.
        #[cfg(not(target_os = "linux"))]
        pub(super) fn kill_holders(&self) -> usize {
            0
        }

        #[cfg(target_os = "linux")]
        fn held_by(&self, pid: u32) -> bool {
            let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
                return false;
            };
            fds.flatten().any(|fd| {
                std::fs::read_link(fd.path())
                    .is_ok_and(|link| self.0.iter().any(|pipe| link.as_os_str() == pipe.as_str()))
            })
        }
    }

    /// The parent of `pid`, from `/proc/<pid>/stat` (`pid (comm) state ppid ...`, where comm
    /// may hold spaces and parentheses).
    #[cfg(target_os = "linux")]
    fn parent_of(pid: u32) -> Option<u32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let after_comm = &stat[stat.rfind(')')? + 1..];
        after_comm.split_whitespace().nth(1)?.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(dir: &tempfile::TempDir) -> BashTool {
        BashTool::new(dir.path())
    }

    async fn bash(tool: &BashTool, command: &str) -> Result<String, ToolError> {
        tool.call(json!({ "command": command }), &ToolContext::default())
            .await
            .map(|o| o.content().to_owned())
    }

    #[tokio::test]
    async fn runs_in_the_working_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("marker.txt"), "").unwrap();
        assert_eq!(bash(&tool(&dir), "ls").await.unwrap(), "marker.txt");
    }

    #[tokio::test]
    async fn reports_exit_code_stdout_and_stderr() {
        let dir = tempfile::tempdir().unwrap();
        let output = bash(&tool(&dir), "echo out; echo err >&2; exit 3")
            .await
            .unwrap();
        assert_eq!(output, "Exit code: 3\n\nout\n\nSTDERR:\nerr");
    }

    #[tokio::test]
    async fn says_when_there_is_no_output() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(bash(&tool(&dir), "true").await.unwrap(), "(no output)");
    }

    #[tokio::test]
    async fn refuses_denied_commands_without_running_them() {
        let dir = tempfile::tempdir().unwrap();
        let tool = tool(&dir);
        for command in [
            "sudo RM  -RF / --no-preserve-root",
            "mkfs.ext4 /dev/sda1",
            "echo ok && reboot",
        ] {
            let error = bash(&tool, command).await.unwrap_err();
            assert!(
                error
                    .message()
                    .starts_with("command blocked by the safety policy"),
                "{command}: {error}"
            );
        }
        let custom = tool
            .clone()
            .with_policy(BashPolicy::default().with_deny_pattern("touch"));
        assert_eq!(
            bash(&custom, "touch created.txt").await.unwrap_err(),
            ToolError::failed("command blocked by the safety policy (it contains `touch`)")
        );
        assert!(!dir.path().join("created.txt").exists());
    }

    #[tokio::test]
    async fn a_command_past_the_timeout_is_killed_with_its_children() {
        let dir = tempfile::tempdir().unwrap();
        let tool =
            tool(&dir).with_policy(BashPolicy::default().with_timeout(Duration::from_millis(800)));
        // The background child would create the file after two seconds if it survived.
        let error = bash(
            &tool,
            "echo started; (sleep 2; touch survived.txt) & sleep 30",
        )
        .await
        .unwrap_err();
        assert_eq!(
            error,
            ToolError::failed("Command timed out after 800ms and was killed.\n\nstarted")
        );
        tokio::time::sleep(Duration::from_millis(1600)).await;
        assert!(!dir.path().join("survived.txt").exists());
    }

    /// Whether `pid` is still running (a zombie waiting for a parent that does not reap it
    /// counts as gone), polled for a few seconds: SIGKILL takes a moment to land.
    #[cfg(target_os = "linux")]
    async fn still_running_after_kill(pid: u32) -> bool {
        for _ in 0..100 {
            let running = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    let state = stat[stat.rfind(')')? + 1..].split_whitespace().next()?;
                    Some(state != "Z" && state != "X")
                })
                .unwrap_or(false);
            if !running {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        true
    }

    fn read_pid(dir: &tempfile::TempDir, file: &str) -> u32 {
        std::fs::read_to_string(dir.path().join(file))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn output_is_kept_when_a_child_escapes_the_process_group_and_the_child_is_killed() {
        let dir = tempfile::tempdir().unwrap();
        // The escaped child holds stdout and stderr open for 100 s; the command waits until it
        // has left the group, then ends.
        let command = "echo before; \
            setsid sh -c 'echo $$ > escaped.pid; exec sleep 100' & \
            until [ -s escaped.pid ]; do sleep 0.05; done; echo after";
        let output = tokio::time::timeout(Duration::from_secs(20), bash(&tool(&dir), command))
            .await
            .expect("the tool must not wait for the escaped child")
            .unwrap();
        assert_eq!(output, "before\nafter");
        let escaped = read_pid(&dir, "escaped.pid");
        assert!(
            !still_running_after_kill(escaped).await,
            "the escaped child {escaped} is still running"
        );
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_timeout_returns_the_partial_output_and_kills_every_child() {
        let dir = tempfile::tempdir().unwrap();
        let tool =
            tool(&dir).with_policy(BashPolicy::default().with_timeout(Duration::from_millis(800)));
        let command = "echo started; sleep 60 & echo $! > child.pid; \
            setsid sh -c 'echo $$ > escaped.pid; exec sleep 100' & wait";
        let error = tokio::time::timeout(Duration::from_secs(20), bash(&tool, command))
            .await
            .expect("the tool must end at its timeout")
            .unwrap_err();
        assert_eq!(
            error,
            ToolError::failed("Command timed out after 800ms and was killed.\n\nstarted")
        );
        for file in ["child.pid", "escaped.pid"] {
            let pid = read_pid(&dir, file);
            assert!(
                !still_running_after_kill(pid).await,
                "{file}: {pid} is still running"
            );
        }
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn dropping_the_call_kills_the_whole_process_group() {
        let dir = tempfile::tempdir().unwrap();
        let tool = tool(&dir);
        let call = bash(&tool, "sleep 60 & echo $! > child.pid; wait");
        // The caller gives up (an executor timeout, an aborted task) while the command runs.
        let waited = tokio::time::timeout(Duration::from_millis(800), call).await;
        assert!(
            waited.is_err(),
            "the command should still have been running"
        );
        let pid = read_pid(&dir, "child.pid");
        assert!(
            !still_running_after_kill(pid).await,
            "the background child {pid} outlived the dropped call"
        );
    }

    #[tokio::test]
    async fn commands_get_a_clean_environment() {
        let dir = tempfile::tempdir().unwrap();
        // Whatever the test process has, only the allow-list reaches the command.
        let output = bash(&tool(&dir), "env | cut -d= -f1 | sort").await.unwrap();
        let policy = BashPolicy::default();
        for name in output.lines() {
            assert!(
                policy.passes_env(name) || ["PWD", "SHLVL", "_", "OLDPWD"].contains(&name),
                "`{name}` reached the command"
            );
        }
        assert!(output.lines().any(|name| name == "PATH"), "{output}");
    }

    #[test]
    fn the_environment_policy_passes_the_allow_list_and_never_an_unlisted_secret() {
        let policy = BashPolicy::default();
        for name in [
            "PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "TMPDIR",
        ] {
            assert!(policy.passes_env(name), "{name}");
        }
        for name in [
            "OPENAI_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "HTTPS_PROXY",
            "PWD",
            "path",
        ] {
            assert!(!policy.passes_env(name), "{name}");
        }
        let policy = policy
            .with_env_var("MY_*")
            .with_env_var("GITHUB_TOKEN")
            .with_env_var("CARGO_HOME");
        assert!(policy.passes_env("MY_HOST"));
        assert!(policy.passes_env("CARGO_HOME"));
        assert!(
            policy.passes_env("GITHUB_TOKEN"),
            "listed by its exact name"
        );
        assert!(
            !policy.passes_env("MY_SECRET_TOKEN"),
            "a prefix never passes a secret"
        );
        assert!(!policy.passes_env("MY_db_password"));
        assert!(!policy.passes_env("CARGO_REGISTRY_TOKEN"));
    }

    proptest::proptest! {
        #[test]
        fn a_secret_looking_name_passes_only_when_listed_exactly(
            before in "[A-Z_]{0,8}",
            part in proptest::sample::select(SECRET_NAME_PARTS),
            after in "[a-zA-Z_]{0,8}",
            prefix_len in 0usize..8,
        ) {
            let name = format!("{before}{part}{after}");
            let prefix: String = name.chars().take(prefix_len).collect();
            let policy = BashPolicy::default()
                .with_env_var(format!("{prefix}*"))
                .with_env_var("*");
            proptest::prop_assert!(!policy.passes_env(&name));
            proptest::prop_assert!(policy.with_env_var(name.clone()).passes_env(&name));
        }
    }

    #[tokio::test]
    async fn long_output_keeps_its_head_and_tail() {
        let dir = tempfile::tempdir().unwrap();
        let tool = tool(&dir).with_policy(BashPolicy::default().with_output_limits(100, 10, 20));
        let output = bash(&tool, "seq 1 1000").await.unwrap();
        assert!(output.starts_with("[output truncated: 3893 bytes, showing the first 10 and the last 20 characters]\n1\n2\n3\n4\n5\n"));
        assert!(output.ends_with("\n...\n996\n997\n998\n999\n1000"));
    }

    #[tokio::test]
    async fn very_long_output_is_captured_with_bounded_memory() {
        let dir = tempfile::tempdir().unwrap();
        let tool = tool(&dir).with_policy(BashPolicy::default().with_output_limits(100, 10, 20));
        let output = bash(&tool, "seq 1 200000; echo last-line").await.unwrap();
        assert!(output.ends_with("last-line"), "{output}");
        assert!(output.starts_with("[output truncated: 1288905 bytes, showing the first 10 and the last 20 characters]\n1\n2\n3\n4\n5\n"), "{output}");
        assert!(output.len() < 400, "{}", output.len());
    }

    #[tokio::test]
    async fn cancellation_stops_the_command() {
        let dir = tempfile::tempdir().unwrap();
        let context = ToolContext::default();
        let token = context.cancellation.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            token.cancel();
        });
        let error = tool(&dir)
            .call(json!({"command": "sleep 30"}), &context)
            .await
            .unwrap_err();
        assert_eq!(
            error,
            ToolError::failed("Command stopped: the agent run was cancelled.")
        );
    }

    #[tokio::test]
    async fn an_empty_command_is_invalid() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            bash(&tool(&dir), "  ").await.unwrap_err(),
            ToolError::invalid_arguments("command is empty")
        );
    }

    #[test]
    fn truncation_leaves_short_text_alone() {
        let policy = BashPolicy::default().with_output_limits(10, 3, 3);
        assert_eq!(policy.truncate("short"), "short");
        assert_eq!(
            policy.truncate("abcdefghijklmnop"),
            "[output truncated: 16 characters, showing the first 3 and the last 3 characters]\nabc\n...\nnop"
        );
    }
}
