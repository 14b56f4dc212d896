//! The token never reaches an output: not the report, its warnings and outcome details, the
//! audit records, an error, nor the `Debug` form of the client.

use mp_github_fake::FaultScript;

use crate::harness::{Scenario, TOKEN, client_for, runtime, scenario_worlds, serve, tick_over};

#[track_caller]
fn check_no_token(what: &str, text: &str) {
    assert!(!text.contains(TOKEN), "{what} contains the token:\n{text}");
    assert!(
        !text.contains("LOOPBACKSENTINEL"),
        "{what} contains part of the token:\n{text}"
    );
}

#[test]
fn no_token_in_any_output_even_under_faults() {
    let runtime = runtime();
    let scripts = [
        "",
        "* #2 status 500\n* #5 drop\n* #7 malformed",
        "* #* status 401",
    ];
    let mut checked = 0;
    for (name, path) in scenario_worlds().into_iter().filter(|(name, _)| {
        [
            "mode-merge",
            "comments-unreadable-skipped",
            "sup-l2-real-failure",
        ]
        .contains(&name.as_str())
    }) {
        let scenario = Scenario::load(&name, &path);
        for script in scripts {
            let faults: FaultScript = script.parse().expect("a valid fault script");
            runtime.block_on(async {
                let server = serve(&scenario, faults).await;
                let client = client_for(&server);
                check_no_token("the client's Debug", &format!("{client:?}"));
                let result = tick_over(&client, &scenario).await;
                check_no_token("the tick report", &format!("{:?}", result.report));
                check_no_token("the audit records", &result.audit.join("\n"));
                check_no_token("the client's stats", &format!("{:?}", client.stats()));
                server.shutdown().await;
            });
            checked += 1;
        }
    }
    assert_eq!(checked, 9, "three scenarios under three fault scripts");
}
