//! Parsing of the byte sizes and durations the command line and scenarios take, and
//! the formatting of byte counts, numbers and durations for people.

use std::time::Duration;

/// Parses a byte size: `128`, `64k`/`64KiB`/`64KB` (all 1024-based), `1M`/`1MiB`, `1G`/`1GiB`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let (value, unit) = split_number(text)
        .ok_or_else(|| format!("'{text}' is not a size (examples: 128, 64KiB, 1MiB)"))?;
    let multiplier: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        other => {
            return Err(format!(
                "'{other}' is not a size unit in '{text}' (use B, KiB, MiB or GiB)"
            ))
        }
    };
    let bytes = value * multiplier as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes.fract() != 0.0 {
        return Err(format!("'{text}' is not a whole number of bytes"));
    }
    // 2^64: a larger value would saturate to u64::MAX rather than be refused.
    if bytes >= 18_446_744_073_709_551_616.0 {
        return Err(format!("'{text}' is too large (16 EiB at most)"));
    }
    Ok(bytes as u64)
}

/// An exact byte size as a scenario writes it, the inverse of [`parse_size`]: the largest
/// unit that divides it (`256 MiB`, `1536 KiB`, `100 B`).
pub fn format_size(b: u64) -> String {
    let units = [(30, "GiB"), (20, "MiB"), (10, "KiB")];
    units
        .iter()
        .find(|(shift, _)| b >= 1 << shift && b.is_multiple_of(1 << shift))
        .map_or(format!("{b} B"), |(shift, unit)| {
            format!("{} {unit}", b >> shift)
        })
}

/// A measured byte count for people: `12 B`, `3.4 KiB`, `1.50 MiB` (1024-based, as
/// [`parse_size`] reads sizes).
pub fn fmt_bytes(b: f64) -> String {
    if b >= 1024.0 * 1024.0 {
        format!("{:.2} MiB", b / 1048576.0)
    } else if b >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{b:.0} B")
    }
}

/// Parses a duration: `1.5` (seconds), `250ms`, `10s`, `2m`, `1h`, `500us`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let (value, unit) = split_number(text)
        .ok_or_else(|| format!("'{text}' is not a duration (examples: 10s, 250ms, 2m)"))?;
    let seconds = match unit {
        "" | "s" => value,
        "ms" => value / 1e3,
        "us" | "µs" => value / 1e6,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        other => {
            return Err(format!(
                "'{other}' is not a time unit in '{text}' (use us, ms, s, m or h)"
            ))
        }
    };
    let duration = Duration::try_from_secs_f64(seconds)
        .map_err(|_| format!("'{text}' is not a valid duration"))?;
    if duration > MAX_DURATION {
        return Err(format!("'{text}' is longer than 100 years"));
    }
    Ok(duration)
}

/// The longest duration anything takes: the load engine times in u64 nanoseconds (584
/// years at most), and a duration that would wrap must be an error where it is written,
/// not a refusal once the run has started.
pub const MAX_DURATION: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// Splits `12.5ms` into its number and the unit after it (trimmed).
fn split_number(text: &str) -> Option<(f64, &str)> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    Some((number.parse().ok()?, unit.trim()))
}

/// Formats a number without a trailing `.0` (for step names).
/// `text` with its control characters escaped as Rust writes them (`\u{1b}`, `\0`),
/// at most `max` characters kept (then `…`): another program's words (a server's
/// stderr) quoted in a terminal, a CSV cell or a report can neither drive the terminal
/// nor hide a NUL, however they were written.
pub fn escape_controls(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

pub fn trim_float(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// A duration in milliseconds as flags and messages write it (`250ms`, `1.5ms`).
pub fn ms(d: Duration) -> String {
    format!("{}ms", trim_float(d.as_secs_f64() * 1e3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts_for_people() {
        assert_eq!(fmt_bytes(1023.0), "1023 B");
        assert_eq!(fmt_bytes(1536.0), "1.5 KiB");
        assert_eq!(fmt_bytes(3.0 * 1048576.0), "3.00 MiB");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("128"), Ok(128));
        assert_eq!(parse_size("64KiB"), Ok(65536));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert_eq!(parse_size("1.5k"), Ok(1536));
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("5 fortnights").is_err());
    }
}
