//! The spread of a step over its connections and its seconds, from load's files.
//!
//! Response time by the order the connections joined (004: "a linear model for most
//! of the clients but exponentially increases as we get to the user specified client
//! number"): each connection's mean response time from load's connections.csv, the
//! connections ordered by when they opened, and the mean over the last tenth to open
//! beside the tenth before it. Linear growth over the order makes the last tenth at
//! most about 1.12 times the ninth; a jump at the end makes it far more.

use std::path::{Path, PathBuf};

use crate::results::files::{CONNECTIONS, TIMELINE};
use crate::results::Row;

/// Fewer connections than this say nothing of a tenth.
const MIN_CONNECTIONS: usize = 20;

/// The connections.csv files of a step's load: the merged one, else each host's.
fn files(load_dir: &Path) -> Vec<PathBuf> {
    let merged = load_dir.join(CONNECTIONS);
    if merged.is_file() {
        return vec![merged];
    }
    let mut each: Vec<PathBuf> = std::fs::read_dir(load_dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join(CONNECTIONS))
        .filter(|p| p.is_file())
        .collect();
    each.sort();
    each
}

/// (opened_unix, conn_id, mean_response_us) of every first attempt that completed a
/// request, in the order they opened.
fn joined(load_dir: &Path) -> Vec<(f64, u64, f64)> {
    let mut out = Vec::new();
    for file in files(load_dir) {
        let Ok(mut reader) = csv::Reader::from_path(&file) else {
            continue;
        };
        let Ok(header) = reader.headers().cloned() else {
            continue;
        };
        let at = |name: &str| header.iter().position(|h| h == name);
        let (Some(opened), Some(id), Some(attempt), Some(requests), Some(mean)) = (
            at("opened_unix"),
            at("conn_id"),
            at("attempt"),
            at("requests"),
            at("mean_response_us"),
        ) else {
            continue;
        };
        for record in reader.records().flatten() {
            let num = |i: usize| record.get(i).and_then(|v| v.parse::<f64>().ok());
            if num(attempt) != Some(1.0) || num(requests).is_none_or(|r| r < 1.0) {
                continue;
            }
            if let (Some(o), Some(c), Some(m)) = (num(opened), num(id), num(mean)) {
                out.push((o, c as u64, m));
            }
        }
    }
    out.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    out
}

/// The mean of the last tenth's means and of the tenth before it; None below
/// [`MIN_CONNECTIONS`].
pub fn last_two_tenths(means_in_join_order: &[f64]) -> Option<(f64, f64)> {
    let n = means_in_join_order.len();
    if n < MIN_CONNECTIONS {
        return None;
    }
    let tenth = n / 10;
    let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
    let last = &means_in_join_order[n - tenth..];
    let ninth = &means_in_join_order[n - 2 * tenth..n - tenth];
    Some((mean(last), mean(ninth)))
}

/// Fills `joined_last_tenth_mean_us` and `joined_ninth_tenth_mean_us` from the step's
/// load directory.
pub fn join_order(row: &mut Row, load_dir: &Path) {
    let means: Vec<f64> = joined(load_dir).into_iter().map(|(_, _, m)| m).collect();
    if let Some((last, ninth)) = last_two_tenths(&means) {
        row.joined_last_tenth_mean_us = Some((last * 10.0).round() / 10.0);
        row.joined_ninth_tenth_mean_us = Some((ninth * 10.0).round() / 10.0);
    }
}

/// Seconds at the start of a timeline left out of the rate's spread: the connections
/// are still being made.
const RAMP_SECONDS: usize = 2;

/// The coefficient of variation of `per_second` after [`RAMP_SECONDS`], the last (a
/// partial second) left out; None below 3 such seconds or with no request.
pub fn rate_spread(per_second: &[f64]) -> Option<f64> {
    let whole = per_second.get(RAMP_SECONDS..per_second.len().checked_sub(1)?)?;
    if whole.len() < 3 {
        return None;
    }
    let n = whole.len() as f64;
    let mean = whole.iter().sum::<f64>() / n;
    if mean <= 0.0 {
        return None;
    }
    let var = whole.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some(var.sqrt() / mean)
}

/// Fills `requests_per_s_cv` from the step's one load timeline (the merged one, or a
/// single host's); several hosts' timelines are not added up here.
pub fn request_rate_spread(row: &mut Row, load_dir: &Path) {
    let merged = load_dir.join(TIMELINE);
    let file = if merged.is_file() {
        merged
    } else {
        match files(load_dir).as_slice() {
            [one] => one.with_file_name(TIMELINE),
            _ => return,
        }
    };
    let Ok(mut reader) = csv::Reader::from_path(&file) else {
        return;
    };
    let Some(requests) = reader
        .headers()
        .ok()
        .and_then(|h| h.iter().position(|c| c == "requests"))
    else {
        return;
    };
    let per_second: Vec<f64> = reader
        .records()
        .flatten()
        .filter_map(|r| r.get(requests)?.parse().ok())
        .collect();
    row.requests_per_s_cv = rate_spread(&per_second).map(|cv| (cv * 1e4).round() / 1e4);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_two_tenths_by_join_order() {
        let linear: Vec<f64> = (1..=100).map(f64::from).collect();
        // The last tenth is 91..=100 (mean 95.5), the one before 81..=90 (85.5).
        assert_eq!(last_two_tenths(&linear), Some((95.5, 85.5)));
        assert_eq!(last_two_tenths(&linear[..19]), None);
    }

    #[test]
    fn the_rate_spread_leaves_out_the_ramp_and_the_last_second() {
        // Seconds 2..=4 are 90, 100, 110: sd 10 over a mean of 100.
        assert_eq!(
            rate_spread(&[5.0, 50.0, 90.0, 100.0, 110.0, 7.0]),
            Some(0.1)
        );
        assert_eq!(rate_spread(&[5.0, 50.0, 90.0, 100.0, 7.0]), None);
        assert_eq!(rate_spread(&[]), None);
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("timeline.csv"),
            "second,active_connections,requests\n0,9,1\n1,9,2\n2,9,300\n3,9,300\n4,9,300\n5,0,4\n",
        )
        .unwrap();
        let mut row = Row::default();
        request_rate_spread(&mut row, dir.path());
        assert_eq!(row.requests_per_s_cv, Some(0.0));
    }

    #[test]
    fn connections_are_ordered_by_when_they_opened() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::from("conn_id,attempt,opened_unix,requests,mean_response_us\n");
        // Written out of order; a reconnection and a connection without a request are left out.
        for i in (0..20u32).rev() {
            text += &format!("{i},1,{}.5,3,{}\n", 1000 + i, 10 * (i + 1));
        }
        text += "3,2,2000.0,3,99999\n20,1,900.0,0,99999\n";
        std::fs::write(dir.path().join("connections.csv"), text).unwrap();
        let mut row = Row::default();
        join_order(&mut row, dir.path());
        assert_eq!(row.joined_last_tenth_mean_us, Some(195.0));
        assert_eq!(row.joined_ninth_tenth_mean_us, Some(175.0));
    }
}
