//! Nothing in the workspace reads a `SIM_*` variable except through the
//! registry (`sim_runtime::settings`): every `env::var` call outside it
//! names a variable that is not the simulator's (`CARGO`, `RUSTC`, ...) as
//! a string literal, so a new setting cannot be read without being listed,
//! documented and known to the typo warning.

mod common;

#[test]
fn the_environment_is_read_through_the_registry_alone() {
    let offences = common::offending_lines(|file, lines, number| {
        if file.ends_with("sim-runtime/src/settings.rs") {
            return false;
        }
        // A marked read of another program's variable: the comment on its
        // line or the one after (where rustfmt puts it).
        let near = |n: usize| {
            lines
                .get(n)
                .is_some_and(|l| l.contains("not a SIM_ variable"))
        };
        let line = lines[number];
        ["env::var(", "env::var_os("].iter().any(|call| {
            let Some(at) = line.find(call) else {
                return false;
            };
            let argument = line[at + call.len()..].trim_start();
            let ours = argument
                .strip_prefix('"')
                .is_none_or(|name| name.starts_with("SIM_"));
            // `decision::var` checks its name against the registry.
            let checked =
                line.contains("std::env::var(setting.name)") || near(number) || near(number + 1);
            ours && !checked
        })
    });
    assert!(
        offences.is_empty(),
        "read these through sim_runtime::settings (add the setting to its table):\n{}",
        offences.join("\n")
    );
}

#[test]
fn every_setting_is_documented_in_a_line() {
    for setting in sim_runtime::settings::ALL {
        assert!(
            !setting.doc.is_empty() && !setting.doc.contains('\n'),
            "{}",
            setting.name
        );
        assert!(!setting.default.is_empty(), "{}", setting.name);
    }
}
