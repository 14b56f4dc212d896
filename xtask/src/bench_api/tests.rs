//! The options of `cargo xtask bench api` and what a live tick left for the next.

use super::*;

#[test]
fn live_takes_no_value_and_ticks_bounds_the_live_run() {
    let options = parse(&[
        "--repos",
        "50",
        "--live",
        "--ticks",
        "3",
        "--delay-ms",
        "50",
    ])
    .expect("valid options");
    assert!(options.live);
    assert_eq!(
        (options.repos, options.max_ticks, options.delay_ms),
        (50, 3, 50)
    );
    let options = parse(&[]).expect("the defaults");
    assert!(!options.live);
    assert_eq!(options.max_ticks, 8);
    assert!(parse(&["--ticks"]).is_err());
}

#[test]
fn a_live_tick_left_what_its_budget_warning_names() {
    let tick = |warnings: Vec<String>| {
        let mut report = tick::FullTickReport::default();
        report.warnings = warnings;
        LiveTick {
            counts: Counts::new(),
            graphql_points: 0,
            wall: Duration::ZERO,
            report: Ok(report),
        }
    };
    let left = tick(vec![
        "time budget of the pull-request path reached after 181 s (budget 180 s): repositories left for the next tick: 29".to_owned(),
    ]);
    assert_eq!(left.left(), Some("29"));
    assert_eq!(tick(vec!["something else".to_owned()]).left(), None);
    let failed = LiveTick {
        report: Err("the tick lease (all) is held".to_owned()),
        ..tick(Vec::new())
    };
    assert_eq!(failed.left(), None);
}
