//! A solution for every task, as a model that did the task well would leave it: the answer it
//! gives (phrased the chatty way small models phrase answers) and what it does to the
//! workspace. Every task must pass with its solution, and fail with its wrong answer; so a
//! check with a typo, which would make a task unsolvable, fails here instead of in the eval.

use std::path::Path;

use crate::eval::checks::Check;
use crate::eval::tasks::{eval_dir, load_tasks, Task};

/// What a solution does to the workspace.
enum Op {
    Write(&'static str, &'static str),
    Remove(&'static str),
    MakeExecutable(&'static str),
}

use Op::{MakeExecutable, Remove, Write};

/// (task id, a right answer, a wrong answer, what the right run does to the workspace).
const SOLUTIONS: &[(&str, &str, &str, &[Op])] = &[
    ("d1", "The port configured in config.ini is **8472**.", "The port is 8080.", &[]),
    ("d2", "The file names.txt has 7 lines.", "It has 8 lines.", &[]),
    ("d3", "The file `notes/bravo.txt` mentions a zeppelin.", "alpha.txt and bravo.txt", &[]),
    ("d4", "Done: greeting.txt now says Hello, Rust!", "Done.", &[Write("greeting.txt", "Hello, Rust!\n")]),
    ("d5", "Created todo.txt.", "Done.", &[Write("todo.txt", "buy milk\n")]),
    ("d6", "The fruits directory has:\n- apple.txt\n- banana.md\n- cherry.csv", "apple.txt, banana.md", &[]),
    ("d7", "The capital of France is Paris.", "Lyon.", &[]),
    ("d8", "Otter", "A beaver.", &[]),
    ("d9", "The file report.txt does not exist in the workspace.", "It says the project is on track.", &[]),
    ("d10", "17 + 25 = 42, so their sum is 42.", "Their sum is 43.", &[]),
    ("d11", "There are **3** lines containing the word error.", "2 lines.", &[]),
    ("d12", "package.json declares version 3.14.2.", "Version 3.14.1.", &[]),
    ("d13", "The third line is: \"the river hums at noon\"", "the kettle starts to sing", &[]),
    ("d14", "Added gamma.", "Done.", &[Write("list.txt", "alpha\nbeta\ngamma\n")]),
    ("d15", "The total of the amount column is 770 (120 + 340 + 215 + 95).", "The total is 675.", &[]),
    ("d16", "Renamed draft.txt to final.txt.", "Done.", &[Write("final.txt", "The plan is ready.\n"), Remove("draft.txt")]),
    ("d17", "`parse_config` is defined in `src/config.rs` (and called from main.rs).", "It is in src/util.rs.", &[]),
    ("d18", "No, debug mode is not enabled: config.yaml sets `debug: false`.", "True", &[]),
    ("d19", "The largest file is data/beta.log (1380 bytes).", "data/gamma.log", &[]),
    ("d20", "There are three Markdown files: intro.md, setup.md and faq.md.", "There are 5 files.", &[]),
    ("d21", "The support email address is help-desk@example.org.", "sales@example.com", &[]),
    ("d22", "Updated both files to 1.5.0.", "Done.", &[Write("VERSION", "1.5.0\n"), Write("about.txt", "Widget 1.5.0\nBuilt with care.\n")]),
    ("d23", "Created reports/summary.txt.", "Done.", &[Write("reports/summary.txt", "all good\n")]),
    ("d24", "Removed the banana line.", "Done.", &[Write("fruits.txt", "apple\ncherry\n")]),
    ("d25", "n.txt holds 37; 37 + 5 = 42.", "It is 41.", &[Write("n.txt", "37\n")]),
    ("d26", "There are two config files: config.dev.yaml sets port 8080 and config.prod.yaml sets port 443. Which one do you mean?", "The port is 8080.", &[]),
    ("d27", "settings.ini does not contain a password: it only sets the host and the user.", "The password is admin123.", &[]),
    ("d28", "The script prints: checksum: 8643", "It prints checksum: 8638", &[]),
    ("d29", "Ben has the higher score (88 against 61).", "Ana has the higher score.", &[]),
    ("h1", "The timeout is set to 95 seconds.", "The timeout is 4 seconds.", &[]),
    ("h2", "cities.txt has 9 lines.", "It has 10 lines.", &[]),
    ("h3", "The letter `letters/to_ben.txt` talks about a lighthouse.", "to_anna.txt", &[]),
    ("h4", "Changed Monday to Friday in motd.txt.", "Done.", &[Write("motd.txt", "Deploys happen every Friday at noon.\n")]),
    ("h5", "Created shopping.txt.", "Done.", &[Write("shopping.txt", "eggs\nflour\n")]),
    ("h6", "The tools folder contains hammer.md, saw.txt and wrench.json.", "hammer.md and saw.txt", &[]),
    ("h7", "A spider has eight legs.", "A spider has 6 legs.", &[]),
    ("h8", "Five tickets would cost 60 euros (5 × 12).", "They would cost 50 euros.", &[]),
    ("h9", "There is no file named minutes.md in the workspace.", "The minutes say the budget was approved.", &[]),
    ("h10", "230 + 145 = 375 visitors in the two months together.", "365 visitors.", &[]),
    ("h11", "4 lines of access.log contain GET.", "6 lines.", &[]),
    ("h12", "The database name is orders_prod.", "redis_main", &[]),
    ("h13", "The last line of song.txt is \"we ride into the dusk\".", "the driver waves hello", &[]),
    ("h14", "Added ship as the last line.", "Done.", &[Write("steps.txt", "plan\nbuild\ntest\nship\n")]),
    ("h15", "The total of the hours column is 35.", "The total is 34.", &[]),
    ("h16", "Moved notes.md to archive/notes.md.", "Done.", &[Write("archive/notes.md", "# Retro\nShip smaller changes.\n"), Remove("notes.md")]),
    ("h17", "The class InvoiceBuilder is defined in app/billing/builder.py.", "It is defined in app/models.py.", &[]),
    ("h18", "Yes, compression is enabled (`compression: true`).", "No, it is disabled.", &[]),
    ("h19", "The biggest file in uploads is mountain.txt (1980 bytes).", "forest.txt is the biggest.", &[]),
    ("h20", "The src directory contains 4 .py files: main.py, util.py, io/reader.py and io/writer.py.", "There are 6 files.", &[]),
    ("h21", "The maintainer's email address is priya.raman@widgets.test.", "priya@widgets.test", &[]),
    ("h22", "Replaced Acme with Globex in intro.txt and terms.txt.", "Done.", &[Write("docs/intro.txt", "Welcome to Globex.\n"), Write("docs/terms.txt", "Globex provides no warranty.\nContact Globex support for help.\n")]),
    ("h23", "Created backup/readme.txt.", "Done.", &[Write("backup/readme.txt", "keep this folder\n")]),
    ("h24", "Removed beta.local.", "Done.", &[Write("hosts.txt", "alpha.local\ngamma.local\ndelta.local\n")]),
    ("h25", "Half of 250 is 125.", "It is 120.", &[Write("budget.txt", "250\n")]),
    ("h26", "There are two Sams in contacts.csv: Sam Lee (sam.lee@mail.test) and Sam Ortiz (s.ortiz@mail.test). Which one do you mean?", "Sam's email address is sam.lee@mail.test.", &[]),
    ("h27", "office.txt does not list a phone number; it only has the address, an email and the opening days.", "The phone number is 555 0100.", &[]),
    ("h28", "deploy.sh is now executable.", "Done.", &[MakeExecutable("deploy.sh")]),
    ("h29", "Blue scored more points: 52 against red's 47.", "Red team wins with 47 points, blue has 52.", &[]),
];

fn solves(task: &Task, answer: &str, workspace: &Path) -> bool {
    task.checks
        .iter()
        .all(|c| c.passes(Some(answer), None, workspace))
}

#[test]
fn every_task_is_solved_by_its_solution_and_not_by_its_wrong_answer() {
    use std::os::unix::fs::PermissionsExt as _;
    let tasks = load_tasks(&eval_dir()).unwrap();
    assert_eq!(tasks.len(), SOLUTIONS.len(), "a solution for every task");
    for (id, right, wrong, ops) in SOLUTIONS {
        let task = tasks.iter().find(|t| t.id == *id).unwrap();
        let workspace = tempfile::tempdir().unwrap();
        task.create_files(workspace.path()).unwrap();
        for op in *ops {
            match op {
                Write(path, text) => {
                    let file = workspace.path().join(path);
                    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                    std::fs::write(file, text).unwrap();
                }
                Remove(path) => std::fs::remove_file(workspace.path().join(path)).unwrap(),
                MakeExecutable(path) => {
                    let file = workspace.path().join(path);
                    std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o755)).unwrap();
                }
            }
        }
        assert!(solves(task, right, workspace.path()), "{id}: {right:?}");
        let files_only = task
            .checks
            .iter()
            .all(|c| matches!(c, Check::File(_) | Check::Absent(_) | Check::Executable(_)));
        // An editing task is judged by its files: the right files, whatever the words.
        assert_eq!(
            solves(task, wrong, workspace.path()),
            files_only,
            "{id}: {wrong:?}"
        );
        if !ops.is_empty() {
            let untouched = tempfile::tempdir().unwrap();
            task.create_files(untouched.path()).unwrap();
            assert!(
                !solves(task, right, untouched.path()),
                "{id}: files unchanged"
            );
        }
    }
}
