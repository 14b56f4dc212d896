//! Tests for receipt MACs, reading receipts from comments, and the receipt writer.

use super::*;
use crate::gate::testkit::{
    BOT, OWNER, Pr, at, comment, login, receipt, receipt_comment, repo, sha,
};

fn key() -> ReceiptKey {
    ReceiptKey::new("s3cret").expect("non-empty key")
}

mod mac {
    use super::*;

    /// `digest` is the expected `mac_hex`; it must verify, and a one-part change must not.
    #[track_caller]
    fn check(key: &ReceiptKey, parts: &[&str], digest: &str) {
        assert_eq!(mac_hex(key, parts), digest);
        assert!(verify_mac_hex(key, parts, digest));
        assert!(verify_mac_hex(key, parts, &digest.to_ascii_uppercase()));
        let mut changed: Vec<String> = parts.iter().map(|p| (*p).to_owned()).collect();
        changed[0].push('x');
        let changed: Vec<&str> = changed.iter().map(String::as_str).collect();
        assert!(!verify_mac_hex(key, &changed, digest));
    }

    #[test]
    fn matches_the_rfc_4231_vector() {
        let jefe = ReceiptKey::new("Jefe").expect("key");
        check(
            &jefe,
            &["what do ya want for nothing?"],
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
        );
    }

    #[test]
    fn parts_are_joined_with_a_bar() {
        let joined = mac_hex(&key(), &["acme/widget|7"]);
        check(&key(), &["acme/widget", "7"], &joined);
    }

    #[test]
    fn empty_truncated_or_garbage_digests_fail() {
        let good = mac_hex(&key(), &["x"]);
        for bad in ["", "zz", &good[..62], &format!("{good}00")] {
            assert!(!verify_mac_hex(&key(), &["x"], bad), "{bad:?} verified");
        }
    }

    #[test]
    fn empty_key_is_no_key_and_debug_is_redacted() {
        assert!(ReceiptKey::new("").is_none());
        assert_eq!(format!("{:?}", key()), "[redacted]");
        assert_eq!(format!("{:?}", Some(key())), "Some([redacted])");
    }

    #[test]
    fn marker_needs_prefix_and_end_and_the_last_wins() {
        let body = "x\n<!-- merge-gate-mac: aa -->\n  <!-- merge-gate-mac: bb -->  \n<!-- merge-gate-mac: cc\n";
        assert_eq!(marker_value(body, MAC_MARKER), Some("bb"));
        assert_eq!(
            marker_value("say <!-- merge-gate-mac: aa -->", MAC_MARKER),
            None
        );
        assert_eq!(marker_value("<!-- merge-gate-mac: -->", MAC_MARKER), None);
    }
}

mod rotation {
    use super::*;

    fn old() -> ReceiptKey {
        ReceiptKey::new("old-s3cret").expect("non-empty key")
    }

    fn at_noon() -> Timestamp {
        at("2026-03-10T12:00:00Z")
    }

    #[test]
    fn the_ring_signs_with_the_current_key_and_accepts_the_previous_one() {
        let ring = key().with_previous(old());
        assert!(ring.has_previous());
        let parts = ["acme/widget", "7"];
        assert_eq!(mac_hex(&ring, &parts), mac_hex(&key(), &parts));
        let by_old = mac_hex(&old(), &parts);
        assert_eq!(
            mac_generation(&ring, &parts, &by_old),
            Some(KeyGeneration::Previous)
        );
        assert_eq!(
            mac_generation(&ring, &parts, &mac_hex(&key(), &parts)),
            Some(KeyGeneration::Current)
        );
        assert_eq!(mac_generation(&key(), &parts, &by_old), None);
        let other = ReceiptKey::new("other").expect("key");
        assert_eq!(
            mac_generation(&ring, &parts, &mac_hex(&other, &parts)),
            None
        );
        // The current key is never its own previous key.
        assert!(!key().with_previous(key()).has_previous());
    }

    #[test]
    fn the_window_admits_the_previous_key_until_it_ends() {
        let previous = |until: &str| PreviousReceiptKey {
            key: old(),
            until: at(until),
        };
        let parts = ["x"];
        let by_old = mac_hex(&old(), &parts);
        let (open, note) = rotation_ring(key(), Some(previous("2026-03-11T12:00:00Z")), at_noon())
            .expect("a one-day window");
        assert!(verify_mac_hex(&open, &parts, &by_old));
        assert!(
            note.expect("a note")
                .contains("count until 2026-03-11T12:00:00Z")
        );
        for ended in ["2026-03-10T12:00:00Z", "2026-03-10T11:00:00Z"] {
            let (closed, note) =
                rotation_ring(key(), Some(previous(ended)), at_noon()).expect("accepted");
            assert!(!verify_mac_hex(&closed, &parts, &by_old), "{ended}");
            assert!(note.expect("a note").contains("no longer count"));
        }
        let (alone, note) = rotation_ring(key(), None, at_noon()).expect("no rotation");
        assert!(!alone.has_previous());
        assert_eq!(note, None);
    }

