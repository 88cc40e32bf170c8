//! Instructions per run of each parser and its baseline, counted by valgrind's callgrind on
//! the cases of `parsers.rs`. Instruction counts do not move with a busy neighbour, so their
//! ratio is the steady companion of the wall-clock figures (docs/PERFORMANCE.md).
//!
//! Run as `cargo bench -p sluice-ingest --bench instructions`. The bench starts itself once
//! per case and side under callgrind, with no run and with `RUNS` runs, and reports the
//! difference divided by `RUNS`: start-up and input loading cancel out. Without valgrind it
//! says so and stops.

mod cases;

use std::process::Command;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const RUNS: u64 = 10;

/// Runs one case's side `runs` times (the process callgrind watches).
fn workload(name: &str, side: &str, runs: u64) {
    let options = cases::options();
    let case = cases::cases().into_iter().find(|case| case.name == name).expect("known case");
    let mut total = 0;
    for _ in 0..runs {
        total += match (side, case.baseline) {
            ("sluice", _) => case.sluice(&options),
            (_, Some((_, baseline))) => baseline(&case.body),
            _ => panic!("no baseline for {name}"),
        };
    }
    std::hint::black_box(total);
}

/// Instructions callgrind counted for one workload process.
fn instructions(name: &str, side: &str, runs: u64) -> u64 {
    let exe = std::env::current_exe().expect("own path");
    let output = Command::new("valgrind")
        .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(exe)
        .args(["--workload", name, side, &runs.to_string()])
        .output()
        .expect("valgrind runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report = String::from_utf8_lossy(&output.stderr);
    let line = report.lines().find(|line| line.contains("Collected :")).expect("callgrind's total");
    line.rsplit(' ').next().and_then(|count| count.trim().parse().ok()).expect("a count")
}

fn per_run(name: &str, side: &str) -> u64 {
    (instructions(name, side, RUNS) - instructions(name, side, 0)) / RUNS
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|arg| arg == "--workload") {
        let runs = args[at + 3].parse().expect("a number of runs");
        return workload(&args[at + 1], &args[at + 2], runs);
    }
    if Command::new("valgrind").arg("--version").output().is_err() {
        println!("instructions: skipped, valgrind is not installed (Debian: apt install valgrind)");
        return;
    }
    println!("{:<16} {:>14} {:>14} {:>10} {:>12}", "case", "sluice", "baseline", "ratio", "instr/byte");
    for case in cases::cases() {
        let sluice = per_run(case.name, "sluice");
        let per_byte = sluice as f64 / case.body.len() as f64;
        match case.baseline {
            Some((baseline_name, _)) => {
                let baseline = per_run(case.name, baseline_name);
                // Baseline instructions over sluice's: the share of the baseline's rate sluice reaches.
                let ratio = baseline as f64 / sluice as f64;
                println!("{:<16} {sluice:>14} {baseline:>14} {ratio:>10.3} {per_byte:>12.2}", case.name);
            }
            None => println!("{:<16} {sluice:>14} {:>14} {:>10} {per_byte:>12.2}", case.name, "-", "-"),
        }
    }
}
