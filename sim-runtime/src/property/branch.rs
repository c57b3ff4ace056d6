//! Branch runs (guided exploration): a run of a seed that, each time it
//! reaches one of its branch points, draws everything after afresh. A
//! branch point is a property's n-th satisfaction in the run; since a run
//! is its seed's up to there, the prefix is replayed exactly, and the
//! suffix is another (the same for the same salt). The runner makes the
//! plans (`cargo-sim/src/explore.rs`); a plan reaches a test process as
//! `SIM_BRANCH`, which a branch run's replay line sets too.
//!
//! The format: cuts in the order the run reaches them, separated by `;`,
//! each `<salt>@<n>@<file:line:column>`.

use std::sync::OnceLock;

/// One branch point of a plan.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cut {
    /// What the streams mix in from the point on.
    pub salt: u64,
    /// The satisfaction of the property (counted in the run, from 1).
    pub nth: u64,
    /// The property's site, `file:line:column`.
    pub location: String,
}

/// A branch run's points, in the order it reaches them.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Plan {
    /// The points.
    pub cuts: Vec<Cut>,
}

impl Plan {
    /// Reads what [`Plan::encode`] wrote.
    ///
    /// # Errors
    /// A cut that is not `<salt>@<n>@<file:line:column>`.
    pub fn parse(text: &str) -> Result<Plan, String> {
        let cuts = text
            .split(';')
            .filter(|c| !c.trim().is_empty())
            .map(|cut| {
                let bad = || {
                    format!(
                        "sim: error: SIM_BRANCH: {cut:?} is not a branch point: expected \
                         <salt>@<n>@<file:line:column>, as a branch run's replay line gives it"
                    )
                };
                let mut parts = cut.trim().splitn(3, '@');
                let salt =
                    crate::config::parse_seed(parts.next().ok_or_else(bad)?).map_err(|_| bad())?;
                let nth = parts.next().ok_or_else(bad)?.parse().map_err(|_| bad())?;
                let location = parts.next().filter(|l| !l.is_empty()).ok_or_else(bad)?;
                Ok(Cut {
                    salt,
                    nth,
                    location: location.to_string(),
                })
            })
            .collect::<Result<Vec<Cut>, String>>()?;
        Ok(Plan { cuts })
    }

    /// The plan as `SIM_BRANCH` holds it.
    pub fn encode(&self) -> String {
        self.cuts
            .iter()
            .map(|c| format!("{:#x}@{}@{}", c.salt, c.nth, c.location))
            .collect::<Vec<_>>()
            .join(";")
    }

    /// The plan with one more point.
    pub fn then(&self, cut: Cut) -> Plan {
        let mut cuts = self.cuts.clone();
        cuts.push(cut);
        Plan { cuts }
    }
}

/// The process's plan (`SIM_BRANCH`), read once.
///
/// # Panics
/// On a plan that does not parse (the message says how to write one).
pub(crate) fn plan() -> Option<&'static Plan> {
    static PLAN: OnceLock<Option<Plan>> = OnceLock::new();
    PLAN.get_or_init(|| {
        let text = crate::settings::BRANCH.value()?;
        Some(Plan::parse(&text).unwrap_or_else(|e| panic!("{e}")))
    })
    .as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_round_trips_and_a_bad_one_is_named() {
        let plan = Plan::default()
            .then(Cut {
                salt: 0x9e3,
                nth: 1,
                location: "tests/deep.rs:20:9".into(),
            })
            .then(Cut {
                salt: 7,
                nth: 2,
                location: "src/a@b.rs:1:1".into(),
            });
        let text = plan.encode();
        assert_eq!(text, "0x9e3@1@tests/deep.rs:20:9;0x7@2@src/a@b.rs:1:1");
        assert_eq!(Plan::parse(&text), Ok(plan));
        let err = Plan::parse("0x1@x@a.rs:1:1").unwrap_err();
        assert!(
            err.contains("SIM_BRANCH: \"0x1@x@a.rs:1:1\" is not a branch point"),
            "{err}"
        );
    }
}
