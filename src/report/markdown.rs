//! report.md: the same document as report.html, with each chart linked as an
//! SVG file under charts/.

use super::document::{Block, Document};

/// Table cells must not break the row: pipes are escaped, newlines flattened.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

pub fn render(doc: &Document) -> String {
    let mut md = format!("# {}\n\n", doc.title);
    if doc.alerts.is_empty() {
        md.push_str(&format!("**{}**\n\n", doc.complete_line()));
    } else {
        md.push_str("> **This run is not complete or has failures.**\n>\n");
        for alert in &doc.alerts {
            md.push_str(&format!("> - {}\n", alert.replace('\n', " ")));
        }
        md.push('\n');
    }
    if !doc.notes.is_empty() {
        md.push_str("Notes:\n\n");
        for note in &doc.notes {
            md.push_str(&format!("- {}\n", note.replace('\n', " ")));
        }
        md.push('\n');
    }
    for section in &doc.sections {
        md.push_str(&format!(
            "{} {}\n\n",
            "#".repeat(section.level as usize),
            section.heading
        ));
        for block in &section.blocks {
            match block {
                Block::Paragraph(text) => md.push_str(&format!("{text}\n\n")),
                Block::List(items) => {
                    for item in items {
                        md.push_str(&format!("- {item}\n"));
                    }
                    md.push('\n');
                }
                Block::Table(table) => {
                    md.push_str(&format!(
                        "| {} |\n",
                        table
                            .headers
                            .iter()
                            .map(|h| cell(h))
                            .collect::<Vec<_>>()
                            .join(" | ")
                    ));
                    let rule: Vec<&str> = (0..table.headers.len())
                        .map(|j| {
                            if table.numeric.get(j).copied().unwrap_or(false) {
                                "---:"
                            } else {
                                "---"
                            }
                        })
                        .collect();
                    md.push_str(&format!("| {} |\n", rule.join(" | ")));
                    for row in &table.rows {
                        md.push_str(&format!(
                            "| {} |\n",
                            row.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | ")
                        ));
                    }
                    md.push('\n');
                }
                Block::Chart(chart) => {
                    md.push_str(&format!(
                        "![{}](charts/{}.svg)\n\n*{}*\n\n",
                        chart.title, chart.file, chart.caption
                    ));
                }
                Block::Code(text) => md.push_str(&format!("```toml\n{text}\n```\n\n")),
            }
        }
    }
    md
}
