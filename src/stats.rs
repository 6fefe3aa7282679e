//! Comparing two sets of repetitions, as benchstat does: a Mann–Whitney U test says
//! whether the difference is significant, and a bootstrap interval says how large the
//! ratio of the two medians is. Every "A beats B" echolab prints comes from [`compare`].
//!
//! Mann–Whitney makes no assumption about the shape of the distribution, which suits
//! a handful of repetitions of a benchmark (one disturbed repetition moves a mean, not
//! a rank). The p-value is the normal approximation with continuity and tie
//! corrections (scipy's asymptotic method, from statrs): it is the method any sample
//! with ties needs, and it is conservative for small samples without ties (5 against
//! 5 completely apart gives 0.012 where the exact distribution gives 0.008). statrs'
//! exact method is not used: for samples of equal size it returns the complement of
//! the tail (1.0 for two samples completely apart, statrs 0.19.1). The smallest p any
//! data can give depends on the sample sizes alone: 3 against 3 of distinct values
//! never reaches 0.05 (0.081; three equal values against three others, 0.047, through
//! the tie correction), 4 against 4 and 5 against 5 can. [`min_p`] gives that floor, so a caller can say
//! why a comparison with too few repetitions decides nothing.

use rand::rngs::StdRng;
use rand::{RngExt as _, SeedableRng as _};
use statrs::stats_tests::mannwhitneyu::{mannwhitneyu, MannWhitneyUMethod};
use statrs::stats_tests::Alternative;

/// The significance level: a difference counts when p is below it (benchstat's default).
pub const ALPHA: f64 = 0.05;

/// The smallest ratio of medians named a difference, either way. Two full runs of the
/// classic study on this machine, an hour apart, put two epoll workers at x0.96 of one
/// (p = 0.012) and then at x1.01 (p = 0.68): a gap of a few percent comes and goes
/// between runs, so however significant within one run it is not called a win.
pub const MIN_EFFECT: f64 = 1.05;

/// Resamples of the bootstrap interval; seeded, so the same data give the same interval.
const RESAMPLES: usize = 2000;

/// Two samples compared: `b` against `a`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    pub n_a: usize,
    pub n_b: usize,
    /// Two-sided Mann–Whitney U p-value (normal approximation, continuity and ties corrected).
    pub p: f64,
    /// median(b) / median(a).
    pub ratio: f64,
    /// The 95 % percentile-bootstrap interval of that ratio.
    pub interval: (f64, f64),
}

impl Comparison {
    /// The samples differ: p is below [`ALPHA`].
    pub fn significant(&self) -> bool {
        self.p < ALPHA
    }

    /// The medians differ by [`MIN_EFFECT`] or more, either way.
    pub fn large(&self) -> bool {
        self.ratio >= MIN_EFFECT || self.ratio <= 1.0 / MIN_EFFECT
    }

    /// Significant and large: a difference echolab names.
    pub fn decisive(&self) -> bool {
        self.significant() && self.large()
    }

    /// "p = 0.40, n = 5+5", the form every undecided comparison is reported in.
    pub fn describe_p(&self) -> String {
        let n = if self.n_a == self.n_b {
            format!("n = {}", self.n_a)
        } else {
            format!("n = {}+{}", self.n_a, self.n_b)
        };
        format!("{}, {n}", p_equals(self.p))
    }
}

/// "p = 0.40", or "p < 0.001" below what [`fmt_p`] shows.
pub fn p_equals(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".to_string()
    } else {
        format!("p = {}", fmt_p(p))
    }
}

/// p to two significant figures ("0.0079", "0.40"), "< 0.001" below that.
pub fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".to_string()
    } else if p < 0.01 {
        format!("{p:.4}")
    } else if p < 0.1 {
        format!("{p:.3}")
    } else {
        format!("{p:.2}")
    }
}

/// The smallest two-sided p-value the test gives with these sample sizes: that of
/// two samples completely apart.
pub fn min_p(n_a: usize, n_b: usize) -> f64 {
    let a: Vec<f64> = (0..n_a).map(|i| i as f64).collect();
    let b: Vec<f64> = (n_a..n_a + n_b).map(|i| i as f64).collect();
    compare(&a, &b).map_or(1.0, |c| c.p)
}

/// The median of finite values (None when there are none).
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    })
}

/// The rank test alone: [`compare`] without its interval. A caller that screens many
/// pairs and shows few (the verdict's decision) tests each pair with it, and compares
/// only the pairs it shows: the interval costs [`RESAMPLES`] medians of each sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Test {
    pub n_a: usize,
    pub n_b: usize,
    /// Two-sided Mann–Whitney U p-value, as [`Comparison::p`].
    pub p: f64,
    /// median(b) / median(a).
    pub ratio: f64,
}

/// Tests `b` against `a`. None when either sample has no finite value. Non-finite
/// values are dropped first (a repetition that measured nothing is not a sample).
pub fn test(a: &[f64], b: &[f64]) -> Option<Test> {
    let (a, b) = (finite(a), finite(b));
    let (ma, mb) = (median(&a)?, median(&b)?);
    let p = if a.iter().chain(&b).all(|&x| x == a[0]) {
        // Every value equal: the rank test's variance is zero; nothing differs.
        1.0
    } else {
        mannwhitneyu(
            &a,
            &b,
            MannWhitneyUMethod::AsymptoticInclContinuityCorrection,
            Alternative::TwoSided,
        )
        .map(|(_, p)| p)
        .unwrap_or(1.0)
    };
    Some(Test {
        n_a: a.len(),
        n_b: b.len(),
        p: if p.is_nan() { 1.0 } else { p },
        ratio: ratio(ma, mb),
    })
}

