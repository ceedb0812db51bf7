//! The fleet dashboard at `/ui/`, in headless Chromium against `flotilla up`: an administrator
//! signs in with a token, sees the six members, follows a staged run created with kubectl as
//! its stage diagram changes live, finds the approval waiting with the command that grants
//! it, runs that command, and sees the run succeed, all without a reload. A viewer sees the
//! fleet but is offered no mutation and is refused one by the hub; nobody unauthenticated
//! gets data. Screenshots of every page land in `target/test-artifacts/dashboard-*/`; the
//! 1,000-member figure is `dashboard_scale.rs`'s.

mod common;

use common::browser::{Browser, artifacts_dir};
use common::dashboard::sign_in;
use common::{HubProcess, examples_dir, member_kubeconfig, on_member};
use serde_json::Value;

const VIEWER_TOKEN: &str = "viewer-token-0123456789abcdef";

/// A disruption decision whose message is markup that would run if a page inserted it as HTML.
const HOSTILE_EVENT: &str = r#"apiVersion: v1
kind: Event
metadata:
  name: default-abcde.hostile
  namespace: default
involvedObject:
  apiVersion: karpenter.sh/v1
  kind: NodeClaim
  name: default-abcde
reason: DisruptionBlocked
message: <img src=x onerror="window.pwned=1"> budget says no
type: Normal
"#;

/// The HTTP status of `fetch(path, {method})` from the page, with the page's session token
/// (if `with_token`) and no other credentials.
fn fetch_status(browser: &Browser, method: &str, path: &str, with_token: bool) -> u64 {
    let script = r#"
        const [method, path, withToken] = arguments;
        const headers = {};
        const token = sessionStorage.getItem('flotilla.token');
        if (withToken && token) headers.Authorization = 'Bearer ' + token;
        return fetch(path, {method, headers}).then((r) => r.status);
    "#;
    browser
        .execute(
            script,
            &[method.into(), path.into(), Value::Bool(with_token)],
        )
        .as_u64()
        .expect("a status code")
}

