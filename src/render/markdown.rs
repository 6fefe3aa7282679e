//! report.md: the same document as report.html, with each chart linked as an
//! SVG file under charts/.

use crate::render::document::{Block, Document};

/// Table cells must not break the row: pipes are escaped, a newline is a line break.
fn cell(text: &str) -> String {
    plain(text)
        .replace('|', "\\|")
        .replace('\r', "")
        .replace('\n', "<br>")
}

/// The document's text is plain (report.html escapes all of it): in Markdown, text from
/// a scenario or a server's stderr must not become HTML (`<script>`), a link or an
/// image. So a `<` that could open a tag, a `]` that could close a link text and `\\` are
/// escaped, except inside code spans
/// (backtick runs closed by a run of the same length), which Markdown shows as is.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '`' {
            let run = rest.len() - rest.trim_start_matches('`').len();
            let fence = &rest[..run];
            let after = &rest[run..];
            // The closing run: the same length, not part of a longer run.
            let close = after
                .match_indices(fence)
                .find(|&(i, _)| !after[..i].ends_with('`') && !after[i + run..].starts_with('`'));
            let end = close.map_or(run, |(i, _)| run + i + run);
            out.push_str(&rest[..end]);
            rest = &rest[end..];
            continue;
        }
        let next = rest[c.len_utf8()..].chars().next();
        match c {
            // Only a `<` that could open a tag, a comment or an autolink is markup;
            // `p99 < 1ms` and `>=` stay as written.
            '<' if next.is_some_and(|n| n.is_ascii_alphabetic() || "/!?".contains(n)) => {
                out.push_str("&lt;")
            }
            // A link or an image needs `](` or `][`: a bracketed interval stays as written.
            ']' if next.is_some_and(|n| n == '(' || n == '[') => out.push_str("\\]"),
            '\\' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// A fence for `text` as a code block: longer than any backtick run inside it, so a
/// scenario's text can never close the block early.
fn fence(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

pub fn render(doc: &Document) -> String {
    let mut md = format!("# {}\n\n", plain(&doc.title));
    if let Some(partial) = &doc.partial {
        md.push_str(&format!("**{}**\n\n", plain(partial)));
    }
    if !doc.alerts.is_empty() {
        md.push_str(&format!("> **{}**\n>\n", doc.status.alert));
        for alert in &doc.alerts {
            md.push_str(&format!("> - {}\n", plain(alert).replace('\n', " ")));
        }
        md.push('\n');
    } else if doc.partial.is_none() {
        md.push_str(&format!("**{}**\n\n", doc.complete_line()));
    }
    if !doc.notes.is_empty() {
        md.push_str("Notes:\n\n");
        for note in &doc.notes {
            md.push_str(&format!("- {}\n", plain(note).replace('\n', " ")));
        }
        md.push('\n');
    }
    for section in &doc.sections {
        md.push_str(&format!(
            "{} {}\n\n",
            "#".repeat(section.level as usize),
            plain(&section.heading)
        ));
        for block in &section.blocks {
            render_block(&mut md, block);
        }
    }
    md
}

fn render_block(md: &mut String, block: &Block) {
    match block {
        Block::Paragraph(text) => md.push_str(&format!("{}\n\n", plain(text))),
        Block::List(items) => {
            for item in items {
                md.push_str(&format!("- {}\n", plain(item)));
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
                plain(&chart.title),
                chart.file,
                plain(&chart.caption)
            ));
        }
        Block::Headline(text) => md.push_str(&format!("**{}**\n\n", plain(text))),
        Block::Answers(answers) => {
            for answer in answers {
                md.push_str(&format!("- {}\n", plain(&answer.sentence)));
            }
            md.push('\n');
        }
        // GitHub's Markdown folds <details> as HTML does; elsewhere it reads through.
        Block::Details { summary, blocks } => {
            md.push_str(&format!(
                "<details><summary>{}</summary>\n\n",
                plain(summary)
            ));
            for block in blocks {
                render_block(md, block);
            }
            md.push_str("</details>\n\n");
        }
        Block::Code(text) => {
            let fence = fence(text);
            md.push_str(&format!("{fence}toml\n{text}\n{fence}\n\n"));
        }
    }
}
