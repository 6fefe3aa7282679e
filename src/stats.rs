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
//!
//! A run may look at its repetitions more than once ([`Looks`]: a claim left undecided
//! adds a round and is judged again), so each look is judged at a stricter level that
//! keeps the false-positive rate over all of them at [`ALPHA`]; [`repetitions_needed`]
//! says how many repetitions an undecided comparison would have needed.

use std::cell::Cell;

use rand::rngs::StdRng;
use rand::{RngExt as _, SeedableRng as _};
use statrs::distribution::{ContinuousCDF as _, Normal};
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
    /// The level p is judged at: [`ALPHA`], or stricter when the run looks more than once
    /// ([`Looks::alpha`]).
    pub alpha: f64,
    /// median(b) / median(a).
    pub ratio: f64,
    /// The 95 % percentile-bootstrap interval of that ratio.
    pub interval: (f64, f64),
    /// The two samples' spread ([`spread`]), pooled as the root of their mean square;
    /// NaN when neither has two values.
    pub spread: f64,
}

impl Comparison {
    /// The samples differ: p is below the level of its look ([`ALPHA`] for one look).
    pub fn significant(&self) -> bool {
        self.p < self.alpha
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

    /// "; a x1.05 difference would need 18 repetitions per model here (spread 5.0 %)",
    /// for a comparison that decided nothing with fewer; "" when it decided, when it had
    /// as many (what it did not see was smaller than x1.05), or the spread is unknown.
    pub fn needs(&self) -> String {
        if self.decisive() {
            return String::new();
        }
        let had = self.n_a.min(self.n_b) as u64;
        match repetitions_needed(self.spread, self.alpha).filter(|&n| n > had) {
            Some(n) => format!(
                "; a x{MIN_EFFECT} difference would need {n} repetitions per model here \
                 (spread {:.1} %)",
                self.spread * 100.0
            ),
            None => String::new(),
        }
    }
}

/// The sequential rule of a run that may look at its repetitions more than once:
/// Bonferroni over the looks. A run of r repetitions with a budget of m runs at most
/// K = 1 + m - r looks (the first after r, then one more round of every model each),
/// and judges every look at ALPHA / K: the chance that any of the K looks calls a
/// difference where there is none is at most the sum of theirs, ALPHA (Bonferroni's
/// inequality; Jennison and Turnbull, "Group Sequential Methods with Applications to
/// Clinical Trials", 2000, ch. 2, for it and the sharper Pocock and O'Brien-Fleming
/// boundaries, which assume normal statistics a rank test of a few repetitions does
/// not give). A first look too small to reach its level ([`min_p`]: 4 against 4 never
/// goes below 0.030) can call nothing, so it spends none of ALPHA and is not counted.
/// A run without a budget looks once, at ALPHA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Looks {
    planned: u32,
}

impl Looks {
    /// One look: today's rule, p < ALPHA.
    pub const ONE: Looks = Looks { planned: 1 };

    /// The looks of a run of `repetitions` that may go on, one round a look, up to
    /// `max_repetitions` (at most `repetitions`: one look). A look at n repetitions a
    /// model is left out of the count while even n against n completely apart stays at or
    /// above the level the looks after it would be judged at: it calls nothing then.
    pub fn planned(repetitions: u32, max_repetitions: u32) -> Looks {
        let from = |n: u32| 1 + max_repetitions.saturating_sub(n);
        let mut first = repetitions;
        while first < max_repetitions
            && min_p(first as usize, first as usize) >= ALPHA / f64::from(from(first + 1))
        {
            first += 1;
        }
        Looks {
            planned: from(first),
        }
    }

    /// How many looks the run may take.
    pub fn count(self) -> u32 {
        self.planned
    }

    /// The level every look is judged at.
    pub fn alpha(self) -> f64 {
        ALPHA / f64::from(self.planned)
    }
}

thread_local! {
    /// The looks the comparisons being made now are judged for ([`with_looks`]).
    static LOOKS: Cell<Looks> = const { Cell::new(Looks::ONE) };
}

/// Runs `judge` with every [`compare`] in it judged at `looks`' level. The level belongs
/// to the run (how often it looked), not to the rule of any one judgement, so it is set
/// around the judging of a run's rows rather than passed to each comparison they make.
pub fn with_looks<T>(looks: Looks, judge: impl FnOnce() -> T) -> T {
    /// Puts the level back however `judge` ends (a panic included).
    struct Restore(Looks);
    impl Drop for Restore {
        fn drop(&mut self) {
            LOOKS.with(|l| l.set(self.0));
        }
    }
    let _restore = Restore(LOOKS.with(|l| l.replace(looks)));
    judge()
}

/// The level the comparisons being judged now are judged at: [`ALPHA`], or the stricter
/// one of the looks set by [`with_looks`].
pub fn level() -> f64 {
    LOOKS.with(Cell::get).alpha()
}

/// "too few repetitions for p < 0.0125": why a comparison whose sample sizes cannot reach
/// the level it is judged at ([`level`], [`min_p`]) decides nothing.
pub fn too_few() -> String {
    format!("too few repetitions for p < {}", fmt_level(level()))
}

