//! Rendering: one format-neutral document (`document`) written as HTML and Markdown,
//! its SVG charts and flame graphs, and how every number is written (`format`). It knows nothing of
//! results or verdicts; the report and the comparison compose what it draws.

pub mod charts;
pub mod document;
pub mod flame;
pub mod format;
pub mod html;
pub mod markdown;
