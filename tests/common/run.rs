//! `echolab run`, `echolab load` and other commands to their end within bounded time, and
//! the results.csv a run wrote.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::*;

/// The longest one `echolab run` of a test may take: past it the run is killed and the
/// test fails, so a run that never ends cannot hang the test.
pub const RUN_LIMIT: Duration = Duration::from_secs(300);

/// The longest one `echolab load` of a test may take (each asks for seconds at most);
/// past it the load is killed and the test fails.
pub const LOAD_LIMIT: Duration = Duration::from_secs(120);

/// The longest any other command of a test may take: an echolab report, merge or
/// refusal, a server that must exit at once, a script that reads a run's output.
pub const COMMAND_LIMIT: Duration = Duration::from_secs(60);

/// The arguments of a run that writes its results and no report, without progress lines.
pub const QUIET_NO_REPORT: &[&str] = &["--no-report", "--quiet"];

/// Writes `text` as DIR/scenario.toml and returns its path.
pub fn write_scenario(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("scenario.toml");
    std::fs::write(&path, text).expect("write scenario.toml");
    path
}

/// `echolab run ARGS` from the checkout (command paths in scenarios are relative to
/// it), to its end (at most [`RUN_LIMIT`]) with stdout and stderr captured. The caller
/// checks how it exited.
pub fn echolab_run(args: &[&str]) -> Output {
    let mut command = Command::new(BIN);
    command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("run")
        .args(args);
    output_within(&mut command, RUN_LIMIT)
}

/// `echolab run SCENARIO --out OUT --no-report --quiet` from the checkout, started in the
/// background with its stdout and stderr piped (for [`finish_within`]); the caller ends it.
pub fn start_run(scenario: &Path, out: &Path) -> Child {
    Command::new(BIN)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("run")
        .arg(scenario)
        .arg("--out")
        .arg(out)
        .args(QUIET_NO_REPORT)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start echolab run: {e}"))
}

