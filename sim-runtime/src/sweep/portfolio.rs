//! The policy portfolio: without `SIM_POLICY`, a sweep of many seeds
//! spreads them over the uniform policy and PCT at depths 2 and 3, so one
//! default sweep meets shallow races (where the uniform draw is best) and
//! deep ones that need a task starved at one point (where PCT is). Each
//! seed's policy, PCT's depth and horizon included, is a function of the
//! seed (a stream of its own in the seed tree): the horizon is one of
//! [`HORIZONS`], since a run's length in decisions is not known before it
//! runs. A PCT seed's replay line names its policy (`SIM_POLICY=pct
//! SIM_PCT_DEPTH=2 SIM_PCT_HORIZON=1000 SIM_SEED=...`), so it replays
//! alone.
//!
//! The runner turns the portfolio on for a sweep of more than one seed
//! ([`PORTFOLIO_VAR`]); a single seed, a replay and a program's run keep
//! the uniform policy.

use crate::config::{Policy, POLICY_VAR};
use crate::rng::Rng;

/// Set (`1`) by the runner for the test processes of a sweep under the
/// portfolio.
pub const PORTFOLIO_VAR: &str = crate::settings::SWEEP_PORTFOLIO.name;

/// Seeds out of [`PORTFOLIO_SHARES`] that run under each policy: the
/// uniform draw, PCT of depth 2, PCT of depth 3.
pub const PORTFOLIO: [(Option<u32>, u64); 3] = [(None, 2), (Some(2), 1), (Some(3), 1)];

/// The shares [`PORTFOLIO`] divides seeds into.
pub const PORTFOLIO_SHARES: u64 = 4;

/// The horizons (in scheduling decisions) a PCT seed of the portfolio
/// spreads its change points over, one drawn per seed: short runs and long
/// ones both get change points inside them.
pub const HORIZONS: [u64; 3] = [100, 1_000, 10_000];

/// Whether this process's runs follow the portfolio: the runner asked for
/// it, this is one of the runner's own test processes (not a program a
/// test starts, which inherits the variable), and nothing (`SIM_POLICY`, a
/// replayed decision file) names a policy.
pub fn active() -> bool {
    crate::settings::SWEEP_PORTFOLIO.is_on()
        && super::record::reporting()
        && matches!(crate::decision::var(POLICY_VAR), Ok(None))
}

/// The PCT depth and horizon the portfolio gives `seed`, or `None` for
/// the uniform policy.
pub fn pct(seed: u64) -> Option<(u32, u64)> {
    let mut rng = Rng::named(seed, "policy portfolio");
    let mut draw = rng.below(PORTFOLIO_SHARES);
    for (depth, shares) in PORTFOLIO {
        if draw < shares {
            let horizon = HORIZONS[rng.below(HORIZONS.len() as u64) as usize];
            return depth.map(|depth| (depth, horizon));
        }
        draw -= shares;
    }
    unreachable!("the portfolio's shares add up to {PORTFOLIO_SHARES}")
}

/// `seed`'s policy under the portfolio.
pub fn policy(seed: u64) -> Policy {
    match pct(seed) {
        None => Policy::Random,
        Some((depth, horizon)) => Policy::Pct { depth, horizon },
    }
}

/// What a replay line says before `SIM_SEED` for `seed`, when a sweep ran
/// it under the portfolio (`SIM_POLICY=pct SIM_PCT_DEPTH=2
/// SIM_PCT_HORIZON=1000 `), or nothing.
pub fn replay_settings(seed: u64) -> String {
    if crate::settings::SWEEP_PORTFOLIO.is_on() {
        if let Some((depth, horizon)) = pct(seed) {
            return format!("SIM_POLICY=pct SIM_PCT_DEPTH={depth} SIM_PCT_HORIZON={horizon} ");
        }
    }
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_portfolio_spreads_seeds_as_its_shares_say() {
        let depths: Vec<Option<u32>> = (0..4_000).map(|s| pct(s).map(|p| p.0)).collect();
        let count = |d: Option<u32>| depths.iter().filter(|&&x| x == d).count();
        assert!((1_800..2_200).contains(&count(None)), "{}", count(None));
        assert!((850..1_150).contains(&count(Some(2))), "{}", count(Some(2)));
        assert!((850..1_150).contains(&count(Some(3))), "{}", count(Some(3)));
        assert_eq!(pct(77), pct(77), "a function of the seed");
        let horizons: std::collections::BTreeSet<u64> =
            (0..400).filter_map(pct).map(|p| p.1).collect();
        assert_eq!(horizons.into_iter().collect::<Vec<_>>(), HORIZONS);
    }
}
