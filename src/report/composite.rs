//! The report of a scenario made of parts (`classic`): each part's results are in
//! the folder of its name, with its own report; this one judges every claim from
//! the parts' rows and links to their reports.

use std::path::Path;

use super::build;
use crate::claims::{self, Claim};
use crate::render::document::{self, Block, Document, Section};
use crate::results::files::MANIFEST;
use crate::results::reader::{self, Results};
use crate::results::Manifest;

/// One part as the composite report sees it: its results, or why there are none.
fn load_part(dir: &Path, part: &str, manifest: &Manifest) -> Result<Results, String> {
    if let Some(error) = manifest.part_errors.get(part) {
        return Err(error.clone());
    }
    if !dir.join(part).join(MANIFEST).exists() {
        return Err(if manifest.interrupted {
            "the run was interrupted before this part started".into()
        } else {
            "this part left no results".into()
        });
    }
    reader::load(&dir.join(part)).map_err(|e| format!("its results cannot be read: {e:#}"))
}

/// What the composite report says of its parts: the claims judged from their rows, each
/// claim's link to its part's report, and one line per part.
struct Parts {
    claims_judged: Vec<Claim>,
    links: Vec<(usize, String)>,
    part_lines: Vec<String>,
    /// The level each part that could add repetitions judged its claims at.
    looks_notes: Vec<String>,
}

fn read_parts(results: &Results) -> Parts {
    let mut claims_judged: Vec<Claim> = Vec::new();
    let mut links = Vec::new();
    let mut part_lines = Vec::new();
    let mut looks_notes = Vec::new();
    for part in &results.manifest.parts {
        let loaded = load_part(&results.dir, part, &results.manifest);
        if let Some(note) = loaded
            .as_ref()
            .ok()
            .and_then(|r| build::looks_note(&r.manifest))
        {
            looks_notes.push(format!("{part}: {note}"));
        }
        match &loaded {
            Ok(r) => part_lines.push(format!(
                "{part}: {} rows, {}; report {part}/report.html ({part}/report.md)",
                r.rows.len(),
                if r.manifest.interrupted {
                    "interrupted"
                } else {
                    "complete"
                }
            )),
            Err(why) => part_lines.push(format!("{part}: not run: {why}")),
        }
        // A claim another part already judged keeps that verdict.
        for number in claims::claims_of(part) {
            if claims_judged.iter().any(|c| c.number == number) {
                continue;
            }
            let claim = match &loaded {
                Ok(r) => super::judge_claim(number, &r.rows, &r.manifest),
                Err(why) => Claim::not_run(number, why.clone()),
            };
            links.push((number, format!("{part}/report.html ({part}/report.md)")));
            claims_judged.push(claim);
        }
    }
    claims_judged.sort_by_key(|c| c.number);
    Parts {
        claims_judged,
        links,
        part_lines,
        looks_notes,
    }
}

pub fn document(results: &Results) -> Document {
    let Parts {
        claims_judged,
        links,
        part_lines,
        looks_notes,
    } = read_parts(results);
    let mut sections = vec![build::setup_section(results)];
    sections.extend(claims::section(&claims_judged, |n| {
        links.iter().find(|(m, _)| *m == n).map(|(_, l)| l.clone())
    }));
    sections.push(Section {
        heading: "Parts".into(),
        level: 2,
        id: "parts".into(),
        blocks: vec![
            Block::Paragraph(
                "Each part ran into the folder of its name, with its own results.csv, \
                 charts, verdict and report:"
                    .into(),
            ),
            Block::List(part_lines),
        ],
    });
    let mut alerts: Vec<String> = build::alerts(results, false)
        .into_iter()
        .filter(|a| !a.starts_with("results.csv has no rows"))
        .collect();
    for c in claims_judged
        .iter()
        .filter(|c| c.verdict == claims::ClaimVerdict::NotRun)
    {
        alerts.push(format!("Claim {} was not run: {}", c.number, c.why));
    }
    Document {
        title: format!(
            "echolab report: {}",
            results
                .manifest
                .scenario_name
                .as_deref()
                .unwrap_or("unnamed scenario")
        ),
        status: document::RUN_STATUS,
        alerts,
        notes: build::notes(results)
            .into_iter()
            .chain(looks_notes)
            .collect(),
        caveat: build::caveat(results),
        partial: None,
        sections,
    }
}