/// Waits until `path` exists while `child` runs; fails when the child ends first, or
/// after [`COMMAND_LIMIT`].
pub fn wait_for_file(child: &mut Child, path: &Path) {
    let deadline = Instant::now() + COMMAND_LIMIT;
    while !path.exists() {
        assert!(
            child.try_wait().expect("try_wait").is_none(),
            "the run ended before {} appeared",
            path.display()
        );
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `echolab load ARGS` to its end (at most [`LOAD_LIMIT`]) with stdout and stderr
/// captured. The caller checks how it exited.
pub fn load_within(args: &[&str]) -> Output {
    output_within(Command::new(BIN).arg("load").args(args), LOAD_LIMIT)
}

/// `echolab run SCENARIO --out OUT EXTRA...` (see [`echolab_run`]); the caller checks
/// how it exited.
pub fn run_scenario(scenario: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        scenario.to_str().expect("a UTF-8 scenario path"),
        "--out",
        out.to_str().expect("a UTF-8 output path"),
    ];
    args.extend_from_slice(extra);
    echolab_run(&args)
}

/// [`run_scenario`], failing the test with the run's stdout and stderr unless it exits 0;
/// returns the rows of the results.csv it wrote.
pub fn run_scenario_ok(scenario: &Path, out: &Path, extra: &[&str]) -> Vec<ResultsRow> {
    let output = run_scenario(scenario, out, extra);
    assert!(
        output.status.success(),
        "echolab run {} --out {} {extra:?}: {}\n{}\n{}",
        scenario.display(),
        out.display(),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    results_rows(out)
}

/// Runs `command` to its end with stdout and stderr captured, like
/// [`Command::output`], but kills it and fails the test after `limit`.
pub fn output_within(command: &mut Command, limit: Duration) -> Output {
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
    finish_within(child, &format!("{command:?}"), limit)
}

/// Waits for `child` (`what` names it) to exit and returns what it wrote to the stdout
/// and stderr it was given as pipes (empty for the others). Fails the test, with the
/// stderr so far, when it has not exited within `limit` (it is killed) or a process it
/// started still holds its pipes then. The pipes are read while it runs, so a child that
/// writes more than a pipe holds never blocks on them.
pub fn finish_within(mut child: Child, what: &str, limit: Duration) -> Output {
    let deadline = Instant::now() + limit;
    let stdout_pipe = read_in_background(child.stdout.take());
    let stderr_pipe = read_in_background(child.stderr.take());
    let status = wait_timeout(&mut child, limit);
    // Once it is killed, echolab's own children die with it (PR_SET_PDEATHSIG) and
    // the pipes close: a second is enough for its last words.
    let read_until = match status {
        Some(_) => deadline,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            Instant::now() + Duration::from_secs(1)
        }
    };
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let closed = read_until_closed(&stdout_pipe, &mut stdout, read_until)
        & read_until_closed(&stderr_pipe, &mut stderr, read_until);
    let said = || String::from_utf8_lossy(&stderr).into_owned();
    match status {
        Some(status) if closed => Output {
            status,
            stdout,
            stderr,
        },
        Some(status) => panic!(
            "{what} exited ({status}), but after {limit:?} a process it started still holds \
             its stdout or stderr; its stderr: {}",
            said()
        ),
        None => panic!(
            "{what} did not finish within {limit:?} and was killed; its stderr: {}",
            said()
        ),
    }
}

/// Reads `pipe` on a thread of its own, handing over each piece as it comes; the
/// channel closes at the pipe's end (at once for no pipe).
fn read_in_background(pipe: Option<impl Read + Send + 'static>) -> Receiver<Vec<u8>> {
    let (send, receive) = std::sync::mpsc::channel();
    if let Some(mut pipe) = pipe {
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            while let Ok(n @ 1..) = pipe.read(&mut buf) {
                if send.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
    }
    receive
}

/// Appends what `pipe` brings to `into` until the pipe's end (true) or `deadline`
/// (false; what had come by then is appended).
fn read_until_closed(pipe: &Receiver<Vec<u8>>, into: &mut Vec<u8>, deadline: Instant) -> bool {
    loop {
        match pipe.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(piece) => into.extend_from_slice(&piece),
            Err(RecvTimeoutError::Disconnected) => return true,
            Err(RecvTimeoutError::Timeout) => return false,
        }
    }
}

/// A results.csv row: column name to cell.
pub type ResultsRow = std::collections::HashMap<String, String>;

/// The rows of `out`/results.csv by column name, after checking its header is
/// the crate's own.
pub fn results_rows(out: &Path) -> Vec<ResultsRow> {
    let (header, rows) = read_results_csv(&out.join("results.csv"));
    assert_eq!(header, echolab::results::RESULTS_HEADER);
    rows
}

/// The header and the rows by column name of the results.csv at `path`, whatever its
/// columns (a stored fixture may predate some).
pub fn read_results_csv(path: &Path) -> (Vec<String>, Vec<ResultsRow>) {
    let mut reader =
        csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let rows = reader
        .records()
        .map(|r| {
            header
                .iter()
                .cloned()
                .zip(r.unwrap().iter().map(String::from))
                .collect()
        })
        .collect();
    (header, rows)
}

/// Sets the cells `changes` (column name, value) in every row of the results.csv at
/// `path` that `pick` selects, seeing each row by column name; fails when it selects no
/// row or names a column the header lacks. Returns the file lines of the rows changed
/// (the header is line 1).
pub fn edit_results_csv(
    path: &Path,
    pick: impl Fn(&ResultsRow) -> bool,
    changes: &[(&str, &str)],
) -> Vec<u64> {
    let mut reader =
        csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let index = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("{} has no column {name}", path.display()))
    };
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(&header).unwrap();
    let mut changed = Vec::new();
    for record in reader.records() {
        let record = record.unwrap();
        let mut cells: Vec<String> = record.iter().map(String::from).collect();
        let row: ResultsRow = header.iter().cloned().zip(cells.iter().cloned()).collect();
        if pick(&row) {
            for (name, value) in changes {
                cells[index(name)] = value.to_string();
            }
            changed.push(record.position().expect("a record's position").line());
        }
        writer.write_record(&cells).unwrap();
    }
    assert!(
        !changed.is_empty(),
        "no row of {} is the one to edit",
        path.display()
    );
    std::fs::write(path, writer.into_inner().unwrap()).unwrap();
    changed
}

/// The cells `columns` of each row, in order: what a test compares with its expected
/// table. Fails naming the column when a row lacks it.
pub fn cells<'a, const N: usize>(rows: &'a [ResultsRow], columns: [&str; N]) -> Vec<[&'a str; N]> {
    rows.iter()
        .map(|row| {
            columns.map(|column| {
                row.get(column)
                    .unwrap_or_else(|| panic!("no column {column} in {row:?}"))
                    .as_str()
            })
        })
        .collect()
}

/// The cell `column` of a results.csv row as a number; fails naming the column and the
/// row when it is not one (e.g. empty).
pub fn number(row: &ResultsRow, column: &str) -> f64 {
    let cell = row
        .get(column)
        .unwrap_or_else(|| panic!("no column {column} in {row:?}"));
    cell.parse()
        .unwrap_or_else(|_| panic!("{column} is {cell:?}, not a number: {row:?}"))
}

/// A fresh output directory `name` for this test binary, in the temp dir (removed first).
pub fn out_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "echolab-test-{}-{}-{name}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The JSON file at `path` (a summary, a manifest); fails naming the file.
pub fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Copies the directory tree `from` to `to` (e.g. a results fixture a test then changes).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Runs `echolab ARGS` to its end (at most [`COMMAND_LIMIT`]) with stdout and stderr
/// captured.
pub fn echolab(args: &[&str]) -> Output {
    output_within(Command::new(BIN).args(args), COMMAND_LIMIT)
}

/// `echolab report DIR`, which must succeed; returns the report.md it wrote.
pub fn report_md(dir: &Path) -> String {
    let out = output_within(Command::new(BIN).arg("report").arg(dir), COMMAND_LIMIT);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    std::fs::read_to_string(dir.join("report.md"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join("report.md").display()))
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
