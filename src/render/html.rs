//! report.html: one self-contained page (inline CSS and SVG, no scripts, no
//! network) that reads on a phone, a wide screen and paper.

use crate::render::document::{Block, Document};

const CSS: &str = r#"
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       margin: 0 auto; padding: 0.6rem 1.25rem 3rem; max-width: 1280px; color: #222; background: #fff;
       line-height: 1.45; }
h1 { font-size: 1.4rem; margin: 0.3rem 0 0.6rem; }
h2 { font-size: 1.35rem; margin-top: 2.2rem; border-bottom: 2px solid #ddd; padding-bottom: 0.2rem; }
h3 { font-size: 1.1rem; margin-top: 1.6rem; }
.alert { border: 2px solid #b00020; background: #fff1f1; color: #6d0014; padding: 0.6rem 1rem;
         border-radius: 4px; margin: 1rem 0; }
.alert strong { display: block; margin-bottom: 0.3rem; }
.alert ul { margin: 0.2rem 0 0; padding-left: 1.2rem; }
.notes { border: 1px solid #8a8a8a; background: #f7f7f7; padding: 0.5rem 1rem; border-radius: 4px;
         margin: 1rem 0; }
.notes ul { margin: 0.2rem 0 0; padding-left: 1.2rem; }
.partial { border: 2px dashed #9a6700; background: #fff8e1; color: #4d3400;
           padding: 0.3rem 0.8rem; border-radius: 4px; margin: 0.4rem 0; font-size: 0.9rem; }
.ok { border: 1px solid #1b7f3b; background: #f0fbf3; color: #124d25; padding: 0.5rem 1rem;
      border-radius: 4px; }
nav ul { display: flex; flex-wrap: wrap; gap: 0.1rem 1rem; list-style: none; padding: 0;
         margin: 0.4rem 0; font-size: 0.85rem; }
/* The first screen holds the answer: the lines above it kept short. */
p#status, #notes { font-size: 0.9rem; padding: 0.25rem 0.8rem; margin: 0.4rem 0; }
h2#verdict { margin-top: 0.4rem; font-size: 1.2rem; }
.headline { font-size: 1rem; line-height: 1.4; margin: 0.3rem 0 0.6rem; }
/* Every figure's sentence and picture on the first screen of a 1280 px window: five
   columns there, fewer on narrower ones; the picture at its own size, never shrunk
   below the sentence's type. */
.answers { display: grid; grid-template-columns: repeat(auto-fill, minmax(228px, 1fr));
           gap: 0.45rem 0.9rem; margin: 0.4rem 0 0.8rem; }
.answer { display: flex; flex-direction: column; justify-content: space-between; gap: 0.2rem;
          border-top: 1px solid #ddd; padding-top: 0.25rem; }
.answer p { margin: 0; font-size: 13px; line-height: 1.3; overflow-wrap: anywhere; }
.answer svg { max-width: 100%; height: auto; display: block; }
details { margin: 0.6rem 0; }
summary { cursor: pointer; color: #1b4f9c; }
.table-wrap { overflow-x: auto; margin: 0.6rem 0 1rem; }
table { border-collapse: collapse; font-size: 0.88rem; min-width: 50%; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; vertical-align: top; }
th { background: #f3f3f3; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.flag td { background: #fff4e5; }
figure { margin: 1rem 0 1.6rem; page-break-inside: avoid; break-inside: avoid; }
figure svg { width: 100%; height: auto; display: block; border: 1px solid #e5e5e5; }
figcaption { font-size: 0.88rem; color: #444; margin-top: 0.3rem; }
pre { background: #f6f6f6; padding: 0.6rem; overflow-x: auto; font-size: 0.85rem; }
.swatch { display: inline-block; width: 0.8em; height: 0.8em; border-radius: 2px;
          margin-right: 0.3em; vertical-align: -0.05em; }
@media (max-width: 640px) {
  body { padding: 0.5rem; }
  table { font-size: 0.78rem; }
}
@media print {
  body { max-width: none; padding: 0; font-size: 10pt; }
  nav { display: none; }
  h2 { page-break-after: avoid; break-after: avoid; }
  .table-wrap { overflow: visible; }
  table { font-size: 8pt; }
  figure svg { border: none; }
  tr { page-break-inside: avoid; break-inside: avoid; }
}
"#;

pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

/// How often a partial report reloads itself in the browser, in seconds.
pub const PARTIAL_REFRESH_S: u32 = 10;

pub fn render(doc: &Document) -> String {
    let mut html = String::new();
    html.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    if doc.partial.is_some() {
        // No script: the page is reloaded by the browser, and the final report, once
        // written in its place, has no such line.
        html.push_str(&format!(
            "<meta http-equiv=\"refresh\" content=\"{PARTIAL_REFRESH_S}\">\n"
        ));
    }
    html.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    html.push_str(&format!("<title>{}</title>\n", escape(&doc.title)));
    html.push_str(&format!("<style>{CSS}</style>\n</head>\n<body>\n"));
    html.push_str(&format!("<h1>{}</h1>\n", escape(&doc.title)));
    if let Some(partial) = &doc.partial {
        html.push_str(&format!(
            "<p class=\"partial\" id=\"partial\">{} This page reloads itself every \
             {PARTIAL_REFRESH_S} s.</p>\n",
            escape(partial)
        ));
    }
    if !doc.alerts.is_empty() {
        html.push_str(&format!(
            "<div class=\"alert\" id=\"status\" role=\"alert\"><strong>{}</strong><ul>\n",
            escape(doc.status.alert)
        ));
        for alert in &doc.alerts {
            html.push_str(&format!("<li>{}</li>\n", escape(alert)));
        }
        html.push_str("</ul></div>\n");
    } else if doc.partial.is_none() {
        // A run that goes on has its status in the partial line above.
        let class = if doc.caveat.is_some() { "notes" } else { "ok" };
        html.push_str(&format!(
            "<p class=\"{class}\" id=\"status\">{}</p>\n",
            escape(&doc.complete_line())
        ));
    }
    if !doc.notes.is_empty() {
        // One click away: facts worth knowing, not the answer.
        html.push_str(&format!(
            "<details class=\"notes\" id=\"notes\"><summary>Notes ({})</summary><ul>\n",
            doc.notes.len()
        ));
        for note in &doc.notes {
            html.push_str(&format!("<li>{}</li>\n", escape(note)));
        }
        html.push_str("</ul></details>\n");
    }
    html.push_str("<nav><ul>\n");
    for section in doc.sections.iter().filter(|s| s.level == 2) {
        html.push_str(&format!(
            "<li><a href=\"#{}\">{}</a></li>\n",
            section.id,
            escape(&section.heading)
        ));
    }
    html.push_str("</ul></nav>\n");
    for section in &doc.sections {
        html.push_str(&format!(
            "<h{l} id=\"{}\">{}</h{l}>\n",
            section.id,
            escape(&section.heading),
            l = section.level
        ));
        for block in &section.blocks {
            render_block(&mut html, block);
        }
    }
    html.push_str("</body>\n</html>\n");
    html
}

fn render_block(html: &mut String, block: &Block) {
    match block {
        Block::Paragraph(text) => html.push_str(&format!("<p>{}</p>\n", escape(text))),
        Block::List(items) => {
            html.push_str("<ul>\n");
            for item in items {
                html.push_str(&format!("<li>{}</li>\n", escape(item)));
            }
            html.push_str("</ul>\n");
        }
        Block::Table(table) => {
            html.push_str("<div class=\"table-wrap\"><table>\n<thead><tr>");
            for header in &table.headers {
                html.push_str(&format!("<th scope=\"col\">{}</th>", escape(header)));
            }
            html.push_str("</tr></thead>\n<tbody>\n");
            for (i, row) in table.rows.iter().enumerate() {
                let flagged = table.flagged.get(i).copied().unwrap_or(false);
                html.push_str(if flagged {
                    "<tr class=\"flag\">"
                } else {
                    "<tr>"
                });
                for (j, cell) in row.iter().enumerate() {
                    let numeric = table.numeric.get(j).copied().unwrap_or(false);
                    html.push_str(&format!(
                        "<td{}>{}</td>",
                        if numeric { " class=\"num\"" } else { "" },
                        escape(cell).replace('\n', "<br>")
                    ));
                }
                html.push_str("</tr>\n");
            }
            html.push_str("</tbody></table></div>\n");
        }
        Block::Chart(chart) => {
            html.push_str(&format!("<figure id=\"chart-{}\">\n", chart.file));
            // Drop the XML prolog: it is not allowed inside an HTML document.
            let svg = match chart.svg.find("<svg") {
                Some(start) => &chart.svg[start..],
                None => chart.svg.as_str(),
            };
            html.push_str(svg);
            html.push_str(&format!(
                "\n<figcaption>{}</figcaption>\n</figure>\n",
                escape(&chart.caption)
            ));
        }
        Block::Code(text) => html.push_str(&format!("<pre>{}</pre>\n", escape(text))),
        Block::Headline(text) => html.push_str(&format!(
            "<p class=\"headline\" id=\"headline\">{}</p>\n",
            escape(text)
        )),
        Block::Answers(answers) => {
            html.push_str("<div class=\"answers\">\n");
            for answer in answers {
                html.push_str(&format!(
                    "<div class=\"answer\"><p>{}</p>{}</div>\n",
                    escape(&answer.sentence),
                    answer.svg
                ));
            }
            html.push_str("</div>\n");
        }
        Block::Details { summary, blocks } => {
            html.push_str(&format!(
                "<details><summary>{}</summary>\n",
                escape(summary)
            ));
            for block in blocks {
                render_block(html, block);
            }
            html.push_str("</details>\n");
        }
    }
}
