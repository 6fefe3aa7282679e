//! Flame graphs of folded stacks (inferno's self-contained, searchable SVG): one
//! repetition's, and the difference between two.

use std::fs;
use std::io::{BufReader, Write as _};
use std::path::Path;

/// The flame graph of folded stacks: inferno's self-contained, searchable SVG.
pub fn draw(folded: &Path, svg: &Path, title: &str) -> Result<(), String> {
    let mut options = inferno::flamegraph::Options::default();
    options.title = title.to_string();
    options.count_name = "samples".into();
    let file = fs::File::create(svg).map_err(|e| format!("{}: {e}", svg.display()))?;
    let mut writer = std::io::BufWriter::new(file);
    inferno::flamegraph::from_files(&mut options, &[folded.to_path_buf()], &mut writer)
        .map_err(|e| e.to_string())?;
    writer.flush().map_err(|e| e.to_string())
}

/// The differential flame graph of `after` against `before` (inferno's, both
/// normalised to the same total): `after`'s stacks, red where it spends more of its
/// samples than `before`, blue where less.
pub fn draw_difference(before: &Path, after: &Path, title: &str) -> Result<String, String> {
    let open = |p: &Path| {
        fs::File::open(p)
            .map(BufReader::new)
            .map_err(|e| format!("{}: {e}", p.display()))
    };
    let mut diff = Vec::new();
    let options = inferno::differential::Options {
        normalize: true,
        ..Default::default()
    };
    inferno::differential::from_readers(options, open(before)?, open(after)?, &mut diff)
        .map_err(|e| e.to_string())?;
    let mut flame = inferno::flamegraph::Options::default();
    flame.title = title.to_string();
    flame.count_name = "samples".into();
    let mut svg = Vec::new();
    inferno::flamegraph::from_reader(&mut flame, &diff[..], &mut svg).map_err(|e| e.to_string())?;
    String::from_utf8(svg).map_err(|e| e.to_string())
}
