//! The scripted user of the long-run benchmark: 32 turns of ordinary work on the project of
//! `project.rs`, each with a machine check; 11 of them depend on what an earlier turn found
//! (a value from a tool result, an earlier answer, a file changed earlier). Written as a user
//! would ask, the same for every trace mode.
//!
//! Each turn also carries the replies of the scripted twin (the same conversation with a
//! scripted model, `crates/agents/tests/long_horizon.rs`, run in CI), which this file is
//! included into. Standard library only.

use super::check::Check;

/// One reply of the scripted twin's model.
// Read by the scripted twin (and this crate's tests), not by the benchmark.
#[allow(dead_code)]
#[derive(Clone, Copy, Debug)]
pub enum Reply {
    /// A tool call: the tool's name and its arguments as JSON.
    Call(&'static str, &'static str),
    /// The final answer.
    Answer(&'static str),
}

/// One turn of the scripted user.
#[derive(Clone, Copy, Debug)]
pub struct Turn {
    /// What the user sends.
    pub prompt: &'static str,
    /// How the answer (or the workspace) is judged.
    pub check: Check,
    /// Whether the turn needs a tool: its facts are in the files, not in the conversation.
    pub needs_tool: bool,
    /// The earlier turns (numbered from 1) whose findings this one builds on.
    pub depends_on: &'static [usize],
    /// The scripted twin's model replies for this turn.
    #[allow(dead_code)]
    pub script: &'static [Reply],
}

impl Turn {
    /// Whether the turn builds on an earlier one (a "recall" turn in the report).
    pub fn is_recall(&self) -> bool {
        !self.depends_on.is_empty()
    }

    /// Whether the changes this turn builds on are in the workspace now: every earlier turn
    /// it depends on whose check reads a file still passes it. A turn about a change that was
    /// never made ("how many workers did you just set?" after a reply that only claimed the
    /// edit) must not pass by repeating the claim.
    pub fn changes_it_builds_on_hold(&self, turns: &[Turn], workspace: &std::path::Path) -> bool {
        self.depends_on.iter().all(|&n| {
            turns.get(n.wrapping_sub(1)).is_none_or(|earlier| {
                !earlier.check.is_file_check() || earlier.check.passes(None, workspace)
            })
        })
    }
}

const fn text(all: &'static [&'static str]) -> Check {
    Check::Text {
        all,
        any: &[],
        never: &[],
    }
}

const fn any_of(any: &'static [&'static str]) -> Check {
    Check::Text {
        all: &[],
        any,
        never: &[],
    }
}

const fn number(expected: i64, word: &'static str, allowed: &'static [i64]) -> Check {
    Check::Number {
        expected,
        word,
        allowed,
    }
}