#[test]
fn an_admin_follows_a_staged_run_live_and_approves_it_with_kubectl() {
    let hub = HubProcess::start_with(&["--clock-speed", "240"]);
    let artifacts = artifacts_dir("dashboard-staged-run");
    let browser = Browser::start(&artifacts);

    browser.goto(&format!("{}/ui/", hub.server()));
    browser.wait_for("the login form", 30, || browser.find("#token"));
    browser.screenshot("01-login");
    sign_in(&browser, &hub, &hub.admin_token());
    assert_eq!(browser.text("#user").unwrap(), "flotilla-admin");
    browser.wait_for_text("#fleet-summary", "6 members · 6 joined · 6 healthy", 60);
    for region in ["eastus", "westeurope", "westus"] {
        let section = format!("section.region[data-region=\"{region}\"]");
        assert!(browser.find(&section).is_some(), "no region {region}");
    }
    let row = browser
        .text("tr[data-member=\"member-cluster-01\"]")
        .unwrap();
    for expected in [
        "Joined",
        "Healthy",
        "1.31.2",
        "AKSUbuntu-2204gen2containerd",
    ] {
        assert!(row.contains(expected), "{expected} missing from {row}");
    }
    browser.screenshot("02-fleet");

    // Open the run's page before the run exists: everything after arrives by watch.
    browser.execute("window.notReloaded = true; location.hash = '#/staged-runs/example-staged-update-run'; return 0", &[]);
    browser.wait_for_text(
        "main",
        "There is no staged update run example-staged-update-run",
        30,
    );
    hub.kubectl_ok(&["create", "namespace", "test-namespace"]);
    for file in [
        "crp-staged-update.yaml",
        "staged-update-strategy.yaml",
        "staged-update-run.yaml",
    ] {
        let path = examples_dir().join(file);
        hub.kubectl_ok(&["apply", "-f", path.to_str().unwrap()]);
    }
    browser.wait_for("the stage diagram", 60, || {
        browser.find(".stage[data-stage=\"staging\"]")
    });
    let stages: Vec<String> = browser
        .find_all(".stage h2")
        .iter()
        .map(|h| {
            h.text()
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(stages, ["staging", "canary", "production", "Deletion"]);
    browser.screenshot("03-staged-run-started");
    browser.wait_for("staging to succeed", 120, || {
        browser.find(".stage[data-stage=\"staging\"][data-state=\"Succeeded\"]")
    });
    let staging = browser.text(".stage[data-stage=\"staging\"]").unwrap();
    assert!(staging.contains("member-cluster-02 Succeeded"), "{staging}");
    assert!(staging.contains("Elapsed"), "{staging}");

    // The canary stage updates, then waits for its approval, with the command that grants it.
    let approval = ".task.approval[data-request=\"example-staged-update-run-after-canary\"]";
    let waiting = browser.wait_for_text(approval, "WaitingForApproval", 120);
    assert!(
        waiting.contains("flotilla approve example-staged-update-run-after-canary"),
        "{waiting}"
    );
    let canary = browser.text(".stage[data-stage=\"canary\"]").unwrap();
    assert!(canary.contains("member-cluster-01 Succeeded"), "{canary}");
    assert!(canary.contains("member-cluster-03 Succeeded"), "{canary}");
    let production = browser.text(".stage[data-stage=\"production\"]").unwrap();
    assert!(
        production.contains("member-cluster-05 NotStarted"),
        "{production}"
    );
    browser.screenshot("04-approval-waiting");
    // The page redraws as the run moves, so an element found may be gone when read: look again.
    let patch = browser.wait_for("the kubectl approval command on the page", 30, || {
        browser
            .find_all(&format!("{approval} code.command"))
            .iter()
            .filter_map(|c| c.current_text())
            .find(|c| c.starts_with("kubectl patch clusterapprovalrequests"))
    });
    hub.shell_ok(&patch);

    browser.wait_for_text("#run-state", "Succeeded", 180);
    for stage in ["staging", "canary", "production"] {
        let done = format!(".stage[data-stage=\"{stage}\"][data-state=\"Succeeded\"]");
        assert!(browser.find(&done).is_some(), "{stage} did not succeed");
    }
    let after = browser.text(".stage[data-stage=\"canary\"]").unwrap();
    assert!(after.contains("Approved"), "{after}");
    assert_eq!(
        browser.execute("return window.notReloaded === true", &[]),
        true
    );
    browser.screenshot("05-staged-run-succeeded");

    // The other pages, as the admin sees them.
    browser.goto(&format!("{}/ui/#/staged-runs", hub.server()));
    browser.wait_for_text("table.runs", "example-staged-update-run", 30);
    browser.screenshot("06-staged-runs");
    browser.goto(&format!(
        "{}/ui/#/placements/crp-staged-update-sample",
        hub.server()
    ));
    // The placement's own status may draw the rows before the scheduling decisions arrive
    // (a verdict of Unknown until then): wait for every row's verdict.
    let clusters = browser.wait_for("every cluster's scheduling verdict", 30, || {
        browser
            .text("table.clusters")
            .filter(|t| t.contains("member-cluster-06") && !t.contains("Unknown"))
    });
    assert!(clusters.contains("Selected"), "{clusters}");
    assert!(browser.text("main").unwrap().contains("test-namespace"));
    browser.screenshot("07-placement");
    browser.goto(&format!("{}/ui/#/update-runs", hub.server()));
    browser.wait_for_text("main", "No update runs", 30);
    browser.screenshot("08-update-runs");
    // A decision whose message is markup is shown as text, never run.
    let member = member_kubeconfig(&hub, "member-cluster-01");
    let event = hub.dir().join("hostile-event.yaml");
    std::fs::write(&event, HOSTILE_EVENT).unwrap();
    on_member(&hub, &member, &["create", "-f", event.to_str().unwrap()]).expect("event created");
    let pool = examples_dir().join("nodes/nodepool-default.yaml");
    on_member(&hub, &member, &["apply", "-f", pool.to_str().unwrap()]).expect("pool applied");
    browser.goto(&format!("{}/ui/#/nodes/member-cluster-01", hub.server()));
    browser.wait_for_text("main", "aks-system", 30);
    let decisions = browser.wait_for_text("table.decisions", "<img src=x", 30);
    assert!(decisions.contains("NodeClaim default-abcde"), "{decisions}");
    assert_eq!(
        browser.execute("return window.pwned === undefined", &[]),
        true
    );
    // The pool says how many nodes each reason may disrupt now, and which budget says so.
    let budgets = browser.wait_for_text(
        "section.pool[data-pool=\"default\"] table.budgets",
        "Underutilized",
        30,
    );
    assert!(budgets.contains("budget"), "{budgets}");
    browser.screenshot("09-node-pools");
    let errors: Vec<String> = browser
        .console_errors()
        .into_iter()
        .filter(|e| !e.contains("401"))
        .collect();
    assert!(errors.is_empty(), "console errors: {errors:?}");
}

#[test]
fn a_viewer_sees_the_fleet_but_no_mutation_and_strangers_get_no_data() {
    let tokens = format!("{VIEWER_TOKEN},vera,vera-uid,\"fleet:viewers\"\n");
    let hub = HubProcess::start_with_files(&[], &[("tokens.csv", &tokens)]);
    let artifacts = artifacts_dir("dashboard-viewer");
    let browser = Browser::start(&artifacts);
    let members = "/apis/cluster.kubernetes-fleet.io/v1beta1/memberclusters";

    // The pages are public; the data is not.
    browser.goto(&format!("{}/ui/", hub.server()));
    browser.wait_for("the login form", 30, || browser.find("#token"));
    assert_eq!(fetch_status(&browser, "GET", members, false), 401);
    assert_eq!(
        fetch_status(
            &browser,
            "GET",
            "/clusters/member-cluster-01/api/v1/nodes",
            false
        ),
        401
    );
    browser.type_into("#token", "not-a-token");
    browser.click("#sign-in");
    browser.wait_for_text("#login-message", "did not accept", 30);
    browser.screenshot("01-login-refused");

    sign_in(&browser, &hub, VIEWER_TOKEN);
    assert_eq!(browser.text("#user").unwrap(), "vera");
    browser.wait_for_text("#fleet-summary", "6 members · 6 joined", 60);
    browser.screenshot("02-viewer-fleet");
    // Reads go out as the viewer, whom the hub lets read and refuses to change anything.
    assert_eq!(fetch_status(&browser, "GET", members, true), 200);
    let forecast = "/apis/updates.flotilla.dev/v1beta1/updateruns/none/forecast";
    assert_eq!(fetch_status(&browser, "GET", forecast, false), 401);
    assert_eq!(fetch_status(&browser, "GET", forecast, true), 404);
    assert_eq!(
        fetch_status(
            &browser,
            "DELETE",
            &format!("{members}/member-cluster-01"),
            true
        ),
        403
    );
    // No page offers a way to change anything: no forms, inputs or buttons beyond
    // navigation, the fleet filter, region folding, paging and signing out.
    let mutations = "form, textarea, select, input:not(#member-filter), \
                     button:not(#sign-out):not([data-region]):not([data-more])";
    for page in [
        "fleet",
        "placements",
        "staged-runs",
        "update-runs",
        "nodes",
        "nodes/member-cluster-02",
    ] {
        browser.execute(&format!("location.hash = '#/{page}'; return 0"), &[]);
        browser.wait_for(&format!("page {page}"), 30, || {
            let text = browser.text("main")?;
            (!text.contains("Loading")).then_some(())
        });
        assert!(
            browser.find_all(mutations).is_empty(),
            "page {page} offers a control: {:?}",
            browser.text("main")
        );
        browser.screenshot(&format!("03-viewer-{}", page.replace('/', "-")));
    }

    // Signing out forgets the token: the data is refused again.
    browser.click("#sign-out");
    browser.wait_for("the login form", 30, || browser.find("#token"));
    assert_eq!(fetch_status(&browser, "GET", members, true), 401);
}

#[test]
fn the_pages_read_quantities_durations_and_states_as_kubernetes_writes_them() {
    let hub = HubProcess::start();
    let browser = Browser::start(&artifacts_dir("dashboard-helpers"));
    browser.goto(&format!("{}/ui/", hub.server()));
    browser.wait_for("the login form", 30, || browser.find("#token"));
    let script = r#"
        return Promise.all([import('./js/html.js'), import('./js/staged_runs.js')]).then(([h, runs]) => {
            const run = (conditions, state) => ({spec: {state}, status: {conditions}});
            const c = (type, status, reason = '') => ({type, status, reason, message: reason});
            return {
                quantities: ['5790m', '22455Mi', '6', '1.5Gi', '100k', '2e3', 'bogus'].map(h.quantity),
                durations: ['1h0m0s', '30m', '90s', '1h30m15s', '250ms'].map(h.goDuration),
                spans: [0, 59, 61, 3600 * 5 + 600, 86400 * 2 + 3600 * 3].map(h.span),
                escaped: h.esc('<b a="1">&\'</b>'),
                badge: h.badge('Failed', 'why'),
                states: [
                    run([c('Initialized', 'False', 'bad strategy')]),
                    run([c('Initialized', 'True'), c('Progressing', 'True')]),
                    run([c('Initialized', 'True'), c('Progressing', 'False', 'UpdateRunWaiting')]),
                    run([c('Initialized', 'True'), c('Progressing', 'False', 'UpdateRunStopped')]),
                    run([c('Initialized', 'True'), c('Succeeded', 'True')]),
                    run([c('Initialized', 'True')], 'Initialize'),
                    run([c('Initialized', 'True'), c('Progressing', 'False', 'UpdateRunNotStarted')], 'Initialize'),
                    run([c('Initialized', 'True'), c('Progressing', 'True', 'UpdateRunStopping')]),
                    run([c('Initialized', 'True'), c('Progressing', 'False', 'UpdateRunStuck')]),
                ].map((r) => runs.runState(r)[0]),
            };
        });
    "#;
    let got = browser.execute(script, &[]);
    let expected = serde_json::json!({
        // JSON numbers: integral values come back as integers.
        "quantities": [5.79, 22_455u64 << 20, 6, 3u64 << 29, 100_000, 2000, null],
        "durations": [3600, 1800, 90, 5415, 0.25],
        "spans": ["0s", "59s", "1m 1s", "5h 10m", "2d 3h"],
        "escaped": "&#60;b a=&#34;1&#34;&#62;&#38;&#39;&#60;/b&#62;",
        "badge": "<span class=\"badge bad\" data-state=\"Failed\" title=\"why\">Failed</span>",
        "states": ["Failed", "Running", "Waiting", "Stopped", "Succeeded", "NotStarted", "NotStarted", "Stopping", "Stuck"],
    });
    assert_eq!(got, expected);
}
