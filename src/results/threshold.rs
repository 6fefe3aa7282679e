//! A threshold on a results figure, as `--fail-if` and a scenario's `[thresholds]` write
//! it: `FIGURE > +N%` or `< -N%` (a change), `FIGURE > VALUE` or `< VALUE` with the
//! column's unit (a value). Figures by the short names every comparison uses, or any
//! numeric column. Parsed here, below the scenario that declares them and the
//! comparison that judges them.

use std::collections::BTreeMap;

use anyhow::Context as _;

use super::{column, COLUMNS};
use crate::units::{parse_duration, parse_size};

/// The figures every comparison shows, by the short name thresholds use.
pub const SHORT_NAMES: [(&str, &str); 10] = [
    ("throughput", column::THROUGHPUT_RPS),
    ("p50", column::P50_US),
    ("p99", column::P99_US),
    ("p999", column::P999_US),
    ("mean", column::MEAN_US),
    ("cpu", column::SERVER_CPU_PCT),
    ("cpu_per_request", column::SERVER_CPU_US_PER_REQUEST),
    ("memory_per_connection", column::SERVER_RSS_PER_CONN_BYTES),
    ("errors", column::ERRORS),
    ("held", column::MAX_CONCURRENT_SERVER),
];

/// The unit results.csv declares for `column` ("" for one it does not declare).
pub fn unit(column: &str) -> &'static str {
    COLUMNS
        .iter()
        .find(|c| c.name == column)
        .map_or("", |c| c.unit)
}

/// The column a name stands for: a short name's, or a numeric results.csv column's own.
pub fn column_of(name: &str) -> Option<&'static str> {
    SHORT_NAMES
        .iter()
        .find(|(short, _)| *short == name)
        .map(|(_, c)| *c)
        .or_else(|| {
            COLUMNS
                .iter()
                .find(|c| c.name == name && c.is_number())
                .map(|c| c.name)
        })
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    Above,
    Below,
}

impl Op {
    pub fn crosses(self, value: f64, limit: f64) -> bool {
        match self {
            Op::Above => value > limit,
            Op::Below => value < limit,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
    /// A change in percent, signed.
    Change(f64),
    /// NEW's value, in the column's own unit.
    Value(f64),
}

/// One `--fail-if` expression, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// As written, to name it when crossed.
    pub text: String,
    pub column: &'static str,
    pub op: Op,
    pub limit: Limit,
}

impl Threshold {
    /// A `--fail-if` expression.
    pub fn parse(text: &str) -> anyhow::Result<Threshold> {
        Self::parse_in(
            text,
            "--fail-if",
            "'p99 > +10%', 'throughput < -5%', 'p99 > 2ms', 'errors > 0'",
        )
    }

