use super::*;

#[test]
fn records_round_trip_through_a_line() {
    let records = [
        Record::Sweep,
        Record::Begin(0x2a),
        Record::Start(0x2b),
        Record::Pass {
            seed: 1,
            hash: "ab".into(),
        },
        Record::Fail {
            seed: u64::MAX,
            class: FailureClass::Deadlock,
            message: "two\nlines\twith \\ tab".into(),
        },
        Record::Run {
            seed: 3,
            hash: "cd".into(),
            events: 12,
            end_ns: 7,
        },
        Record::Panic {
            seed: 4,
            class: FailureClass::Escape,
            message: "x".into(),
        },
        Record::Hang {
            seed: 5,
            message: "stuck".into(),
        },
        Record::Branched(0x9e37),
        Record::Unforked("a thread\twas alive".into()),
        Record::BranchEnded {
            salt: 7,
            status: 256,
        },
        Record::Declare(SiteRecord {
            kind: crate::property::Kind::AlwaysOrUnreachable,
            location: "src/lib.rs:3:5".into(),
            message: "a\ttab and\na line".into(),
        }),
        Record::Property {
            seed: 6,
            site: SiteRecord {
                kind: crate::property::Kind::Sometimes,
                location: "tests/t.rs:10:9".into(),
                message: "queue full".into(),
            },
            held: 2,
            broken: 40,
            fresh: 1,
        },
    ];
    for record in records {
        let line = record.to_line();
        assert!(!line.contains('\n'), "{line}");
        assert_eq!(Record::parse(&line), Some(record));
    }
    assert_eq!(Record::parse("fail\t0x1"), None);
    assert_eq!(Record::parse(""), None);
}

#[test]
fn every_class_has_a_name_that_parses_back() {
    for name in [
        "panic",
        "deadlock",
        "time-limit",
        "step-limit",
        "livelock",
        "hang",
        "escape",
        "crash",
        "nondeterminism",
        "correctness",
        "liveness",
        "assertion",
        "consistency",
    ] {
        assert_eq!(FailureClass::parse(name).unwrap().as_str(), name);
    }
}

#[test]
fn a_hang_report_says_whether_virtual_time_moved() {
    let moved = super::watchdog::virtual_time_moved(0, 2_500_000_000);
    assert_eq!(moved, "virtual time moved from 0.000000s to 2.500000s");
    let still = super::watchdog::virtual_time_moved(7_000, 7_000);
    assert!(
        still.starts_with("virtual time stood still at 0.000007s the whole time"),
        "{still}"
    );
}