    #[test]
    fn a_window_longer_than_thirty_days_is_refused() {
        let long = PreviousReceiptKey {
            key: old(),
            until: at("2026-04-09T12:00:01Z"),
        };
        let err = rotation_ring(key(), Some(long.clone()), at_noon()).expect_err("too long");
        assert!(err.to_string().contains("more than 30 days"), "{err}");
        let thirty = PreviousReceiptKey {
            until: at("2026-04-09T12:00:00Z"),
            ..long
        };
        assert!(thirty.check_window(at_noon()).is_ok());
    }

    #[test]
    fn a_receipt_signed_with_the_previous_key_reads_as_needing_a_new_signature() {
        let body = render_receipt(
            ReceiptLabel::ApprovedA,
            &sha("c"),
            &repo(),
            PrNumber::new(7),
            Some(&old()),
        );
        let comments = [comment(1, BOT, &body, "2026-03-01T10:00:00Z")];
        let bot = login(BOT);
        let ring = key().with_previous(old());
        let read = Receipts::parse(
            &comments,
            &repo(),
            PrNumber::new(7),
            Some(&bot),
            Some(&ring),
        );
        let receipt = read
            .get("decision:approved-A")
            .expect("verified by the previous key");
        assert!(receipt.needs_resigning());
        let read = Receipts::parse(
            &comments,
            &repo(),
            PrNumber::new(7),
            Some(&bot),
            Some(&key()),
        );
        assert!(read.is_empty());
        assert_eq!(read.ignored()[0].reason, IgnoredReason::MacMismatch);
        let current = render_receipt(
            ReceiptLabel::ApprovedA,
            &sha("c"),
            &repo(),
            PrNumber::new(7),
            Some(&ring),
        );
        let comments = [comment(2, BOT, &current, "2026-03-01T10:00:00Z")];
        let read = Receipts::parse(
            &comments,
            &repo(),
            PrNumber::new(7),
            Some(&bot),
            Some(&key()),
        );
        assert!(
            !read
                .get("decision:approved-A")
                .expect("current")
                .needs_resigning()
        );
    }
}

mod reading {
    use super::*;

    /// Receipts as `label@sha7#comment`, then ignored comments as `ignored #id: code`.
    #[track_caller]
    fn check(comments: &[Comment], bot: Option<&str>, key: Option<&ReceiptKey>, expected: &[&str]) {
        let bot = bot.map(login);
        let receipts = Receipts::parse(comments, &repo(), PrNumber::new(7), bot.as_ref(), key);
        let mut got: Vec<String> = receipts
            .iter()
            .map(|r| {
                let id = r.comment().map_or(0, CommentId::get);
                format!("{}@{}#{id}", r.label(), r.head().short())
            })
            .collect();
        got.extend(
            receipts
                .ignored()
                .iter()
                .map(|i| format!("ignored #{}: {}", i.comment.get(), i.reason.code())),
        );
        assert_eq!(got, expected);
    }

    fn signed(id: u64, label: ReceiptLabel, head: &str, number: u64, created: &str) -> Comment {
        let body = render_receipt(
            label,
            &sha(head),
            &repo(),
            PrNumber::new(number),
            Some(&key()),
        );
        comment(id, BOT, &body, created)
    }

    #[test]
    fn a_rendered_receipt_reads_back() {
        let c = receipt_comment(
            1,
            ReceiptLabel::ReadyToMerge,
            "c0ffee",
            "2026-03-01T10:00:00Z",
        );
        assert!(
            c.body
                .starts_with("Merge Gate: recorded `ready-to-merge` for head `c0ffee0`")
        );
        check(&[c], Some(BOT), None, &["ready-to-merge@c0ffee0#1"]);
    }

    #[test]
    fn receipts_from_other_authors_are_ignored() {
        let mut forged = receipt_comment(1, ReceiptLabel::ApprovedA, "a", "2026-03-01T10:00:00Z");
        forged.author = Some(login("mallory"));
        check(
            &[forged],
            Some(BOT),
            None,
            &["ignored #1: not_bot_authored"],
        );
    }

