//! Who decides on the calls that wait for a person's approval: the `--approve` flags, the
//! interactive prompt on a terminal ([`Approver`]); and `agents approve | reject --session NAME
//! CALL_ID`, a decision made from another process. The runner (`runner.rs`) asks the approver
//! and resumes the run; `setup.rs` makes `--require-approval`'s calls wait.

use std::collections::BTreeSet;
use std::io::{BufRead, IsTerminal, Write};

use agents::prelude::*;

use crate::render::{arguments_text, printable, printable_json};
use crate::sessions::SessionArgs;

type Error = Box<dyn std::error::Error>;

/// The approval options of `agents run`.
#[derive(Debug, Default, clap::Args)]
pub struct ApprovalArgs {
    /// Calls of these tools wait for a person's approval (besides the definition's
    /// `approval.required`).
    #[arg(long, value_name = "TOOL[,TOOL]", value_delimiter = ',')]
    pub require_approval: Vec<String>,
    /// Decide without asking: `all` approves every waiting call, `none` rejects every one,
    /// `TOOL[,TOOL]` approves those tools' calls. Calls left undecided are asked for on a
    /// terminal; otherwise a `--session` run exits 3 (decide with `agents approve|reject`) and
    /// a run without one rejects them.
    #[arg(long, value_name = "all|none|TOOL[,TOOL]")]
    pub approve: Option<String>,
}

/// Who decides, and what they decided to always allow in this process.
pub struct Approver {
    approve_all: bool,
    reject_all: bool,
    allowed: BTreeSet<String>,
    interactive: bool,
}

impl Approver {
    /// From the options; interactive when stdin is a terminal.
    pub fn new(args: &ApprovalArgs) -> Self {
        let given = args.approve.as_deref().unwrap_or("");
        Self {
            approve_all: given == "all",
            reject_all: given == "none",
            allowed: match given {
                "" | "all" | "none" => BTreeSet::new(),
                list => list.split(',').map(|t| t.trim().to_owned()).collect(),
            },
            interactive: std::io::stdin().is_terminal(),
        }
    }

    /// Decisions on the waiting calls of `state` it can decide: by `--approve`, by "always"
    /// answers, by asking on a terminal, or (when the run cannot wait for a decision made
    /// elsewhere, `can_wait` false) a rejection.
    pub fn decisions(
        &mut self,
        state: &AgentState,
        can_wait: bool,
    ) -> Result<Vec<ApprovalDecision>, Error> {
        let mut decisions = Vec::new();
        for pending in state.pending_approvals() {
            if pending.is_decided() {
                continue;
            }
            let tool = pending.tool_name().to_owned();
            let decision = if self.approve_all || self.allowed.contains(&tool) {
                pending.approve()
            } else if self.reject_all {
                pending.reject("not approved (--approve none)")
            } else if self.interactive {
                let fingerprint = state
                    .approval_fingerprint(&pending.key())
                    .unwrap_or_default();
                self.ask(&pending, &fingerprint)?
            } else if can_wait {
                continue;
            } else {
                pending.reject(
                    "not approved: nobody was asked (a non-interactive run without --session)",
                )
            };
            decisions.push(decision);
        }
        Ok(decisions)
    }

    /// `Allow bash?`, the full arguments (escaped, with their line breaks; a long value shows
    /// its head and tail until the person views all of it), then `[y]es / [n]o / [e]dit /
    /// [a]lways for this tool`. `y` and `a` are refused while part of the arguments is hidden.
    fn ask(
        &mut self,
        pending: &PendingApproval,
        fingerprint: &str,
    ) -> Result<ApprovalDecision, Error> {
        let stdin = std::io::stdin();
        let mut lines = stdin.lock();
        let (shown, mut hidden) = arguments_text(pending.arguments(), false);
        println!(
            "Allow {} (call {}, fingerprint {})?\n{shown}",
            printable(pending.tool_name()),
            printable(&pending.key()),
            fingerprint,
        );
        loop {
            let view = if hidden { " / [v]iew all" } else { "" };
            print!("[y]es / [n]o / [e]dit / [a]lways for this tool{view} ");
            std::io::stdout().flush()?;
            let answer = read_line(&mut lines)?;
            match answer.trim().to_ascii_lowercase().as_str() {
                "y" | "yes" | "a" | "always" if hidden => {
                    println!("part of the arguments is hidden: [v]iew all of them first");
                }
                "v" | "view" => {
                    println!("{}", arguments_text(pending.arguments(), true).0);
                    hidden = false;
                }
                "y" | "yes" => return Ok(pending.approve()),
                "n" | "no" => {
                    print!("Reason (the model reads it, empty for none): ");
                    std::io::stdout().flush()?;
                    let reason = read_line(&mut lines)?;
                    let reason = reason.trim();
                    let reason = if reason.is_empty() {
                        "the person said no"
                    } else {
                        reason
                    };
                    return Ok(pending.reject(reason));
                }
                "a" | "always" => {
                    self.allowed.insert(pending.tool_name().to_owned());
                    return Ok(pending.approve());
                }
                "e" | "edit" => {
                    println!(
                        "Arguments now: {}",
                        printable_json(&pending.arguments().to_string())
                    );
                    print!("New arguments (JSON, one line): ");
                    std::io::stdout().flush()?;
                    let text = read_line(&mut lines)?;
                    match serde_json::from_str(text.trim()) {
                        Ok(arguments) => return Ok(pending.approve_with(arguments)),
                        Err(error) => println!("not JSON ({error}); try again"),
                    }
                }
                _ => println!("answer y, n, e or a{}", if hidden { " (or v)" } else { "" }),
            }
        }
    }
}

