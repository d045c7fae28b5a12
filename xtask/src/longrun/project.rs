//! The long-run benchmark's workspace: a small, realistic project generated the same way on
//! every run (the hand-written files from `xtask/fixtures/longrun/project/`, a CSV export of
//! 240 orders and a 600-line server log made by a fixed rule).
//!
//! Standard library only: the scripted twin in `crates/agents/tests/long_horizon.rs` includes
//! this file, so both runs see the same project.

use std::fmt::Write as _;
use std::path::Path;

/// The hand-written files, by path.
const FIXED: &[(&str, &str)] = &[
    (
        "config.ini",
        include_str!("../../fixtures/longrun/project/config.ini"),
    ),
    (
        "README.md",
        include_str!("../../fixtures/longrun/project/README.md"),
    ),
    (
        "notes.md",
        include_str!("../../fixtures/longrun/project/notes.md"),
    ),
    (
        "requirements.txt",
        include_str!("../../fixtures/longrun/project/requirements.txt"),
    ),
    (
        "Makefile",
        include_str!("../../fixtures/longrun/project/Makefile"),
    ),
    (
        "docs/deploy.md",
        include_str!("../../fixtures/longrun/project/docs/deploy.md"),
    ),
    (
        "src/app.py",
        include_str!("../../fixtures/longrun/project/src/app.py"),
    ),
    (
        "src/inventory.py",
        include_str!("../../fixtures/longrun/project/src/inventory.py"),
    ),
    (
        "src/utils.py",
        include_str!("../../fixtures/longrun/project/src/utils.py"),
    ),
    (
        "tests/test_inventory.py",
        include_str!("../../fixtures/longrun/project/tests/test_inventory.py"),
    ),
];

/// Every file of the project: path (with `/`) and contents.
pub fn files() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = FIXED
        .iter()
        .map(|(path, text)| ((*path).to_owned(), (*text).to_owned()))
        .collect();
    files.push(("data/orders.csv".to_owned(), orders_csv()));
    files.push(("logs/server.log".to_owned(), server_log()));
    files
}

/// Writes the project under `root` (which must exist).
///
/// # Errors
/// The first file that cannot be written.
pub fn write(root: &Path) -> std::io::Result<()> {
    for (path, text) in files() {
        let file = root.join(&path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&file, text)?;
    }
    Ok(())
}

const CUSTOMERS: &[&str] = &[
    "Northwind Traders",
    "Blue Harbor Foods",
    "Keller & Sons",
    "Aldana Logistics",
    "Mistral Outdoor",
    "Okafor Electrics",
    "Lindqvist Bakery",
    "Paulsen Tools",
    "Greenfield Farms",
    "Yamada Imports",
];

const PRODUCTS: &[(&str, &str)] = &[
    ("shrink wrap", "18.50"),
    ("carton 40x30", "2.75"),
    ("strapping band", "31.00"),
    ("barcode labels", "9.90"),
    ("hand truck", "189.00"),
    ("storage bin", "14.25"),
    ("safety gloves", "6.40"),
    ("tape gun", "22.80"),
];

/// 240 orders, 1001 to 1240; every 16th (from 1006) is refunded, so 15 are. Orders 1042 and
/// 1107 are the ones the turns ask about.
pub fn orders_csv() -> String {
    let mut out = String::from("order_id,date,customer,product,quantity,unit_price,status\n");
    for i in 0..240_u32 {
        let id = 1001 + i;
        let day = 1 + (i * 7) % 28;
        let month = if i < 120 { 10 } else { 11 };
        let (customer, product, quantity, price, status) = match id {
            1042 => ("Halvorsen Marine", "pallet jack", 3, "1249.00", "shipped"),
            1107 => (
                "Brightwater Clinic",
                "label printer",
                2,
                "349.00",
                "pending",
            ),
            _ => {
                let customer = CUSTOMERS[((i * 7 + 3) % 10) as usize];
                let (product, price) = PRODUCTS[((i * 5 + 1) % 8) as usize];
                let quantity = 1 + (i * 13) % 40;
                let status = if i % 16 == 5 {
                    "refunded"
                } else if i % 3 == 0 {
                    "pending"
                } else {
                    "shipped"
                };
                (customer, product, quantity, price, status)
            }
        };
        let _ = writeln!(
            out,
            "{id},2026-{month:02}-{day:02},{customer},{product},{quantity},{price},{status}"
        );
    }
    out
}

const INFO: &[&str] = &[
    "GET /restock/shrink%20wrap 200 12ms",
    "GET /low 200 8ms",
    "GET /healthz 200 1ms",
    "stock sync finished: 3 items updated",
    "GET /restock/tape%20gun 200 15ms",
    "cache refreshed (41 entries)",
];

const WARNINGS: &[&str] = &[
    "slow query on orders: 1840ms",
    "retrying stock sync (attempt 2)",
    "request queue above 50",
];

const ERRORS: &[&str] = &[
    "stock sync failed: connection reset by db.build.internal",
    "GET /restock/label%20printer 500: division by zero",
    "payment gateway timeout after 30s",
];

/// 600 lines from 2026-11-02 08:00:00, one every 7 seconds. Line `n` (from 0) is an ERROR
/// when `n % 17 == 3` and `n < 578` (34 lines; the first, line 3, is the payment gateway
/// timeout of order 1007), a WARN when `n % 11 == 6`, else INFO.
pub fn server_log() -> String {
    let mut out = String::new();
    for n in 0..600_u32 {
        let seconds = 8 * 3600 + n * 7;
        let stamp = format!(
            "2026-11-02 {:02}:{:02}:{:02}",
            seconds / 3600,
            (seconds / 60) % 60,
            seconds % 60
        );
        let line = if n % 17 == 3 && n < 578 {
            let k = (n / 17) as usize;
            let message = if n == 3 {
                "payment gateway timeout after 30s (order 1007)".to_owned()
            } else {
                let order = 1001 + (n * 11) % 240;
                format!("{} (order {order})", ERRORS[k % ERRORS.len()])
            };
            format!("{stamp} ERROR {message}")
        } else if n % 11 == 6 {
            format!(
                "{stamp} WARN {}",
                WARNINGS[(n as usize / 11) % WARNINGS.len()]
            )
        } else {
            format!("{stamp} INFO {}", INFO[(n as usize) % INFO.len()])
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}