    /// `text` as a threshold, its errors said as of `place` with `examples`.
    fn parse_in(text: &str, place: &str, examples: &str) -> anyhow::Result<Threshold> {
        let fail = |why: String| anyhow::anyhow!("{place} '{text}': {why} (examples: {examples})");
        let Some(at) = text.find(['>', '<']) else {
            return Err(fail("no comparison: use > or <".into()));
        };
        let op = if text[at..].starts_with('>') {
            Op::Above
        } else {
            Op::Below
        };
        let name = text[..at].trim();
        let right = text[at + 1..].trim();
        if name.is_empty() {
            return Err(fail("no figure before the comparison".into()));
        }
        let column = column_of(name).ok_or_else(|| {
            let names: Vec<&str> = SHORT_NAMES.iter().map(|(s, _)| *s).collect();
            fail(format!(
                "'{name}' is not a figure: use {} or a numeric results.csv column",
                names.join(", ")
            ))
        })?;
        if right.is_empty() {
            return Err(fail("no limit after the comparison".into()));
        }
        let limit = parse_limit(column, right).map_err(fail)?;
        Ok(Threshold {
            text: text.trim().to_string(),
            column,
            op,
            limit,
        })
    }
}

/// `+10%` or `-5%` (a signed change), else a value in `column`'s unit: a duration for
/// µs columns (a unit required), a size for bytes, a number (its unit or `%` may follow).
fn parse_limit(column: &str, text: &str) -> Result<Limit, String> {
    if let Some(number) = text.strip_suffix('%') {
        if number.starts_with(['+', '-']) {
            let pct: f64 = number
                .trim()
                .parse()
                .map_err(|_| format!("'{text}' is not a change in percent"))?;
            // NaN never crosses and an infinite change is not a limit: a gate that can
            // never fail is refused, as a non-finite value is.
            if !pct.is_finite() {
                return Err(format!("'{text}' is not a finite change in percent"));
            }
            return Ok(Limit::Change(pct));
        }
    }
    let unit = unit(column);
    if text.ends_with('%') && !unit.starts_with('%') {
        return Err(format!(
            "'{text}': write a change with its sign (+10% or -10%)"
        ));
    }
    let value = match unit {
        "µs" => {
            if text.trim().parse::<f64>().is_ok() {
                return Err(format!(
                    "'{text}' needs a time unit (us, ms, s), or a sign and % for a change"
                ));
            }
            parse_duration(text)?.as_secs_f64() * 1e6
        }
        "bytes" => parse_size(text)? as f64,
        _ => {
            let end = number_end(text);
            let (number, rest) = text.split_at(end);
            let rest = rest.trim();
            let known = rest.is_empty()
                || rest == unit
                || (rest == "%" && unit.starts_with('%'))
                || (rest == "req/s" && unit == "requests/s");
            if !known {
                return Err(format!(
                    "'{rest}' is not {column}'s unit ({}); write a change with its sign: +10%",
                    if unit.is_empty() { "none" } else { unit }
                ));
            }
            number
                .parse()
                .map_err(|_| format!("'{text}' is not a number"))?
        }
    };
    if !value.is_finite() {
        return Err(format!("'{text}' is not a finite value"));
    }
    Ok(Limit::Value(value))
}

/// Where the number at the start of `text` ends: digits, a point, a sign, and an
/// exponent (`1e9`, `2.5E-3`) when digits follow its `e`.
fn number_end(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut end = 0;
    while end < bytes.len() {
        let c = bytes[end];
        let exponent = matches!(c, b'e' | b'E')
            && end > 0
            && bytes[end + 1..]
                .iter()
                .find(|b| !matches!(b, b'+' | b'-'))
                .is_some_and(u8::is_ascii_digit);
        let sign_of_exponent =
            matches!(c, b'+' | b'-') && end > 0 && matches!(bytes[end - 1], b'e' | b'E');
        if !(c.is_ascii_digit()
            || c == b'.'
            || (c == b'-' && end == 0)
            || exponent
            || sign_of_exponent)
        {
            break;
        }
        end += 1;
    }
    end
}

/// A scenario's `[thresholds]` entry (`p99 = "< 1ms"`): the condition every step's
/// value must meet, absolute only (a run alone has no change).
pub fn requirement(figure: &str, condition: &str) -> anyhow::Result<Threshold> {
    let t = Threshold::parse_in(
        &format!("{figure} {condition}"),
        "[thresholds]",
        "p99 = \"< 1ms\", error_rate = \"< 0.001\", throughput = \"> 1000\"",
    )?;
    if let Limit::Change(_) = t.limit {
        anyhow::bail!(
            "'{figure} = \"{condition}\"': a run's threshold is a value with its unit \
             (\"< 1ms\"), not a change"
        );
    }
    Ok(t)
}

/// A scenario's `[thresholds]` table (figure -> condition), each entry a
/// [`requirement`], in figure order.
pub fn requirements(table: &BTreeMap<String, String>) -> anyhow::Result<Vec<Threshold>> {
    table
        .iter()
        .map(|(figure, condition)| {
            requirement(figure, condition).with_context(|| format!("[thresholds] {figure}"))
        })
        .collect()
}

/// The columns the thresholds name.
pub fn columns(thresholds: &[Threshold]) -> Vec<&'static str> {
    thresholds.iter().map(|t| t.column).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_parse_into_a_column_a_side_and_a_limit() {
        let t = Threshold::parse("p99 > +10%").unwrap();
        assert_eq!(
            (t.column, t.op, t.limit),
            (column::P99_US, Op::Above, Limit::Change(10.0))
        );
        let t = Threshold::parse(" throughput<-5% ").unwrap();
        assert_eq!((t.op, t.limit), (Op::Below, Limit::Change(-5.0)));
        assert_eq!(
            Threshold::parse("p99 > 2ms").unwrap().limit,
            Limit::Value(2000.0)
        );
        assert_eq!(
            Threshold::parse("errors > 0").unwrap().limit,
            Limit::Value(0.0)
        );
        assert_eq!(
            Threshold::parse("memory_per_connection > 4KiB")
                .unwrap()
                .limit,
            Limit::Value(4096.0)
        );
        assert_eq!(
            Threshold::parse("cpu > 80%").unwrap().limit,
            Limit::Value(80.0)
        );
        let t = Threshold::parse("server_cpu_us_per_request > +5%").unwrap();
        assert_eq!(t.column, column::SERVER_CPU_US_PER_REQUEST);
        assert_eq!(
            Threshold::parse("net_retrans_segs > 100").unwrap().column,
            column::NET_RETRANS_SEGS
        );
    }

    #[test]
    fn bad_thresholds_say_what_is_wrong() {
        let err = |t: &str| Threshold::parse(t).unwrap_err().to_string();
        assert!(
            err("p99 +10%").contains("no comparison"),
            "{}",
            err("p99 +10%")
        );
        assert!(err("p98 > +10%").contains("'p98' is not a figure"));
        assert!(err("p99 > 1000").contains("needs a time unit"));
        assert!(err("p99 > 10%").contains("with its sign"));
        assert!(err("throughput > 10 parsecs").contains("'parsecs' is not throughput_rps's unit"));
        assert!(err("throughput > +ten%").contains("is not a change in percent"));
        assert!(err("model > 1").contains("'model' is not a figure"));
        assert!(err("> 1").contains("no figure"));
        assert!(err("p99 >").contains("no limit"));
        for never in ["+NaN%", "+inf%", "+1e400%", "-inf%"] {
            let text = format!("p99 > {never}");
            assert!(err(&text).contains("not a finite change"), "{}", err(&text));
        }
    }

    #[test]
    fn a_number_may_be_written_with_an_exponent() {
        let value = |t: &str| Threshold::parse(t).unwrap().limit;
        assert_eq!(value("throughput < 1e9"), Limit::Value(1e9));
        assert_eq!(value("throughput < 1000000000"), Limit::Value(1e9));
        assert_eq!(value("throughput < 2.5E3 req/s"), Limit::Value(2500.0));
        assert_eq!(value("errors > 1e-3"), Limit::Value(0.001));
        assert!(Threshold::parse("throughput < 1e").is_err());
        assert!(Threshold::parse("throughput < 1e400").is_err());
    }
}