/// A line from stdin; its end is an error (nobody is there to answer).
fn read_line(lines: &mut impl BufRead) -> Result<String, Error> {
    let mut line = String::new();
    if lines.read_line(&mut line)? == 0 {
        return Err("stdin closed while waiting for an approval".into());
    }
    Ok(line)
}

/// `agents approve --session NAME CALL_ID [--with JSON]`.
#[derive(Debug, clap::Args)]
pub struct ApproveArgs {
    /// The session that waits.
    #[arg(long, value_name = "NAME")]
    pub session: String,
    /// The waiting call's id as `agents run` printed it, or `ID@FINGERPRINT` to refuse a
    /// call that is not the one shown.
    pub call_id: String,
    /// The fingerprint `agents run` printed with the call: the decision is refused when the
    /// call waiting under the id is another one (or its arguments changed).
    #[arg(long, value_name = "FINGERPRINT")]
    pub expect: Option<String>,
    /// Run the call with these arguments (JSON) instead.
    #[arg(long, value_name = "JSON")]
    pub with: Option<String>,
    /// The session database (as for `agents run`).
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
    /// When another process is running the session, wait for it instead of exiting with
    /// code 4.
    #[arg(long)]
    pub wait: bool,
}

/// `agents reject --session NAME CALL_ID --reason TEXT`.
#[derive(Debug, clap::Args)]
pub struct RejectArgs {
    /// The session that waits.
    #[arg(long, value_name = "NAME")]
    pub session: String,
    /// The waiting call's id, or `ID@FINGERPRINT`.
    pub call_id: String,
    /// The fingerprint `agents run` printed with the call (see `agents approve --expect`).
    #[arg(long, value_name = "FINGERPRINT")]
    pub expect: Option<String>,
    /// Why (the model reads it).
    #[arg(long)]
    pub reason: String,
    /// The session database (as for `agents run`).
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
    /// When another process is running the session, wait for it instead of exiting with
    /// code 4.
    #[arg(long)]
    pub wait: bool,
}

/// `agents approve ...`.
pub async fn approve(args: ApproveArgs) -> Result<(), Error> {
    let with = match &args.with {
        Some(text) => Some(
            serde_json::from_str::<serde_json::Value>(text)
                .map_err(|e| format!("--with is not JSON: {e}"))?,
        ),
        None => None,
    };
    record(
        &args.session,
        args.db.as_deref(),
        args.wait,
        &args.call_id,
        args.expect.as_deref(),
        |p| match &with {
            Some(arguments) => p.approve_with(arguments.clone()),
            None => p.approve(),
        },
    )
    .await
}

/// `agents reject ...`.
pub async fn reject(args: RejectArgs) -> Result<(), Error> {
    let reason = args.reason;
    record(
        &args.session,
        args.db.as_deref(),
        args.wait,
        &args.call_id,
        args.expect.as_deref(),
        |p| p.reject(reason.clone()),
    )
    .await
}

/// Makes the decision on the call as the session stores it, commits it, says what is left.
async fn record(
    session: &str,
    db: Option<&str>,
    wait: bool,
    call_id: &str,
    expect: Option<&str>,
    decide: impl Fn(&PendingApproval) -> ApprovalDecision,
) -> Result<(), Error> {
    // `ID@FINGERPRINT` (a fingerprint is hex: an id holding `@` keeps it when no hex follows)
    let (call_id, from_id) = match call_id.rsplit_once('@') {
        Some((id, fp)) if !fp.is_empty() && fp.chars().all(|c| c.is_ascii_hexdigit()) => {
            (id, Some(fp))
        }
        _ => (call_id, None),
    };
    let expect = match (expect, from_id) {
        (Some(a), Some(b)) if !a.eq_ignore_ascii_case(b) => {
            return Err(
                format!("--expect {a} and {call_id}@{b} name different fingerprints").into(),
            )
        }
        (a, b) => a.or(b),
    };
    let args = SessionArgs {
        session: Some(session.to_owned()),
        db: db.map(str::to_owned),
        wait,
        ..SessionArgs::default()
    };
    let state = crate::sessions::decide(&args, call_id, expect, decide).await?;
    let left = state
        .pending_approvals()
        .iter()
        .filter(|p| !p.is_decided())
        .count();
    if left == 0 {
        println!("decided; continue with `agents run --session {session} --resume`");
    } else {
        println!("decided; {left} call(s) still wait");
    }
    Ok(())
}