    #[test]
    fn an_edited_bot_receipt_is_ignored_with_or_without_a_key() {
        let mut edited =
            receipt_comment(1, ReceiptLabel::ReadyToMerge, "c", "2026-03-01T10:00:00Z");
        edited.updated_at = Some(at("2026-03-01T10:20:00Z"));
        check(
            std::slice::from_ref(&edited),
            Some(BOT),
            None,
            &["ignored #1: receipt_edited"],
        );
        let mut signed_edited = signed(2, ReceiptLabel::ApprovedA, "c", 7, "2026-03-01T10:00:00Z");
        signed_edited.updated_at = Some(at("2026-03-01T10:00:01Z"));
        check(
            &[signed_edited],
            Some(BOT),
            Some(&key()),
            &["ignored #2: receipt_edited"],
        );
        // Written and never touched: `updated_at` equals `created_at`.
        let untouched = receipt_comment(3, ReceiptLabel::ReadyToMerge, "c", "2026-03-01T10:00:00Z");
        check(&[untouched], Some(BOT), None, &["ready-to-merge@c000000#3"]);
    }

    #[test]
    fn tampering_is_told_apart_from_migration() {
        assert!(IgnoredReason::MacMismatch.is_tampering());
        assert!(IgnoredReason::NotBotAuthored { author: None }.is_tampering());
        assert!(!IgnoredReason::MacMissing.is_tampering());
        assert!(!IgnoredReason::NoBotUser.is_tampering());
    }

    #[test]
    fn without_a_bot_user_nothing_counts() {
        let c = receipt_comment(1, ReceiptLabel::ApprovedA, "a", "2026-03-01T10:00:00Z");
        check(&[c], None, None, &["ignored #1: no_bot_user"]);
    }

    #[test]
    fn comments_without_markers_are_not_listed() {
        let c = comment(
            1,
            BOT,
            "Merge Gate L1 — merge blocked:\n- C4: ...",
            "2026-03-01T10:00:00Z",
        );
        check(&[c], Some(BOT), None, &[]);
    }

    #[test]
    fn the_latest_receipt_per_label_wins() {
        check(
            &[
                receipt_comment(1, ReceiptLabel::ReadyToMerge, "1", "2026-03-01T08:00:00Z"),
                receipt_comment(2, ReceiptLabel::ApprovedA, "a", "2026-03-01T08:30:00Z"),
                receipt_comment(3, ReceiptLabel::ReadyToMerge, "2", "2026-03-01T09:00:00Z"),
            ],
            Some(BOT),
            None,
            &["decision:approved-A@a000000#2", "ready-to-merge@2000000#3"],
        );
    }

    #[test]
    fn both_markers_are_required_and_must_be_closed() {
        let head = sha("a");
        let no_end = format!(
            "<!-- merge-gate-approval-label: ready-to-merge\n<!-- merge-gate-approved-head-sha: {head} -->"
        );
        let bad_head = "<!-- merge-gate-approval-label: ready-to-merge -->\n<!-- merge-gate-approved-head-sha: abc1234 -->";
        let no_head = "<!-- merge-gate-approval-label: ready-to-merge -->";
        check(
            &[
                comment(1, BOT, &no_end, "2026-03-01T08:00:00Z"),
                comment(2, BOT, bad_head, "2026-03-01T08:00:00Z"),
                comment(3, BOT, no_head, "2026-03-01T08:00:00Z"),
            ],
            Some(BOT),
            None,
            &[
                "ignored #1: label_marker_missing",
                "ignored #2: head_marker_malformed",
                "ignored #3: head_marker_missing",
            ],
        );
    }

    #[test]
    fn with_a_key_a_valid_mac_is_required() {
        check(
            &[
                signed(1, ReceiptLabel::ApprovedB, "b", 7, "2026-03-01T08:00:00Z"),
                receipt_comment(2, ReceiptLabel::ReadyToMerge, "a", "2026-03-01T09:00:00Z"),
                signed(
                    3,
                    ReceiptLabel::ReadyToMerge,
                    "a",
                    8,
                    "2026-03-01T09:30:00Z",
                ),
            ],
            Some(BOT),
            Some(&key()),
            &[
                "decision:approved-B@b000000#1",
                "ignored #2: mac_missing",
                "ignored #3: mac_mismatch",
            ],
        );
    }

