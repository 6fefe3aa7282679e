//! The run's progress over every row it will write: an indicatif bar on a terminal,
//! plain lines on stderr otherwise, nothing when quiet.

use std::time::Instant;

use crate::results::{Row, Status};
use crate::units::trim_float;

/// Progress over the whole experiment: an indicatif bar on a terminal, plain lines otherwise.
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    /// The rows the run will write.
    pub total: u64,
    /// The rows finished so far.
    pub done: u64,
    started: Instant,
    quiet: bool,
}

impl Progress {
    pub fn new(total: u64, bar: bool, quiet: bool) -> Progress {
        let bar = (bar && !quiet).then(|| {
            let bar = indicatif::ProgressBar::new(total);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:30}] {pos}/{len} {msg} (ETA {eta})",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            bar
        });
        Progress {
            bar,
            total,
            done: 0,
            started: Instant::now(),
            quiet,
        }
    }

    fn eta(&self) -> String {
        if self.done == 0 {
            return "?".into();
        }
        let per = self.started.elapsed().as_secs_f64() / self.done as f64;
        let left = (per * (self.total - self.done) as f64) as u64;
        format!("{}:{:02}", left / 60, left % 60)
    }

    pub fn starting(&self, what: &str) {
        self.starting_nth(self.done + 1, what);
    }

    /// Says step `nth` of the total is starting (a staircase's stairs start before any
    /// of its rows is finished).
    pub fn starting_nth(&self, nth: u64, what: &str) {
        match &self.bar {
            Some(bar) => bar.set_message(what.to_string()),
            None if !self.quiet => crate::errln!("[{nth}/{}] {what} ...", self.total),
            None => {}
        }
    }

    pub fn finished(&mut self, what: &str, row: &Row) {
        self.done += 1;
        let verdict = match row.status {
            Status::Ok => format!(
                "ok, {} req/s, p99 {} us",
                row.throughput_rps
                    .map_or("?".into(), |t| trim_float(t.round())),
                row.p99_us.map_or("?".into(), |t| trim_float(t.round()))
            ),
            other => format!("{other}: {}", row.failure_reason),
        };
        match &self.bar {
            Some(bar) => {
                bar.println(format!("{what}: {verdict}"));
                bar.inc(1);
            }
            None if !self.quiet => crate::errln!(
                "[{}/{}] {what}: {verdict} (elapsed {}s, ETA {})",
                self.done,
                self.total,
                self.started.elapsed().as_secs(),
                self.eta()
            ),
            None => {}
        }
    }

    pub fn close(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
