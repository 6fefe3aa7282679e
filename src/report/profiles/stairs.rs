//! A staircase's profiled stairs (`run --profile` on a staircase): each stair recorded
//! under perf on the CPU clock from just before its batch started to its window's end,
//! so each folded stack weighs its nanoseconds of CPU. One table across the stairs of
//! each side's CPU by layer (growth read down a column), and the top profiled stair's
//! flame graphs; every stair's graphs are in its own folder.

use std::fs;
use std::path::PathBuf;

use super::layers::{self, Layer};
use crate::render::document::{Block, Chart, Table};
use crate::results::files::{
    flame_path, folded_path, PROFILED_LOAD, PROFILED_SERVER, PROFILE_NOTES,
};
use crate::results::reader::{Results, Row};

/// The stair rows whose folders hold a recording (its folded stacks or its notes), in
/// results.csv's order.
pub fn profiled(results: &Results) -> Vec<&Row> {
    results
        .rows
        .iter()
        .filter(|r| r.stair.is_some() && !r.step.ends_with("-hold"))
        .filter(|r| {
            let dir = r.step_dir(&results.dir);
            [PROFILED_SERVER, PROFILED_LOAD]
                .iter()
                .any(|side| folded_path(&dir, side).is_file())
                || dir.join(PROFILE_NOTES).is_file()
        })
        .collect()
}

/// What could not be profiled, per stair, from its notes file.
pub fn missing(results: &Results, stairs: &[&Row]) -> Vec<String> {
    let mut notes = Vec::new();
    for row in stairs {
        let Ok(text) = fs::read_to_string(row.step_dir(&results.dir).join(PROFILE_NOTES)) else {
            continue;
        };
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            notes.push(format!("{} at stair {}: {line}", row.model, row.step));
        }
    }
    notes
}

/// The blocks of the profiled stairs: what the recording covers, the table, and the top
/// profiled stair's server graph per model.
pub fn blocks(results: &Results, stairs: &[&Row]) -> Vec<Block> {
    let mut blocks = vec![
        Block::Paragraph(
            "Each stair of the staircase ran under perf (every CPU, kernel stacks, 199 Hz on \
             the CPU clock) from just before its batch's load started to the end of its \
             window: the batch's connections being set up, then the trickle of every live \
             connection while the stair was measured. CPU in ms by layer (share of the \
             side's samples); the server is its process tree, the load every live \
             generator. Reading the layers: docs/report.md, \"Where the CPU goes\"."
                .into(),
        ),
        Block::Table(table(results, stairs)),
    ];
    let mut models: Vec<&str> = stairs.iter().map(|r| r.model.as_str()).collect();
    models.dedup();
    for model in models {
        let Some(top) = stairs.iter().rev().find(|r| {
            r.model == model && folded_path(&r.step_dir(&results.dir), PROFILED_SERVER).is_file()
        }) else {
            continue;
        };
        let dir = top.step_dir(&results.dir);
        let Ok(svg) = fs::read_to_string(flame_path(&dir, PROFILED_SERVER)) else {
            continue;
        };
        let rel = |p: PathBuf| {
            p.strip_prefix(&results.dir)
                .map_or(p.clone(), |r| r.to_path_buf())
                .display()
                .to_string()
        };
        blocks.push(Block::Chart(Chart {
            file: format!("flame-{}-{}", top.model, top.step),
            title: format!(
                "{} at stair {} ({}): the server's flame graph",
                top.model,
                top.stair.unwrap_or_default(),
                top.step
            ),
            svg,
            caption: format!(
                "The highest stair profiled. Kernel frames end in _[k]. The load \
                 generators' graph: {}; every other stair's graphs are in its folder.",
                rel(flame_path(&dir, PROFILED_LOAD))
            ),
        }));
    }
    blocks
}

/// One row per stair and side: its CPU sampled, then each layer's.
fn table(results: &Results, stairs: &[&Row]) -> Table {
    let mut headers: Vec<String> = ["model", "stair", "connections", "side", "CPU ms"]
        .map(String::from)
        .to_vec();
    headers.extend(Layer::ALL.iter().map(|l| l.name().to_string()));
    let mut rows = Vec::new();
    for row in stairs {
        let dir = row.step_dir(&results.dir);
        for side in [PROFILED_SERVER, PROFILED_LOAD] {
            let mut cells = vec![
                row.model.clone(),
                row.stair.map_or(String::new(), |s| s.to_string()),
                row.connections.to_string(),
                side.to_string(),
            ];
            let split = fs::read_to_string(folded_path(&dir, side))
                .ok()
                .and_then(|text| layers::shares(&text));
            match split {
                Some((shares, ns)) => {
                    let ms = ns / 1e6;
                    cells.push(format!("{ms:.0}"));
                    cells.extend(
                        shares
                            .iter()
                            .map(|s| format!("{:.0} ({:.0} %)", s * ms, s * 100.0)),
                    );
                }
                None => {
                    cells.push("no samples".into());
                    cells.extend(Layer::ALL.iter().map(|_| String::new()));
                }
            }
            rows.push(cells);
        }
    }
    Table {
        numeric: (0..headers.len()).map(|i| i != 0 && i != 3).collect(),
        headers,
        flagged: vec![false; rows.len()],
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Manifest;

    #[test]
    fn each_profiled_stair_gives_a_row_per_side_in_ms_by_layer() {
        let dir = tempfile::tempdir().unwrap();
        let stair = |n: u32, step: &str| Row {
            model: "epoll".into(),
            step: step.into(),
            repetition: 1,
            connections: 50 * u64::from(n),
            stair: Some(n),
            ..Row::default()
        };
        let rows = vec![
            stair(1, "c50"),
            stair(2, "c100"),
            stair(2, "c100-hold"),
            stair(3, "c150"),
        ];
        // Stair 1: both sides sampled; stair 2: only notes; stair 3: nothing recorded.
        let one = rows[0].step_dir(dir.path());
        fs::create_dir_all(&one).unwrap();
        let user = "epoll-worker-0;main;echo";
        let tcp = "epoll-worker-0;__send;tcp_sendmsg_[k]";
        fs::write(
            folded_path(&one, PROFILED_SERVER),
            format!("{user} 3000000\n{tcp} 1000000\n"),
        )
        .unwrap();
        fs::write(
            folded_path(&one, PROFILED_LOAD),
            format!("{user} 2000000\n"),
        )
        .unwrap();
        let two = rows[1].step_dir(dir.path());
        fs::create_dir_all(&two).unwrap();
        fs::write(
            two.join(PROFILE_NOTES),
            "server: perf recorded no samples\n",
        )
        .unwrap();
        let results = Results {
            dir: dir.path().to_path_buf(),
            manifest: Manifest::default(),
            rows,
            profiled: Vec::new(),
            columns: Vec::new(),
            warnings: Vec::new(),
        };
        let found = profiled(&results);
        let steps: Vec<&str> = found.iter().map(|r| r.step.as_str()).collect();
        assert_eq!(steps, ["c50", "c100"]);
        assert_eq!(
            missing(&results, &found),
            ["epoll at stair c100: server: perf recorded no samples"]
        );
        let table = table(&results, &found);
        assert_eq!(table.rows.len(), 4);
        assert_eq!(
            table.rows[0][..8],
            ["epoll", "1", "50", "server", "4", "3 (75 %)", "0 (0 %)", "1 (25 %)"]
        );
        assert_eq!(table.rows[1][3..6], ["load", "2", "2 (100 %)"]);
        assert_eq!(table.rows[2][3..5], ["server", "no samples"]);
    }
}