/// The turns, in order.
pub const TURNS: &[Turn] = &[
    // 1
    Turn {
        prompt: "Which port does config.ini configure for the server?",
        check: text(&["8472"]),
        needs_tool: true,
        depends_on: &[],
        script: &[
            Reply::Call("read_file", r#"{"path":"config.ini"}"#),
            Reply::Answer("The server listens on port 8472."),
        ],
    },
    // 2
    Turn {
        prompt: "How many lines in logs/server.log contain the word ERROR?",
        check: number(34, "thirty-four", &[]),
        needs_tool: true,
        depends_on: &[],
        script: &[
            Reply::Call("bash", r#"{"command":"grep -c ERROR logs/server.log"}"#),
            Reply::Answer("34 lines contain ERROR."),
        ],
    },
    // 3
    Turn {
        prompt: "When is the next release planned, according to notes.md?",
        check: any_of(&[
            "2026-12-04",
            "december 4",
            "4 december",
            "dec 4",
            "4th of december",
        ]),
        needs_tool: true,
        depends_on: &[],
        script: &[
            Reply::Call("read_file", r#"{"path":"notes.md"}"#),
            Reply::Answer("Release 2.3 is planned for 2026-12-04."),
        ],
    },
    // 4
    Turn {
        prompt: "In data/orders.csv, which customer placed order 1042?",
        check: text(&["halvorsen marine"]),
        needs_tool: true,
        depends_on: &[],
        script: &[
            Reply::Call(
                "search_files",
                r#"{"pattern":"1042,","path":"data/orders.csv"}"#,
            ),
            Reply::Answer("Order 1042 was placed by Halvorsen Marine."),
        ],
    },
    // 5
    Turn {
        prompt: "Which host does config.ini set for the server?",
        check: Check::Text {
            all: &["build.internal"],
            any: &[],
            never: &["localhost", "db.build.internal"],
        },
        needs_tool: true,
        depends_on: &[],
        script: &[
            Reply::Call("read_file", r#"{"path":"config.ini"}"#),
            Reply::Answer("The server host is build.internal."),
        ],
    },
    // 6
    Turn {
        prompt: "What was the port you found in config.ini earlier?",
        check: text(&["8472"]),
        needs_tool: false,
        depends_on: &[1],
        // Asked once more (it names a file and no tool ran: the driver's unread-file nudge),
        // a careful model repeats its answer.
        script: &[Reply::Answer("It was 8472."), Reply::Answer("It was 8472.")],
    },
    // 7
    Turn {
        prompt: "List the Python files in the src directory.",
        check: text(&["app.py", "inventory.py", "utils.py"]),
        needs_tool: true,
        depends_on: &[],
        script: &[
            Reply::Call("list_dir", r#"{"path":"src"}"#),
            Reply::Answer("src holds app.py, inventory.py and utils.py."),
        ],
    },
    // 8
    Turn {
        prompt: "Which version of flask does requirements.txt pin?",
        check: text(&["3.0.3"]),
        needs_tool: true,
        depends_on: &[],
        script: &[
            Reply::Call("read_file", r#"{"path":"requirements.txt"}"#),
            Reply::Answer("flask is pinned to 3.0.3."),
        ],
    },
    // 9
    Turn {
        prompt: "Who owns the release, according to notes.md?",
        check: text(&["priya"]),
        needs_tool: true,
        depends_on: &[],
        script: &[
            Reply::Call("read_file", r#"{"path":"notes.md"}"#),
            Reply::Answer("Priya Raman owns the release."),
        ],
    },
    // 10
    Turn {
        prompt: "What was the unit price of that order 1042 you looked up?",
        check: any_of(&["1249", "1,249"]),
        needs_tool: true,
        depends_on: &[4],
        script: &[
            Reply::Call(
                "search_files",
                r#"{"pattern":"1042,","path":"data/orders.csv"}"#,
            ),
            Reply::Answer("Order 1042 had a unit price of 1249.00."),
        ],
    },
    // 11
    Turn {
        prompt: "What default port does parse_port in src/utils.py fall back to when the value \
                 is empty?",
        check: text(&["8000"]),
        needs_tool: true,
        depends_on: &[],
        script: &[
            Reply::Call("read_file", r#"{"path":"src/utils.py"}"#),
            Reply::Answer("It falls back to DEFAULT_PORT, 8000."),
        ],
    },
    // 12
    Turn {
        prompt: "In config.ini, change workers from 4 to 6.",
        check: Check::File {
            path: "config.ini",
            all: &["workers = 6"],
            never: &["workers = 4"],
        },
        needs_tool: true,
        depends_on: &[],
        script: &[
            Reply::Call(
                "edit_file",
                r#"{"path":"config.ini","old_string":"workers = 4","new_string":"workers = 6"}"#,
            ),
            Reply::Answer("Done: config.ini now sets workers = 6."),
        ],
    },
    // 13
    Turn {
        prompt: "How many workers did you just set in config.ini?",
        check: number(6, "six", &[4]),
        needs_tool: false,
        depends_on: &[12],
        // Asked once more, as turn 6.
        script: &[Reply::Answer("6 workers."), Reply::Answer("6 workers.")],
    },
    // 14
    Turn {
        prompt: "How many orders (data rows, without the header) does data/orders.csv have?",
        check: number(240, "two hundred forty", &[241, 1]),
        needs_tool: true,
        depends_on: &[],
        script: &[
            Reply::Call("bash", r#"{"command":"wc -l data/orders.csv"}"#),
            Reply::Answer("240 orders (241 lines with the header)."),
        ],
    },
    // 15
    Turn {
        prompt: "What does the first ERROR line in logs/server.log say?",
        check: text(&["payment gateway timeout"]),
        needs_tool: true,
        depends_on: &[],
        script: &[
            Reply::Call("bash", r#"{"command":"grep -m1 ERROR logs/server.log"}"#),
            Reply::Answer("payment gateway timeout after 30s (order 1007)"),
        ],
    },
    // 16
    Turn {
        prompt: "Earlier you counted the ERROR lines in the log. What number did you get?",
        check: number(34, "thirty-four", &[]),
        needs_tool: false,
        depends_on: &[2],
        script: &[Reply::Answer("34.")],
    },
    // 17
    Turn {
        prompt: "Create a file named RELEASE.txt that holds only the release date from notes.md.",
        check: Check::File {
            path: "RELEASE.txt",
            all: &["2026-12-04"],
            never: &[],
        },
        needs_tool: true,
        depends_on: &[3],
        script: &[
            Reply::Call(
                "write_file",
                r#"{"path":"RELEASE.txt","content":"2026-12-04\n"}"#,
            ),
            Reply::Answer("Created RELEASE.txt with 2026-12-04."),
            // Asked once whether the answer needs notes.md, which no call of this turn used
            // (the date is turn 3's): the same answer again, so the first one stands.
            Reply::Answer("Created RELEASE.txt with 2026-12-04."),
        ],
    },
    // 18
    Turn {
        prompt: "What pool_size does config.ini set for the database?",
        check: number(12, "twelve", &[]),
        needs_tool: true,
        depends_on: &[],
        script: &[
            Reply::Call("read_file", r#"{"path":"config.ini"}"#),
            Reply::Answer("The database pool_size is 12."),
        ],
    },
    // 19
    Turn {
        prompt: "What command does the test target of the Makefile run?",
        check: text(&["pytest"]),
        needs_tool: true,
        depends_on: &[],
        script: &[
            Reply::Call("read_file", r#"{"path":"Makefile"}"#),
            Reply::Answer("make test runs pytest -q tests."),
        ],
    },
    // 20
    Turn {
        prompt: "Read config.ini again: what is the workers value now?",
        check: number(6, "six", &[4]),
        needs_tool: true,
        depends_on: &[12],
        script: &[
            Reply::Call("read_file", r#"{"path":"config.ini"}"#),
            Reply::Answer("workers is 6."),
        ],
    },
    // 21
    Turn {
        prompt: "How many orders in data/orders.csv have the status refunded?",
        check: number(15, "fifteen", &[]),
        needs_tool: true,
        depends_on: &[],
        script: &[
            Reply::Call("bash", r#"{"command":"grep -c refunded data/orders.csv"}"#),
            Reply::Answer("15 orders were refunded."),
        ],
    },
    // 22
    Turn {
        prompt: "Who was the customer of order 1042 again?",
        check: text(&["halvorsen"]),
        needs_tool: false,
        depends_on: &[4],
        script: &[Reply::Answer("Halvorsen Marine.")],
    },
    // 23
    Turn {
        prompt: "Which function in src/inventory.py computes how many units to reorder?",
        check: text(&["restock_quantity"]),
        needs_tool: true,
        depends_on: &[],
        script: &[
            Reply::Call("read_file", r#"{"path":"src/inventory.py"}"#),
            Reply::Answer("restock_quantity(on_hand, weekly_demand, lead_time_weeks=2)."),
        ],
    },
    // 24
    Turn {
        prompt: "Add the line 'Deploy checklist reviewed.' at the end of notes.md, keeping \
                 everything else.",
        check: Check::File {
            path: "notes.md",
            all: &[
                "Deploy checklist reviewed.",
                "Priya Raman owns the release",
                "Release 2.3",
            ],
            never: &[],
        },
        needs_tool: true,
        depends_on: &[],
        script: &[
            Reply::Call(
                "edit_file",
                r#"{"path":"notes.md","old_string":"- Decision: keep 4 workers per host until the new hosts arrive.","new_string":"- Decision: keep 4 workers per host until the new hosts arrive.\nDeploy checklist reviewed."}"#,
            ),
            Reply::Answer("Added the line at the end of notes.md."),
        ],
    },
    // 25
    Turn {
        prompt: "Which health-check path does docs/deploy.md mention?",
        check: text(&["/healthz"]),
        needs_tool: true,
        depends_on: &[],
        script: &[
            Reply::Call("read_file", r#"{"path":"docs/deploy.md"}"#),
            Reply::Answer("The load balancer checks /healthz."),
        ],
    },
    // 26
    Turn {
        prompt: "Which port does docs/deploy.md say the load balancer forwards to, and is it \
                 the same as the config.ini port you found earlier?",
        check: Check::Text {
            all: &["8470"],
            any: &[
                "not the same",
                "differ",
                "does not match",
                "doesn't match",
                "mismatch",
                "not match",
                "no,",
                "no.",
                "not equal",
            ],
            never: &[],
        },
        needs_tool: true,
        depends_on: &[1],
        script: &[
            Reply::Call("read_file", r#"{"path":"docs/deploy.md"}"#),
            Reply::Answer("It forwards to 8470, which is different from 8472 in config.ini."),
            // Asked once whether the answer needs config.ini, which no call of this turn used
            // (its port is turn 1's): the same answer again, so the first one stands.
            Reply::Answer("It forwards to 8470, which is different from 8472 in config.ini."),
        ],
    },
    // 27
    Turn {
        prompt: "What product was ordered in order 1107 of data/orders.csv?",
        check: text(&["label printer"]),
        needs_tool: true,
        depends_on: &[],
        script: &[
            Reply::Call(
                "search_files",
                r#"{"pattern":"1107,","path":"data/orders.csv"}"#,
            ),
            Reply::Answer("Order 1107 was for a label printer."),
        ],
    },
    // 28
    Turn {
        prompt: "Which order number appeared in the first ERROR line you found earlier?",
        check: text(&["1007"]),
        needs_tool: false,
        depends_on: &[15],
        script: &[Reply::Answer("Order 1007.")],
    },
    // 29
    Turn {
        prompt: "In one sentence, what does this project do, according to README.md?",
        check: any_of(&["stock", "inventory"]),
        needs_tool: true,
        depends_on: &[],
        script: &[
            Reply::Call("read_file", r#"{"path":"README.md"}"#),
            Reply::Answer("It tracks warehouse stock levels and suggests restock orders."),
        ],
    },
    // 30
    Turn {
        prompt: "What does RELEASE.txt, the file you created earlier, contain?",
        check: any_of(&["2026-12-04", "december 4", "4 december"]),
        needs_tool: false,
        depends_on: &[17],
        script: &[
            Reply::Call("read_file", r#"{"path":"RELEASE.txt"}"#),
            Reply::Answer("It contains 2026-12-04."),
        ],
    },
    // 31
    Turn {
        prompt: "Remind me: who owns the release?",
        check: text(&["priya"]),
        needs_tool: false,
        depends_on: &[9],
        script: &[Reply::Answer("Priya Raman.")],
    },
    // 32
    Turn {
        prompt: "What does the HTTP status code 404 mean?",
        check: any_of(&["not found"]),
        needs_tool: false,
        depends_on: &[],
        script: &[Reply::Answer(
            "404 means Not Found: the server has no such resource.",
        )],
    },
];
