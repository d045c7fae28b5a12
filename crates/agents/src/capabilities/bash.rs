//! `bash`: run a shell command in the workspace, under a policy.

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

/// Limits and refusals for [`BashTool`].
///
/// The deny list is a coarse guard against obviously destructive commands (matched as
/// case-insensitive substrings, with runs of whitespace collapsed), not a security boundary: run
/// untrusted agents in a container.
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
    /// Commands containing any of these (case-insensitively) are refused.
    pub deny_patterns: Vec<String>,
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
        self.max_output_chars.max(self.head_chars).saturating_mul(4) + 4
    }

    /// Bytes kept from the end of a stream while it runs.
    fn capture_tail_bytes(&self) -> usize {
        self.tail_chars.saturating_mul(4) + 4
    }
}

/// `bash{command}`: runs `command` with `bash -c` in the workspace root (stdin closed, the
/// environment inherited) and returns its output: `Exit code: N` when non-zero, then stdout,
/// then `STDERR:` and stderr, separated by blank lines; `(no output)` when there is none.
/// Commands matching the policy's deny list are refused; a command running past the policy's
/// timeout is killed with its whole process group (so are background processes it leaves
/// behind), and the model gets what it printed so far.
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
        let pid = child.id();
        let head = self.policy.capture_head_bytes();
        let tail = self.policy.capture_tail_bytes();
        let stdout = tokio::spawn(capture(child.stdout.take(), head, tail));
        let stderr = tokio::spawn(capture(child.stderr.take(), head, tail));

        let ending = tokio::select! {
            status = tokio::time::timeout(self.policy.timeout, child.wait()) => match status {
                Ok(Ok(status)) => Ending::Exited(status.code()),
                Ok(Err(error)) => Ending::WaitFailed(error.to_string()),
                Err(_) => Ending::TimedOut,
            },
            () = context.cancellation.cancelled() => Ending::Cancelled,
        };
        // Stop what is still running in the command's group: the command itself after a timeout
        // or cancellation, background processes it left behind otherwise (they would keep the
        // output pipes open).
        if let Some(pid) = pid {
            kill_process_group(&self.shell, pid).await;
        }
        if !matches!(ending, Ending::Exited(_)) {
            let _ = child.kill().await;
        }
        let stdout = collect(stdout, &self.policy).await;
        let stderr = collect(stderr, &self.policy).await;

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

/// The start and end of a stream, its middle dropped once it is long.
struct Captured {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    dropped: bool,
    total_bytes: usize,
}

async fn capture<R: AsyncRead + Unpin>(
    reader: Option<R>,
    head_cap: usize,
    tail_cap: usize,
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
        let read = match reader.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        captured.total_bytes += read;
        let mut chunk = &buffer[..read];
        let room = head_cap.saturating_sub(captured.head.len());
        if room > 0 {
            let taken = room.min(chunk.len());
            captured.head.extend_from_slice(&chunk[..taken]);
            chunk = &chunk[taken..];
        }
        for byte in chunk {
            if captured.tail.len() == tail_cap {
                captured.tail.pop_front();
                captured.dropped = true;
            }
            captured.tail.push_back(*byte);
        }
    }
    captured
}

/// The captured text, cut by `policy` (the reader is given a moment to drain, then abandoned).
async fn collect(task: tokio::task::JoinHandle<Captured>, policy: &BashPolicy) -> String {
    let captured = match tokio::time::timeout(Duration::from_secs(2), task).await {
        Ok(Ok(captured)) => captured,
        _ => return String::new(),
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

/// Sends SIGKILL to the process group `pid` (the shell's `kill` builtin; no unsafe code).
async fn kill_process_group(shell: &str, pid: u32) {
    if !cfg!(unix) {
        return;
    }
    let result = Command::new(shell)
        .arg("-c")
        .arg(format!("kill -KILL -- -{pid} 2>/dev/null"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await;
    if let Err(error) = result {
        tracing::warn!(%error, pid, "could not kill the command's process group");
    }
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
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