/// Compares `b` with `a`: [`test`] and the bootstrap interval of the ratio.
pub fn compare(a: &[f64], b: &[f64]) -> Option<Comparison> {
    let Test { n_a, n_b, p, ratio } = test(a, b)?;
    Some(Comparison {
        n_a,
        n_b,
        p,
        ratio,
        interval: bootstrap_interval(&finite(a), &finite(b)),
    })
}

fn finite(values: &[f64]) -> Vec<f64> {
    values.iter().copied().filter(|x| x.is_finite()).collect()
}

fn ratio(a: f64, b: f64) -> f64 {
    if a == b {
        1.0
    } else {
        b / a
    }
}

/// The 2.5th and 97.5th percentiles of median(b*)/median(a*) over resamples drawn
/// with replacement from each side; a fixed seed makes it repeatable.
fn bootstrap_interval(a: &[f64], b: &[f64]) -> (f64, f64) {
    // "echolab" in ASCII: any fixed seed would do.
    let mut rng = StdRng::seed_from_u64(0x0065_6368_6f6c_6162);
    let mut draw = |from: &[f64], into: &mut Vec<f64>| {
        into.clear();
        into.extend((0..from.len()).map(|_| from[rng.random_range(0..from.len())]));
        median(into).unwrap_or(f64::NAN)
    };
    let (mut sa, mut sb) = (Vec::with_capacity(a.len()), Vec::with_capacity(b.len()));
    let mut ratios: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let ma = draw(a, &mut sa);
            let mb = draw(b, &mut sb);
            ratio(ma, mb)
        })
        .filter(|r| !r.is_nan())
        .collect();
    if ratios.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios[((ratios.len() - 1) as f64 * q).round() as usize];
    (at(0.025), at(0.975))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_samples_are_no_difference() {
        let a = [10.0, 12.0, 11.0, 13.0, 9.0];
        let b = [11.5, 10.5, 12.5, 9.5, 13.5];
        let c = compare(&a, &b).unwrap();
        assert!(!c.significant(), "{c:?}");
        assert!(c.p > 0.5, "{c:?}");
        assert!(c.interval.0 < 1.0 && c.interval.1 > 1.0, "{c:?}");
        assert_eq!(c.describe_p(), format!("p = {}, n = 5", fmt_p(c.p)));
    }

    #[test]
    fn a_small_significant_difference_is_not_decisive() {
        let a = [10.0, 10.02, 9.99, 10.01, 10.005];
        let small: Vec<f64> = a.iter().map(|x| x * 0.97).collect();
        let c = compare(&a, &small).unwrap();
        assert!(c.significant() && !c.large() && !c.decisive(), "{c:?}");
        let large: Vec<f64> = a.iter().map(|x| x * 0.94).collect();
        let c = compare(&a, &large).unwrap();
        assert!(c.decisive(), "{c:?}");
    }

    #[test]
    fn separated_samples_differ_with_an_interval_around_the_ratio() {
        let a = [10.0, 10.2, 9.9, 10.1, 10.05];
        let b = [20.0, 20.4, 19.8, 20.2, 20.1];
        let c = compare(&a, &b).unwrap();
        assert!(c.significant(), "{c:?}");
        // Complete separation of 5 and 5: the floor for these sizes (scipy's
        // asymptotic method gives 0.01219).
        assert_eq!(c.p, min_p(5, 5));
        assert!((c.p - 0.01219).abs() < 1e-4, "{c:?}");
        assert!((c.ratio - 20.1 / 10.05).abs() < 1e-9, "{c:?}");
        assert!(c.interval.0 > 1.9 && c.interval.1 < 2.1, "{c:?}");
        assert!(c.interval.0 <= c.ratio && c.ratio <= c.interval.1, "{c:?}");
    }

    #[test]
    fn three_against_three_can_never_be_significant() {
        let c = compare(&[1.0, 2.0, 3.0], &[10.0, 11.0, 12.0]).unwrap();
        assert!(!c.significant(), "{c:?}");
        assert!(min_p(3, 3) > ALPHA, "{}", min_p(3, 3));
        assert!(min_p(4, 4) < ALPHA, "{}", min_p(4, 4));
        assert!(min_p(5, 5) < min_p(4, 4));
        assert!(min_p(2, 2) > min_p(3, 3));
    }

    #[test]
    fn a_tiny_p_reads_as_below_not_equal() {
        let far: Vec<f64> = (0..30).map(f64::from).collect();
        let farther: Vec<f64> = (100..130).map(f64::from).collect();
        let c = compare(&far, &farther).unwrap();
        assert_eq!(c.describe_p(), "p < 0.001, n = 30");
        assert_eq!(p_equals(0.4), "p = 0.40");
    }

    #[test]
    fn equal_values_and_empty_samples() {
        let c = compare(&[4.0; 5], &[4.0; 5]).unwrap();
        assert_eq!((c.p, c.ratio, c.interval), (1.0, 1.0, (1.0, 1.0)));
        assert!(compare(&[], &[1.0]).is_none());
        assert!(compare(&[f64::NAN], &[1.0]).is_none());
        assert_eq!(median(&[3.0, 1.0, f64::INFINITY, 2.0]), Some(2.0));
    }

    #[test]
    fn the_same_data_give_the_same_interval() {
        let a = [3.0, 5.0, 4.0, 6.0, 5.5];
        let b = [6.0, 7.5, 8.0, 6.5, 9.0];
        assert_eq!(compare(&a, &b), compare(&a, &b));
    }

    #[test]
    fn p_is_printed_to_two_figures() {
        assert_eq!(fmt_p(0.4), "0.40");
        assert_eq!(fmt_p(0.0079), "0.0079");
        assert_eq!(fmt_p(0.01219), "0.012");
        assert_eq!(fmt_p(0.0001), "< 0.001");
    }
}
