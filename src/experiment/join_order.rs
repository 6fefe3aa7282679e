//! Response time by the order the connections joined (004: "a linear model for most
//! of the clients but exponentially increases as we get to the user specified client
//! number"): each connection's mean response time from load's connections.csv, the
//! connections ordered by when they opened, and the mean over the last tenth to open
//! beside the tenth before it. Linear growth over the order makes the last tenth at
//! most about 1.12 times the ninth; a jump at the end makes it far more.

use std::path::{Path, PathBuf};

use crate::results::Row;

/// Fewer connections than this say nothing of a tenth.
const MIN_CONNECTIONS: usize = 20;

/// The connections.csv files of a step's load: the merged one, else each host's.
fn files(load_dir: &Path) -> Vec<PathBuf> {
    let merged = load_dir.join("connections.csv");
    if merged.is_file() {
        return vec![merged];
    }
    let mut each: Vec<PathBuf> = std::fs::read_dir(load_dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("connections.csv"))
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
pub fn measure(row: &mut Row, load_dir: &Path) {
    let means: Vec<f64> = joined(load_dir).into_iter().map(|(_, _, m)| m).collect();
    if let Some((last, ninth)) = last_two_tenths(&means) {
        row.joined_last_tenth_mean_us = Some((last * 10.0).round() / 10.0);
        row.joined_ninth_tenth_mean_us = Some((ninth * 10.0).round() / 10.0);
    }
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
        measure(&mut row, dir.path());
        assert_eq!(row.joined_last_tenth_mean_us, Some(195.0));
        assert_eq!(row.joined_ninth_tenth_mean_us, Some(175.0));
    }
}