    #[test]
    fn a_tampered_head_breaks_the_mac() {
        let good = signed(
            1,
            ReceiptLabel::ReadyToMerge,
            "a",
            7,
            "2026-03-01T08:00:00Z",
        );
        let tampered = comment(
            2,
            BOT,
            &good.body.replace(sha("a").as_str(), sha("e").as_str()),
            "2026-03-01T08:00:00Z",
        );
        check(
            &[good, tampered],
            Some(BOT),
            Some(&key()),
            &["ready-to-merge@a000000#1", "ignored #2: mac_mismatch"],
        );
    }

    #[test]
    fn an_invalid_later_receipt_does_not_displace_a_valid_one() {
        check(
            &[
                signed(
                    1,
                    ReceiptLabel::ReadyToMerge,
                    "a",
                    7,
                    "2026-03-01T08:00:00Z",
                ),
                receipt_comment(2, ReceiptLabel::ReadyToMerge, "e", "2026-03-01T09:00:00Z"),
            ],
            Some(BOT),
            Some(&key()),
            &["ready-to-merge@a000000#1", "ignored #2: mac_missing"],
        );
    }

    #[test]
    fn unsigned_warning_names_the_variable() {
        for needle in [
            "MP_RECEIPT_KEY",
            "unsigned",
            "set it before enforce-mode go-live",
        ] {
            assert!(UNSIGNED_RECEIPTS_WARNING.contains(needle), "{needle}");
        }
    }
}

mod writer {
    use super::*;

    const R2M: &str = "ready-to-merge";
    const A: &str = "decision:approved-A";

    /// One `BindPlan` line per present receipt label, in sorted order.
    #[track_caller]
    fn check(pr: Pr, receipts: &[Receipt], expected: &[&str]) {
        let mut all = Receipts::new();
        for r in receipts {
            all.insert(r.clone());
        }
        let allowlist = [login(OWNER)];
        let bot = login(BOT);
        let plans = plan_receipts(&pr.build(), &all, TrustRoots::new(&allowlist, Some(&bot)));
        let got: Vec<String> = plans.iter().map(ToString::to_string).collect();
        assert_eq!(got, expected);
        for plan in &plans {
            let binding = matches!(plan.code(), "first_bind" | "rebind" | "resign");
            assert_eq!(plan.binds(), binding, "{plan}");
        }
    }

    #[test]
    fn a_label_renamed_after_the_owner_applied_it_is_never_bound() {
        check(
            Pr::new()
                .applied(R2M, OWNER, "2026-03-01T11:00:00Z")
                .label_record(R2M, "2026-01-01T00:00:00Z", "2026-03-01T11:30:00Z"),
            &[],
            &[
                "'ready-to-merge' not bound to head a000000: its applier cannot be determined: the label was edited (renamed, recoloured or re-described) at 2026-03-01T11:30:00Z, not before it was applied at 2026-03-01T11:00:00Z: a rename may have given another label this name; re-apply it",
            ],
        );
    }

    #[test]
    fn first_bind_when_an_allowlisted_human_applied_the_label() {
        check(
            Pr::new().applied(R2M, OWNER, "2026-03-01T11:00:00Z"),
            &[],
            &["bind 'ready-to-merge' to head a000000 (applied by alice)"],
        );
    }

    #[test]
    fn absent_labels_are_not_planned_and_present_ones_come_sorted() {
        check(
            Pr::new()
                .applied(R2M, OWNER, "2026-03-01T11:00:00Z")
                .applied(A, OWNER, "2026-03-01T11:00:00Z")
                .labeled("decision:approved-B", OWNER, "2026-03-01T11:00:00Z"),
            &[],
            &[
                "bind 'decision:approved-A' to head a000000 (applied by alice)",
                "bind 'ready-to-merge' to head a000000 (applied by alice)",
            ],
        );
    }

    #[test]
    fn non_allowlisted_or_bot_or_unknown_appliers_mint_nothing() {
        check(
            Pr::new()
                .applied(R2M, "mallory", "2026-03-01T11:00:00Z")
                .applied(A, BOT, "2026-03-01T11:00:00Z"),
            &[],
            &[
                "'decision:approved-A' not bound to head a000000: it was applied by the bot itself",
                "'ready-to-merge' not bound to head a000000: it was applied by mallory, who is not allowlisted",
            ],
        );
        check(
            Pr::new()
                .label(R2M)
                .labeled_by_nobody(R2M, "2026-03-01T11:00:00Z"),
            &[],
            &["'ready-to-merge' not bound to head a000000: its applier is unknown"],
        );
        check(
            Pr::new().label(R2M),
            &[],
            &[
                "'ready-to-merge' not bound to head a000000: its applier cannot be determined: the timeline has no labeled event for it",
            ],
        );
    }

