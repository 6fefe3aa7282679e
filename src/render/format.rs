//! How the report writes its numbers: counts, rates, latencies, CPU and ratios with
//! their intervals, one place for every figure and sentence.

use crate::stats::Comparison;

/// Thousands separated by commas, at most 3 significant decimals below 100.
pub fn fmt_count(v: f64) -> String {
    if v.abs() >= 100.0 || v.fract() == 0.0 {
        let n = v.round() as i64;
        let digits = n.abs().to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        if n < 0 {
            out.insert(0, '-');
        }
        out
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

pub fn fmt_seconds(v: f64) -> String {
    format!("{} s", fmt_count(v))
}

pub fn fmt_rate(v: f64) -> String {
    format!("{} req/s", fmt_count(v))
}

pub fn fmt_latency(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.2} s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{us:.0} µs")
    }
}

pub fn fmt_cpu(pct: f64) -> String {
    format!("{pct:.1}% of a core")
}

pub fn fmt_cpu_per_request(us: f64) -> String {
    format!("{us:.2} µs CPU/req")
}

/// "×1.10"; the ratio is always ≥ 1 and reads "this many times better".
pub fn fmt_ratio(r: f64) -> String {
    format!("×{r:.2}")
}

/// "×1.32 (1.20–1.45)": a ratio of medians with its 95 % bootstrap interval, as the
/// report writes it.
pub fn fmt_ratio_interval(c: &Comparison) -> String {
    ratio_interval(c, '×')
}

/// A ratio of medians with its 95 % bootstrap interval, after `sign`: "×" in the
/// report's sentences and tables, "x" in the claims' lines. Against a median of zero
/// a ratio is "∞"; an interval that is no number is left out.
pub fn ratio_interval(c: &Comparison, sign: char) -> String {
    let times = |r: f64| {
        if r.is_infinite() {
            "∞".to_string()
        } else {
            format!("{r:.2}")
        }
    };
    let (lo, hi) = c.interval;
    if lo.is_nan() || hi.is_nan() {
        format!("{sign}{}", times(c.ratio))
    } else {
        format!("{sign}{} ({}–{})", times(c.ratio), times(lo), times(hi))
    }
}