/// A level as the texts state it, to three significant figures and no trailing zeros:
/// "0.05", "0.0125", "0.0167".
pub fn fmt_level(alpha: f64) -> String {
    if !(alpha.is_finite() && alpha > 0.0) {
        return format!("{alpha}");
    }
    let decimals = (2 - alpha.log10().floor() as i32).max(0) as usize;
    let text = format!("{alpha:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// Repetitions per model for a x[`MIN_EFFECT`] difference to be found 80 % of the time
/// at level `alpha`, with the repetitions' `spread` (coefficient of variation, as a
/// fraction). The normal approximation on the log scale, where x1.05 is a shift of
/// ln 1.05 and the standard deviation is about the spread: n = 2 (z(1 - alpha/2) +
/// z(0.8))^2 spread^2 / ln(1.05)^2, times pi/3, the rank test's efficiency against the
/// t-test on normal data. None for a spread that is not a positive number.
pub fn repetitions_needed(spread: f64, alpha: f64) -> Option<u64> {
    if !(spread.is_finite() && spread > 0.0 && alpha > 0.0 && alpha < 1.0) {
        return None;
    }
    let z = Normal::standard();
    let zs = z.inverse_cdf(1.0 - alpha / 2.0) + z.inverse_cdf(POWER);
    let shift = MIN_EFFECT.ln();
    let n = 2.0 * zs * zs * spread * spread / (shift * shift) * std::f64::consts::PI / 3.0;
    // At least 2: a rank test of one repetition a side says nothing whatever the spread.
    Some((n.ceil() as u64).max(2))
}

/// The chance [`repetitions_needed`] asks of a x1.05 difference: 80 %, the usual.
const POWER: f64 = 0.8;

/// The coefficient of variation of finite values (sample standard deviation over the
/// mean); None with fewer than two or a mean of zero.
pub fn spread(values: &[f64]) -> Option<f64> {
    let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.len() < 2 {
        return None;
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean != 0.0).then(|| var.sqrt() / mean.abs())
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
    test(&a, &b).map_or(1.0, |t| t.p)
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

/// Compares `b` with `a`: [`test`] at the level of the look being judged
/// ([`with_looks`]), and the bootstrap interval of the ratio.
pub fn compare(a: &[f64], b: &[f64]) -> Option<Comparison> {
    let c = judged(a, b)?;
    Some(Comparison {
        interval: bootstrap_interval(&finite(a), &finite(b)),
        ..c
    })
}

/// [`compare`] without the interval (NaN), which judging does not read.
fn judged(a: &[f64], b: &[f64]) -> Option<Comparison> {
    let Test { n_a, n_b, p, ratio } = test(a, b)?;
    let spreads: Vec<f64> = [spread(a), spread(b)].into_iter().flatten().collect();
    Some(Comparison {
        n_a,
        n_b,
        p,
        alpha: level(),
        ratio,
        interval: (f64::NAN, f64::NAN),
        spread: (spreads.iter().map(|s| s * s).sum::<f64>() / spreads.len() as f64).sqrt(),
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

    /// How many of `claims` simulated claims with no difference the sequential rule
    /// decides: each claim's two models draw from one distribution (uniform over 50..150,
    /// a spread of 29 %, so the x1.05 threshold hardly ever stands in for p), are
    /// compared after `repetitions`, and go on one round a look up to `budget` until a
    /// look is decisive, each look judged at `looks`' level.
    fn decided_without_difference(
        claims: usize,
        repetitions: u32,
        budget: u32,
        looks: Looks,
    ) -> usize {
        let mut rng = StdRng::seed_from_u64(45);
        let mut draw =
            |n: u32| -> Vec<f64> { (0..n).map(|_| 50.0 + 100.0 * rng.random::<f64>()).collect() };
        with_looks(looks, || {
            (0..claims)
                .filter(|_| {
                    let (a, b) = (draw(budget), draw(budget));
                    (repetitions..=budget).any(|n| {
                        let n = n as usize;
                        judged(&a[..n], &b[..n]).is_some_and(|c| c.decisive())
                    })
                })
                .count()
        })
    }

    #[test]
    fn the_sequential_rule_keeps_false_positives_at_five_percent() {
        const CLAIMS: usize = 1000;
        // The claim scenarios' 5 repetitions, with budgets of 2, 5 and 10 more rounds.
        let mut measured = Vec::new();
        // The claim scenarios' budgets (5 to 8; claim-6, 4 to 6) and longer ones.
        for (repetitions, budget) in [(5, 7), (5, 10), (5, 15), (5, 8), (4, 6)] {
            let looks = Looks::planned(repetitions, budget);
            let rule = decided_without_difference(CLAIMS, repetitions, budget, looks);
            let naive = decided_without_difference(CLAIMS, repetitions, budget, Looks::ONE);
            measured.push(format!(
                "{repetitions} to {budget} repetitions ({} looks at p < {:.4}): {:.1} % \
                 decided; each look at p < 0.05: {:.1} %",
                looks.count(),
                looks.alpha(),
                rule as f64 / 10.0,
                naive as f64 / 10.0
            ));
            assert!(rule * 20 <= CLAIMS, "{}", measured.join("\n"));
            // Looking again at 0.05 after every round is what the rule is for: it calls
            // a difference in more than 5 % of claims that have none.
            if budget >= repetitions + 2 {
                assert!(naive * 20 > CLAIMS, "{}", measured.join("\n"));
            }
        }
        println!("{}", measured.join("\n"));
        // One look is today's rule: the same p < 0.05 as without a budget.
        assert_eq!(Looks::planned(5, 5), Looks::ONE);
        assert_eq!(Looks::planned(5, 3), Looks::ONE);
        assert_eq!(Looks::ONE.alpha(), ALPHA);
        // 4 against 4 never reaches 0.025: claim-6's first look is not counted.
        assert_eq!(Looks::planned(4, 6).count(), 2);
        assert_eq!(Looks::planned(5, 8).count(), 4);
        // 3 against 3 never reaches 0.05 (0.081): 3 to 5 is two looks, at 4 and 5.
        assert_eq!(Looks::planned(3, 5).count(), 2);
    }

    #[test]
    fn a_comparison_is_judged_at_the_level_of_its_look() {
        // 5 against 5 completely apart: p = 0.012, below 0.05 but not below 0.05 / 5.
        let a = [10.0, 10.2, 9.9, 10.1, 10.05];
        let b = [20.0, 20.4, 19.8, 20.2, 20.1];
        assert!(compare(&a, &b).unwrap().decisive());
        let five = Looks::planned(5, 9);
        assert_eq!((five.count(), five.alpha()), (5, ALPHA / 5.0));
        let c = with_looks(five, || compare(&a, &b)).unwrap();
        assert_eq!(c.alpha, ALPHA / 5.0);
        assert!(!c.significant() && !c.decisive(), "{c:?}");
        // The level is put back after the judging.
        assert_eq!(compare(&a, &b).unwrap().alpha, ALPHA);
    }

    #[test]
    fn too_few_repetitions_names_the_level_of_the_look() {
        assert_eq!(too_few(), "too few repetitions for p < 0.05");
        // Claim-4's budget: 5 to 8 repetitions, four looks at 0.0125 each.
        let four = Looks::planned(5, 8);
        assert_eq!(
            with_looks(four, too_few),
            "too few repetitions for p < 0.0125"
        );
        assert_eq!(
            with_looks(Looks::planned(5, 7), too_few),
            "too few repetitions for p < 0.0167"
        );
        assert_eq!(level(), ALPHA);
        assert_eq!(fmt_level(0.01), "0.01");
        assert_eq!(fmt_level(ALPHA / 6.0), "0.00833");
    }

    #[test]
    fn repetitions_needed_grow_with_the_spread_and_the_looks() {
        // 5 % spread at 0.05: 2 (1.960 + 0.842)^2 0.05^2 / ln(1.05)^2 pi/3 = 17.3.
        assert_eq!(repetitions_needed(0.05, ALPHA), Some(18));
        // Twice the spread, four times the repetitions.
        assert_eq!(repetitions_needed(0.10, ALPHA), Some(70));
        // Three looks at 0.0167: z = 2.394, so 2 (3.236)^2 ... = 23.1.
        assert_eq!(repetitions_needed(0.05, ALPHA / 3.0), Some(24));
        assert_eq!(repetitions_needed(0.001, ALPHA), Some(2));
        assert_eq!(repetitions_needed(0.0, ALPHA), None);
        assert_eq!(repetitions_needed(f64::NAN, ALPHA), None);
    }

    #[test]
    fn an_undecided_comparison_says_what_it_would_need() {
        let a = [100.0, 104.0, 96.0, 102.0, 98.0];
        let b = [101.0, 97.0, 103.0, 99.0, 100.0];
        let c = compare(&a, &b).unwrap();
        assert!(
            (spread(&a).unwrap() - 0.0316).abs() < 1e-3,
            "{:?}",
            spread(&a)
        );
        assert!((c.spread - 0.0272).abs() < 1e-3, "{c:?}");
        assert_eq!(
            c.needs(),
            format!(
                "; a x1.05 difference would need {} repetitions per model here (spread 2.7 %)",
                repetitions_needed(c.spread, ALPHA).unwrap()
            )
        );
        let far: Vec<f64> = a.iter().map(|x| x * 2.0).collect();
        assert_eq!(compare(&a, &far).unwrap().needs(), "");
        // Enough repetitions for x1.05 and still undecided: the gap is smaller.
        let many: Vec<f64> = (0..30).map(|i| 100.0 + f64::from(i % 3)).collect();
        let c = compare(&many, &many).unwrap();
        assert_eq!(repetitions_needed(c.spread, ALPHA), Some(2));
        assert_eq!(c.needs(), "");
        assert_eq!(spread(&[3.0]), None);
        assert!(compare(&[3.0], &[4.0]).unwrap().needs().is_empty());
    }
}