    #[test]
    fn a_current_receipt_signed_with_the_previous_key_is_signed_again() {
        let previous =
            |label: &str| receipt(label, "a", "2026-03-01T11:01:00Z").signed_with_previous_key();
        check(
            Pr::new()
                .applied(R2M, OWNER, "2026-03-01T11:00:00Z")
                .applied(A, BOT, "2026-03-01T11:30:00Z"),
            &[previous(R2M), previous(A)],
            &[
                "sign the 'decision:approved-A' receipt for head a000000 again with the current receipt key (it verified with the previous key)",
                "sign the 'ready-to-merge' receipt for head a000000 again with the current receipt key (it verified with the previous key)",
            ],
        );
    }

    #[test]
    fn a_ready_to_merge_receipt_github_no_longer_proves_is_not_signed_again() {
        // The previous key verified it, but the label's record names someone else: a
        // receipt forged with a leaked previous key is not carried past the window.
        check(
            Pr::new().applied(R2M, "mallory", "2026-03-01T11:00:00Z"),
            &[receipt(R2M, "a", "2026-03-01T11:01:00Z").signed_with_previous_key()],
            &[
                "'ready-to-merge' not bound to head a000000: its receipt already names the current head",
            ],
        );
    }

    #[test]
    fn a_current_receipt_needs_nothing() {
        check(
            Pr::new().applied(R2M, OWNER, "2026-03-01T11:00:00Z"),
            &[receipt(R2M, "a", "2026-03-01T11:01:00Z")],
            &[
                "'ready-to-merge' not bound to head a000000: its receipt already names the current head",
            ],
        );
    }

    #[test]
    fn stale_ready_to_merge_rebinds_when_relabeled_after_the_head_was_pushed() {
        check(
            Pr::new()
                .labeled(R2M, OWNER, "2026-03-01T08:00:00Z")
                .unlabeled(R2M, OWNER, "2026-03-01T10:00:00Z")
                .applied(R2M, OWNER, "2026-03-01T11:00:01Z"),
            &[receipt(R2M, "1", "2026-03-01T11:00:00Z")],
            &["re-bind 'ready-to-merge' from head 1000000 to head a000000 (re-applied by alice)"],
        );
    }

    #[test]
    fn a_head_pushed_after_the_label_is_not_bound_over_a_stale_receipt() {
        check(
            Pr::new()
                .applied(R2M, OWNER, "2026-03-01T11:00:00Z")
                .pushed("c", "2026-03-01T11:30:00Z"),
            &[receipt(R2M, "a", "2026-03-01T11:05:00Z")],
            &[
                "'ready-to-merge' not bound to head c000000: it was applied at 2026-03-01T11:00:00Z to head a000000; the head is now c000000; re-apply the label",
            ],
        );
    }

    #[test]
    fn a_head_pushed_after_the_label_is_not_bound_when_no_receipt_exists() {
        // The agent pushed before the bot's first tick, or deleted the receipt.
        check(
            Pr::new()
                .applied(R2M, OWNER, "2026-03-01T11:00:00Z")
                .pushed("c", "2026-03-01T11:30:00Z"),
            &[],
            &[
                "'ready-to-merge' not bound to head c000000: it was applied at 2026-03-01T11:00:00Z to head a000000; the head is now c000000; re-apply the label",
            ],
        );
    }

    #[test]
    fn a_label_in_the_second_of_a_push_is_not_bound() {
        check(
            Pr::new()
                .applied(R2M, OWNER, "2026-03-01T11:00:00Z")
                .pushed("c", "2026-03-01T11:00:00Z"),
            &[receipt(R2M, "a", "2026-03-01T10:30:00Z")],
            &[
                "'ready-to-merge' not bound to head c000000: the head branch was updated in the same second as the label (2026-03-01T11:00:00Z); re-apply the label",
            ],
        );
    }

    #[test]
    fn stale_approvals_are_never_rebound() {
        check(
            Pr::new().applied(A, OWNER, "2026-03-01T11:30:00Z"),
            &[receipt(A, "1", "2026-03-01T11:00:00Z")],
            &[
                "'decision:approved-A' not bound to head a000000: its receipt names head 1000000 and approvals are never re-bound",
            ],
        );
    }

    #[test]
    fn bind_plans_use_the_head_at_evaluation() {
        check(
            Pr::new()
                .head("dd")
                .applied(R2M, OWNER, "2026-03-01T11:00:00Z"),
            &[],
            &["bind 'ready-to-merge' to head dd00000 (applied by alice)"],
        );
    }
}
