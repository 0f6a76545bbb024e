//! Few-shot correction scored on Gpulet's real pairs: for each model pair
//! (victim model beside co-runner model, over all their batches and
//! shares), `K` of its real sides are given as measurements
//! (`colocation::measured`'s correction, the same one `tally predict
//! --measured` applies) and the pair's other sides are predicted from
//! them. Which sides are measured is a fixed pseudo-random draw per pair
//! (seeded by the pair, so reruns agree); `K = 0` is the predictor alone.
//!
//! The correction is keyed by model, not by batch: a user measures a few
//! of a pair's configurations and asks about the rest. (Keyed by
//! `model@batch`, as `--measured` names tasks, K of a pair's 245 sides
//! leave most batches unmeasured and change almost nothing.)

use tally_gpu::rng::SplitMix64;

use super::evaluate::RealRow;
use super::score::mape;
use crate::colocation::measured::{MeasuredRow, TaskCorrection};
use crate::error::RunError;

/// The K of each reported figure.
pub const KS: [usize; 4] = [0, 5, 10, 20];

/// A pair side parsed from a `gpulet-pairs` case
/// (`victim@batch pP | co@batch pQ`).
struct Side<'a> {
    victim: &'a str,
    co_runner: &'a str,
    sms: u32,
    real: f64,
    predicted: f64,
}

/// One K's figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FewShot {
    pub k: usize,
    /// Held-out sides scored (every side not measured, over all pairs).
    pub rows: usize,
    /// MAPE of the corrected predicted slowdown, percent.
    pub mape: f64,
}

fn parse(row: &RealRow) -> Option<Side<'_>> {
    let (victim, rest) = row.case.split_once(" | ")?;
    let (victim_model, victim_rest) = victim.split_once('@')?;
    let share: u32 = victim_rest.split_once(" p")?.1.parse().ok()?;
    let co_model = rest.split_once('@')?.0;
    Some(Side {
        victim: victim_model,
        co_runner: co_model,
        sms: share,
        real: row.real,
        predicted: row.predicted?,
    })
}

fn seed_of(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// The figure for each of [`KS`], over every `gpulet-pairs` row that has
/// a prediction.
pub fn few_shot(rows: &[RealRow]) -> Result<Vec<FewShot>, RunError> {
    let sides: Vec<Side<'_>> = rows
        .iter()
        .filter(|r| r.set == "gpulet-pairs")
        .filter_map(parse)
        .collect();
    let mut pairs: Vec<(&str, &str)> = sides.iter().map(|s| (s.victim, s.co_runner)).collect();
    pairs.sort_unstable();
    pairs.dedup();
    let mut out = Vec::new();
    for k in KS {
        let (mut real, mut corrected) = (Vec::new(), Vec::new());
        for &(victim, co) in &pairs {
            let mut of: Vec<&Side<'_>> = sides
                .iter()
                .filter(|s| s.victim == victim && s.co_runner == co)
                .collect();
            // A fixed shuffle of the pair's sides: the first K are measured.
            let mut rng = SplitMix64::new(seed_of(&format!("{victim}|{co}")));
            for i in (1..of.len()).rev() {
                of.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let given = k.min(of.len().saturating_sub(1));
            let measured: Vec<MeasuredRow> = of[..given]
                .iter()
                .map(|s| MeasuredRow {
                    task: s.victim.to_string(),
                    partner: s.co_runner.to_string(),
                    sm_count: s.sms,
                    colocated_us: s.real,
                    at: format!("{victim} beside {co}"),
                })
                .collect();
            // `fit` asks for the prediction at each measured row in order.
            let mut next = 0;
            let predicted_of = |_: &MeasuredRow| {
                let p = of[next].predicted;
                next += 1;
                Ok(p)
            };
            // Shares are percentages: the correction's split width is read
            // against 100.
            let correction = TaskCorrection::fit(&measured, predicted_of, 100)?;
            for s in &of[given..] {
                let factor = correction
                    .factor(s.victim, s.co_runner, s.sms)
                    .unwrap_or(1.0);
                real.push(s.real);
                corrected.push(s.predicted * factor);
            }
        }
        out.push(FewShot {
            k,
            rows: real.len(),
            mape: mape(&real, &corrected),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(case: &str, real: f64, predicted: f64) -> RealRow {
        RealRow {
            set: "gpulet-pairs",
            case: case.into(),
            real,
            simulated: None,
            predicted: Some(predicted),
        }
    }

    #[test]
    fn measured_sides_correct_a_predictor_that_is_off_by_a_constant() {
        // Every real slowdown is 1.5; the predictor says 1.0.
        let rows: Vec<RealRow> = (0..30)
            .map(|i| {
                side(
                    &format!("resnet50@{} p{} | vgg19@1 p{}", i + 1, 20 + i, 80 - i),
                    1.5,
                    1.0,
                )
            })
            .collect();
        let f = few_shot(&rows).unwrap();
        assert_eq!(f[0].k, 0);
        assert!((f[0].mape - 100.0 / 3.0).abs() < 1e-9, "{f:?}");
        assert_eq!(f[0].rows, 30);
        assert_eq!(f[2].rows, 20, "the 10 measured sides are not scored");
        assert!(f[2].mape < f[1].mape && f[1].mape < f[0].mape, "{f:?}");
    }
}
