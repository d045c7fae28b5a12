//! Running commands as named steps with clear failure messages.

use std::process::Command;
use std::time::Instant;

/// A named command.
pub struct Step {
    name: &'static str,
    command: Command,
}

impl Step {
    pub fn new(name: &'static str, command: Command) -> Self {
        Self { name, command }
    }

    /// Runs the command, streaming its output; an error names the step and the exit status.
    pub fn run(mut self) -> Result<(), String> {
        eprintln!("==> {} ({})", self.name, describe(&self.command));
        let started = Instant::now();
        let status = self.command.status().map_err(|e| {
            format!(
                "{}: could not start `{}`: {e}",
                self.name,
                describe(&self.command)
            )
        })?;
        eprintln!(
            "<== {} took {:.1}s",
            self.name,
            started.elapsed().as_secs_f64()
        );
        if status.success() {
            Ok(())
        } else {
            Err(format!("step `{}` failed ({status})", self.name))
        }
    }
}

/// `cargo <args>` using the cargo that runs xtask.
pub fn cargo(args: &[&str]) -> Command {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut command = Command::new(cargo);
    command.args(args);
    command
}

fn describe(command: &Command) -> String {
    let mut parts = vec![command.get_program().to_string_lossy().into_owned()];
    parts.extend(command.get_args().map(|a| a.to_string_lossy().into_owned()));
    parts.join(" ")
}

/// The workspace root (the parent of `xtask/`).
pub fn repo_root() -> Result<std::path::PathBuf, String> {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(std::path::Path::to_path_buf)
        .ok_or_else(|| "xtask has no parent directory".to_owned())
}
