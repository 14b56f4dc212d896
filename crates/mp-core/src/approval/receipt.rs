//! Approval receipts: the bot's comments binding a label to one head SHA, their optional
//! HMAC-SHA256 signature, reading them back, and deciding which labels to bind this tick.
//!
//! A receipt comment carries a human line and hidden marker lines:
//!
//! ```text
//! Merge Gate: recorded `ready-to-merge` for head `abc1234`; this receipt holds for that head only.
//! <!-- merge-gate-approval-label: ready-to-merge -->
//! <!-- merge-gate-approved-head-sha: abc1234... (full sha) -->
//! <!-- merge-gate-mac: <64 lowercase hex> -->            (only when a receipt key is set)
//! ```
//!
//! Only comments written by the bot user count. With a [`ReceiptKey`], the MAC must verify
//! over `(repo full name, PR number, label, head sha)` joined with `|`; the repository name
//! is the lower-cased `owner/name` that [`RepoName`] holds.

use std::collections::BTreeMap;
use std::fmt;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::binding::{HeadAtLabel, NoHeadEvidence, head_at_label};
use super::provenance::{Provenance, Undeterminable, label_applier};
use super::{APPROVED_A, APPROVED_B, READY_TO_MERGE, TrustRoots};
use crate::context::{Comment, CommentId, PrContext};
use crate::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};

type HmacSha256 = Hmac<Sha256>;

/// Start of the marker line naming the receipt's label.
pub const LABEL_MARKER: &str = "<!-- merge-gate-approval-label:";
/// Start of the marker line naming the full head SHA the receipt binds.
pub const HEAD_MARKER: &str = "<!-- merge-gate-approved-head-sha:";
/// Start of the marker line carrying the hex HMAC-SHA256 signature.
pub const MAC_MARKER: &str = "<!-- merge-gate-mac:";
/// End of every marker line.
pub const MARKER_END: &str = "-->";

/// Logged once per process when receipts are read without a key.
pub const UNSIGNED_RECEIPTS_WARNING: &str = "MP_RECEIPT_KEY is not set: approval receipts and inbox questions are unsigned (edits are still caught through GitHub's updated_at); set it before enforce-mode go-live";

/// The secret key that signs receipts and inbox questions, with the previous keys still
/// accepted while a rotation's window is open (decisions/0062). Its `Debug` form is
/// `[redacted]`.
///
/// Only the current key signs ([`mac_hex`]); [`verify_mac_hex`] accepts a signature by
/// any key of the ring. The adapter that builds the ring decides the window: a previous key
/// whose window has closed is never added, so nothing here reads a clock.
#[derive(Clone, PartialEq, Eq)]
pub struct ReceiptKey {
    current: Vec<u8>,
    previous: Vec<Vec<u8>>,
}

/// Which key of a [`ReceiptKey`] ring a signature verified with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyGeneration {
    /// The current key, the one that signs.
    Current,
    /// A previous key, accepted only while the rotation's window is open: what it signed
    /// is signed again with the current key.
    Previous,
}

impl ReceiptKey {
    /// Wraps key bytes. An empty key means "no key" and gives `None`.
    pub fn new(key: impl Into<Vec<u8>>) -> Option<Self> {
        let key = key.into();
        (!key.is_empty()).then_some(Self {
            current: key,
            previous: Vec::new(),
        })
    }

    /// The ring that also accepts `previous`'s keys (its current and its own previous
    /// ones) as previous keys. A previous key equal to the current one is not added.
    #[must_use]
    pub fn with_previous(mut self, previous: ReceiptKey) -> Self {
        for key in std::iter::once(previous.current).chain(previous.previous) {
            if key != self.current && !self.previous.contains(&key) {
                self.previous.push(key);
            }
        }
        self
    }

    /// Whether the ring accepts a previous key.
    pub fn has_previous(&self) -> bool {
        !self.previous.is_empty()
    }

    fn mac_with(key: &[u8]) -> HmacSha256 {
        // HMAC accepts keys of any length, so this cannot fail.
        <HmacSha256 as Mac>::new_from_slice(key).expect("HMAC accepts keys of any length")
    }
}

impl fmt::Debug for ReceiptKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// The longest rotation window mp accepts: a previous key stays valid at most this long
/// after the rotation (decisions/0062).
pub const MAX_ROTATION_WINDOW_DAYS: i64 = 30;

/// A previous receipt key and the end of the window in which its signatures still count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreviousReceiptKey {
    /// The key that signed before the rotation.
    pub key: ReceiptKey,
    /// When its signatures stop counting.
    pub until: Timestamp,
}

impl PreviousReceiptKey {
    /// Whether mp accepts the window at `now`: it may end at most
    /// [`MAX_ROTATION_WINDOW_DAYS`] later (a window that has ended is accepted: it just
    /// admits nothing).
    ///
    /// # Errors
    /// [`RotationError::WindowTooLong`] otherwise.
    pub fn check_window(&self, now: Timestamp) -> Result<(), RotationError> {
        if self.until > now.plus_seconds(MAX_ROTATION_WINDOW_DAYS * 24 * 3600) {
            return Err(RotationError::WindowTooLong {
                until: self.until,
                now,
            });
        }
        Ok(())
    }
}

/// Why a rotation window is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RotationError {
    /// The window ends more than [`MAX_ROTATION_WINDOW_DAYS`] after now.
    #[error(
        "the previous receipt key's window ends at {until}, more than {MAX_ROTATION_WINDOW_DAYS} days from now ({now}): a long window keeps a retired key valid; choose an end within {MAX_ROTATION_WINDOW_DAYS} days"
    )]
    WindowTooLong {
        /// The requested end.
        until: Timestamp,
        /// The time the window was judged at.
        now: Timestamp,
    },
}

/// The key ring for a tick at `now`: `current`, plus `previous` while its window is open.
/// The second value is the line the tick reports about the rotation (the window open, or
/// closed and the previous key no longer accepted).
///
/// # Errors
/// [`RotationError::WindowTooLong`] when the window ends more than
/// [`MAX_ROTATION_WINDOW_DAYS`] after `now`.
pub fn rotation_ring(
    current: ReceiptKey,
    previous: Option<PreviousReceiptKey>,
    now: Timestamp,
) -> Result<(ReceiptKey, Option<String>), RotationError> {
    let Some(previous) = previous else {
        return Ok((current, None));
    };
    previous.check_window(now)?;
    let until = previous.until;
    if now < until {
        let note = format!(
            "receipt key rotation: signatures by the previous key count until {until}; mp signs what they signed again with the current key; remove the previous key after that"
        );
        Ok((current.with_previous(previous.key), Some(note)))
    } else {
        let note = format!(
            "receipt key rotation: the previous key's window ended at {until}; its signatures no longer count; remove it"
        );
        Ok((current, Some(note)))
    }
}

/// HMAC-SHA256 of `parts` joined with `|` under the ring's current key, as 64 lowercase
/// hex digits.
pub fn mac_hex(key: &ReceiptKey, parts: &[&str]) -> String {
    let mut mac = ReceiptKey::mac_with(&key.current);
    mac.update(parts.join("|").as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

/// Whether `digest_hex` is the HMAC-SHA256 of `parts` joined with `|` under a key of the
/// ring. The comparison is constant-time; an empty, non-hex or wrong-length digest fails.
pub fn verify_mac_hex(key: &ReceiptKey, parts: &[&str], digest_hex: &str) -> bool {
    mac_generation(key, parts, digest_hex).is_some()
}

/// Which key of the ring `digest_hex` verifies with over `parts` (the current key is
/// tried first), or `None` when none does.
pub fn mac_generation(key: &ReceiptKey, parts: &[&str], digest_hex: &str) -> Option<KeyGeneration> {
    let digest = hex::decode(digest_hex.trim()).ok()?;
    if digest.is_empty() {
        return None;
    }
    let message = parts.join("|");
    let verifies = |secret: &[u8]| {
        let mut mac = ReceiptKey::mac_with(secret);
        mac.update(message.as_bytes());
        mac.verify_slice(&digest).is_ok()
    };
    if verifies(&key.current) {
        Some(KeyGeneration::Current)
    } else if key.previous.iter().any(|secret| verifies(secret)) {
        Some(KeyGeneration::Previous)
    } else {
        None
    }
}

/// The value of the last well-formed marker line starting with `prefix` in `body`.
///
/// A line counts only if, once trimmed, it starts with `prefix` and ends with `-->`. The
/// value is the trimmed text between them; an empty value counts as no marker.
pub fn marker_value<'a>(body: &'a str, prefix: &str) -> Option<&'a str> {
    body.lines()
        .rev()
        .filter_map(|line| {
            line.trim()
                .strip_prefix(prefix)?
                .strip_suffix(MARKER_END)
                .map(str::trim)
        })
        .find(|value| !value.is_empty())
}

/// The labels that count only through a receipt, in sorted (processing) order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReceiptLabel {
    /// `decision:approved-A`.
    ApprovedA,
    /// `decision:approved-B`.
    ApprovedB,
    /// `ready-to-merge`.
    ReadyToMerge,
}

impl ReceiptLabel {
    /// Every receipt label, in sorted order.
    pub const ALL: [Self; 3] = [Self::ApprovedA, Self::ApprovedB, Self::ReadyToMerge];

    /// The label name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ApprovedA => APPROVED_A,
            Self::ApprovedB => APPROVED_B,
            Self::ReadyToMerge => READY_TO_MERGE,
        }
    }

    /// The receipt label with this exact name, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|label| label.as_str() == name)
    }

    /// Whether a stale receipt may be re-bound to a new head (only `ready-to-merge`;
    /// approvals are superseded only by the decision inbox).
    pub fn is_rebindable(self) -> bool {
        self == Self::ReadyToMerge
    }
}

impl fmt::Display for ReceiptLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

fn receipt_parts(repo: &RepoName, number: PrNumber, label: &str, head: &CommitSha) -> [String; 4] {
    [
        repo.as_str().to_owned(),
        number.to_string(),
        label.to_owned(),
        head.as_str().to_owned(),
    ]
}

fn parts_ref(parts: &[String; 4]) -> [&str; 4] {
    [&parts[0], &parts[1], &parts[2], &parts[3]]
}

/// The body of a receipt comment binding `label` to `head` on pull request `repo#number`.
/// With a key, a MAC marker signs `(repo, number, label, head)`.
pub fn render_receipt(
    label: ReceiptLabel,
    head: &CommitSha,
    repo: &RepoName,
    number: PrNumber,
    key: Option<&ReceiptKey>,
) -> String {
    let mut body = format!(
        "Merge Gate: recorded `{label}` for head `{short}`; this receipt holds for that head only.\n\
         {LABEL_MARKER} {label} {MARKER_END}\n\
         {HEAD_MARKER} {head} {MARKER_END}\n",
        short = head.short(),
    );
    if let Some(key) = key {
        let parts = receipt_parts(repo, number, label.as_str(), head);
        let mac = mac_hex(key, &parts_ref(&parts));
        body.push_str(&format!("{MAC_MARKER} {mac} {MARKER_END}\n"));
    }
    body
}

/// One receipt: a label bound to a head SHA by a bot comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    label: String,
    head: CommitSha,
    comment: Option<CommentId>,
    created_at: Option<Timestamp>,
    previous_key: bool,
}

impl Receipt {
    /// A receipt binding `label` to `head`, e.g. one the bot has just written.
    pub fn new(label: impl Into<String>, head: CommitSha) -> Self {
        Self {
            label: label.into(),
            head,
            comment: None,
            created_at: None,
            previous_key: false,
        }
    }

    /// The same receipt, its signature verified by a previous key of the ring: the
    /// receipt writer signs it again with the current key while the window is open.
    pub fn signed_with_previous_key(mut self) -> Self {
        self.previous_key = true;
        self
    }

    /// Whether its signature verified only with a previous key of the ring.
    pub fn needs_resigning(&self) -> bool {
        self.previous_key
    }

    /// The same receipt, recorded as comment `id` created at `created_at`.
    pub fn with_comment(mut self, id: CommentId, created_at: Option<Timestamp>) -> Self {
        self.comment = Some(id);
        self.created_at = created_at;
        self
    }

    /// The bound label.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The head SHA the label is bound to.
    pub fn head(&self) -> &CommitSha {
        &self.head
    }

    /// The comment carrying the receipt, when known.
    pub fn comment(&self) -> Option<CommentId> {
        self.comment
    }

    /// The comment's server creation time, when known and parseable.
    pub fn created_at(&self) -> Option<Timestamp> {
        self.created_at
    }
}

/// Why a comment carrying receipt markers was not taken as a receipt.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum IgnoredReason {
    /// The bot user is unknown, so no comment can be trusted as a receipt.
    NoBotUser,
    /// The comment was not written by the bot user.
    NotBotAuthored {
        /// The comment's author, when known.
        author: Option<Login>,
    },
    /// No well-formed label marker.
    LabelMarkerMissing,
    /// No well-formed head-SHA marker.
    HeadMarkerMissing,
    /// The head marker is not a full commit SHA.
    MalformedHead {
        /// The marker's value.
        value: String,
    },
    /// A receipt key is set but the comment has no MAC marker.
    MacMissing,
    /// The MAC does not verify for this repository, PR, label and head.
    MacMismatch,
    /// The comment was edited after the bot wrote it (the bot never edits a receipt, and
    /// anyone with write access can edit anyone's comment).
    Edited {
        /// When it was last edited.
        updated_at: Timestamp,
    },
}

impl IgnoredReason {
    /// Whether the comment shows somebody tried to pass for, or alter, a bot receipt: a
    /// receipt-like comment by another account, an edited receipt, or a MAC that does not
    /// verify. The tick reports these; an unsigned receipt from before a key was set is not.
    pub fn is_tampering(&self) -> bool {
        matches!(
            self,
            Self::NotBotAuthored { .. } | Self::Edited { .. } | Self::MacMismatch
        )
    }

    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::NoBotUser => "no_bot_user",
            Self::NotBotAuthored { .. } => "not_bot_authored",
            Self::LabelMarkerMissing => "label_marker_missing",
            Self::HeadMarkerMissing => "head_marker_missing",
            Self::MalformedHead { .. } => "head_marker_malformed",
            Self::MacMissing => "mac_missing",
            Self::MacMismatch => "mac_mismatch",
            Self::Edited { .. } => "receipt_edited",
        }
    }
}

impl fmt::Display for IgnoredReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoBotUser => f.write_str("the bot user is unknown"),
            Self::NotBotAuthored {
                author: Some(author),
            } => {
                write!(f, "written by {author}, not the bot")
            }
            Self::NotBotAuthored { author: None } => {
                f.write_str("written by an unknown author, not the bot")
            }
            Self::LabelMarkerMissing => f.write_str("no well-formed label marker"),
            Self::HeadMarkerMissing => f.write_str("no well-formed head marker"),
            Self::MalformedHead { value } => {
                let value: String = value.chars().take(80).collect();
                write!(f, "head marker '{value}' is not a full commit sha")
            }
            Self::MacMissing => f.write_str("a receipt key is set but the comment has no MAC"),
            Self::MacMismatch => f.write_str("its MAC does not verify"),
            Self::Edited { updated_at } => {
                write!(f, "it was edited at {updated_at} after the bot wrote it")
            }
        }
    }
}

/// A comment with receipt markers that was not taken as a receipt, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IgnoredReceipt {
    /// The comment.
    pub comment: CommentId,
    /// Why it was ignored.
    pub reason: IgnoredReason,
}

impl fmt::Display for IgnoredReceipt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "receipt-like comment {} ignored: {}",
            self.comment.get(),
            self.reason
        )
    }
}

/// The receipts of one pull request: the latest valid receipt per label, plus the
/// receipt-like comments that were ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Receipts {
    latest: BTreeMap<String, Receipt>,
    ignored: Vec<IgnoredReceipt>,
}

impl Receipts {
    /// No receipts.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads the receipts of pull request `repo#number` from its comments, in comment order.
    ///
    /// Only comments written by `bot` count (no bot user: none count), and only unedited
    /// ones. A receipt needs both a label and a head marker. With `key`, its MAC must verify over
    /// `(repo, number, label, head)`, otherwise it is ignored. The latest valid receipt per
    /// label wins.
    pub fn parse(
        comments: &[Comment],
        repo: &RepoName,
        number: PrNumber,
        bot: Option<&Login>,
        key: Option<&ReceiptKey>,
    ) -> Self {
        let scope = Scope {
            repo,
            number,
            bot,
            key,
        };
        let mut receipts = Self::default();
        for comment in comments {
            match scope.read(comment) {
                None => {}
                Some(Ok(receipt)) => receipts.insert(receipt),
                Some(Err(reason)) => receipts.ignored.push(IgnoredReceipt {
                    comment: comment.id,
                    reason,
                }),
            }
        }
        receipts
    }

    /// Records a receipt, replacing any earlier one for the same label (e.g. one the bot
    /// wrote this tick, which counts at once).
    pub fn insert(&mut self, receipt: Receipt) {
        self.latest.insert(receipt.label.clone(), receipt);
    }

    /// The latest valid receipt for `label`.
    pub fn get(&self, label: &str) -> Option<&Receipt> {
        self.latest.get(label)
    }

    /// Every valid receipt, one per label, sorted by label.
    pub fn iter(&self) -> impl Iterator<Item = &Receipt> {
        self.latest.values()
    }

    /// Whether there is no valid receipt.
    pub fn is_empty(&self) -> bool {
        self.latest.is_empty()
    }

    /// Comments that carried receipt markers but were not taken, in comment order.
    pub fn ignored(&self) -> &[IgnoredReceipt] {
        &self.ignored
    }
}

/// What a receipt is read against: the pull request, the bot user and the key.
struct Scope<'a> {
    repo: &'a RepoName,
    number: PrNumber,
    bot: Option<&'a Login>,
    key: Option<&'a ReceiptKey>,
}

impl Scope<'_> {
    /// `None` when the comment has no receipt marker at all.
    fn read(&self, comment: &Comment) -> Option<Result<Receipt, IgnoredReason>> {
        let label = marker_value(&comment.body, LABEL_MARKER);
        let head = marker_value(&comment.body, HEAD_MARKER);
        if label.is_none() && head.is_none() {
            return None;
        }
        Some(self.validate(comment, label, head))
    }

    fn validate(
        &self,
        comment: &Comment,
        label: Option<&str>,
        head: Option<&str>,
    ) -> Result<Receipt, IgnoredReason> {
        let Some(bot) = self.bot else {
            return Err(IgnoredReason::NoBotUser);
        };
        if comment.author.as_ref() != Some(bot) {
            return Err(IgnoredReason::NotBotAuthored {
                author: comment.author.clone(),
            });
        }
        if let Some(updated_at) = comment.updated_at.filter(|_| comment.is_edited()) {
            return Err(IgnoredReason::Edited { updated_at });
        }
        let label = label.ok_or(IgnoredReason::LabelMarkerMissing)?;
        let head = head.ok_or(IgnoredReason::HeadMarkerMissing)?;
        let head = CommitSha::parse(head).map_err(|_| IgnoredReason::MalformedHead {
            value: head.to_owned(),
        })?;
        let receipt = Receipt::new(label, head).with_comment(comment.id, comment.created_at);
        let Some(key) = self.key else {
            return Ok(receipt);
        };
        let mac = marker_value(&comment.body, MAC_MARKER).ok_or(IgnoredReason::MacMissing)?;
        let parts = receipt_parts(self.repo, self.number, label, &receipt.head);
        match mac_generation(key, &parts_ref(&parts), mac) {
            Some(KeyGeneration::Current) => Ok(receipt),
            Some(KeyGeneration::Previous) => Ok(receipt.signed_with_previous_key()),
            None => Err(IgnoredReason::MacMismatch),
        }
    }
}

/// Why a present receipt label is not bound this tick.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotBoundReason {
    /// The latest receipt already names the current head.
    AlreadyCurrent,
    /// The establishing event cannot be determined.
    ApplierUndeterminable(Undeterminable),
    /// The establishing event names no actor.
    ApplierUnknown,
    /// The bot itself established the label; the bot never mints its own approval.
    AppliedByBot,
    /// The establishing actor is not allowlisted.
    ApplierNotAllowlisted {
        /// Who applied the label.
        actor: Login,
    },
    /// The receipt is stale and the label is an approval, which is never re-bound.
    NotRebindable {
        /// The head the receipt names.
        receipt_head: CommitSha,
    },
    /// No server-side evidence shows the current head was the head when the label was
    /// applied.
    HeadNotProven(NoHeadEvidence),
}

impl NotBoundReason {
    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::AlreadyCurrent => "receipt_current",
            Self::ApplierUndeterminable(_) => "applier_undeterminable",
            Self::ApplierUnknown => "applier_unknown",
            Self::AppliedByBot => "applied_by_bot",
            Self::ApplierNotAllowlisted { .. } => "applier_not_allowlisted",
            Self::NotRebindable { .. } => "approval_not_rebindable",
            Self::HeadNotProven(why) => why.code(),
        }
    }
}

impl fmt::Display for NotBoundReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AlreadyCurrent => f.write_str("its receipt already names the current head"),
            Self::ApplierUndeterminable(why) => {
                write!(f, "its applier cannot be determined: {why}")
            }
            Self::ApplierUnknown => f.write_str("its applier is unknown"),
            Self::AppliedByBot => f.write_str("it was applied by the bot itself"),
            Self::ApplierNotAllowlisted { actor } => {
                write!(f, "it was applied by {actor}, who is not allowlisted")
            }
            Self::NotRebindable { receipt_head } => write!(
                f,
                "its receipt names head {} and approvals are never re-bound",
                receipt_head.short()
            ),
            Self::HeadNotProven(why) => write!(f, "{why}; re-apply the label"),
        }
    }
}

/// What the receipt writer does with one present receipt label.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BindDecision {
    /// No receipt exists yet: bind the label to the current head.
    FirstBind {
        /// The allowlisted human who applied the label.
        applier: Login,
    },
    /// `ready-to-merge` was re-applied to the current head after its receipt for an older
    /// head: bind it to the current head.
    Rebind {
        /// The allowlisted human who re-applied the label.
        applier: Login,
        /// The head the stale receipt names.
        previous_head: CommitSha,
    },
    /// `ready-to-merge` applied to an older head that only mp's own updates with `main`
    /// moved on (the race guard): carry it over to the current head.
    CarryOver {
        /// The allowlisted human who applied the label.
        applier: Login,
        /// The head the label was applied to.
        labeled_head: CommitSha,
    },
    /// The receipt for the current head verified only with a previous receipt key (a
    /// rotation's window is open): write it again, signed with the current key, so it
    /// still holds when the window closes. The binding itself was proven when the receipt
    /// was first written.
    Resign,
    /// Write nothing.
    NotBound(NotBoundReason),
}

/// The receipt writer's decision for one label on the current head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindPlan {
    /// The label.
    pub label: ReceiptLabel,
    /// The head a receipt would bind.
    pub head: CommitSha,
    /// What to do.
    pub decision: BindDecision,
}

impl BindPlan {
    /// Whether a receipt should be written now.
    pub fn binds(&self) -> bool {
        matches!(
            self.decision,
            BindDecision::FirstBind { .. }
                | BindDecision::Rebind { .. }
                | BindDecision::CarryOver { .. }
                | BindDecision::Resign
        )
    }

    /// Whether the plan only signs an existing receipt again with the current key.
    pub fn resigns(&self) -> bool {
        matches!(self.decision, BindDecision::Resign)
    }

    /// Whether the plan carries a binding over through mp's own branch update.
    pub fn carries_over(&self) -> bool {
        matches!(self.decision, BindDecision::CarryOver { .. })
    }

    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match &self.decision {
            BindDecision::FirstBind { .. } => "first_bind",
            BindDecision::Rebind { .. } => "rebind",
            BindDecision::CarryOver { .. } => "carry_over",
            BindDecision::Resign => "resign",
            BindDecision::NotBound(reason) => reason.code(),
        }
    }
}

impl fmt::Display for BindPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (label, head) = (self.label, self.head.short());
        match &self.decision {
            BindDecision::FirstBind { applier } => {
                write!(f, "bind '{label}' to head {head} (applied by {applier})")
            }
            BindDecision::Rebind {
                applier,
                previous_head,
            } => write!(
                f,
                "re-bind '{label}' from head {} to head {head} (re-applied by {applier})",
                previous_head.short()
            ),
            BindDecision::CarryOver {
                applier,
                labeled_head,
            } => write!(
                f,
                "carry '{label}' over from head {} to head {head}: only mp's own updates with main moved it (applied by {applier})",
                labeled_head.short()
            ),
            BindDecision::Resign => write!(
                f,
                "sign the '{label}' receipt for head {head} again with the current receipt key (it verified with the previous key)"
            ),
            BindDecision::NotBound(reason) => {
                write!(f, "'{label}' not bound to head {head}: {reason}")
            }
        }
    }
}

/// Decides, for each receipt label present on the pull request (in sorted order), whether
/// the bot writes a receipt binding it to the current head now.
///
/// A label is bound when its establishing applier is an allowlisted human (never the bot)
/// and GitHub's record of the head branch proves that the current head was the head when
/// that human applied the label ([`head_at_label`]). An existing receipt for another head
/// is replaced only for `ready-to-merge`; approvals go back through the decision inbox.
/// Receipts are records of a binding, never its evidence: a missing, edited or unsigned
/// receipt changes nothing, and commit dates are never consulted.
pub fn plan_receipts(pr: &PrContext, receipts: &Receipts, roots: TrustRoots<'_>) -> Vec<BindPlan> {
    ReceiptLabel::ALL
        .into_iter()
        .filter(|label| pr.has_label(label.as_str()))
        .map(|label| BindPlan {
            label,
            head: pr.head_sha.clone(),
            decision: decide(pr, receipts, roots, label),
        })
        .collect()
}

fn decide(
    pr: &PrContext,
    receipts: &Receipts,
    roots: TrustRoots<'_>,
    label: ReceiptLabel,
) -> BindDecision {
    use NotBoundReason as Why;
    let receipt = receipts.get(label.as_str());
    if let Some(receipt) = receipt.filter(|r| r.head == pr.head_sha) {
        if !receipt.needs_resigning() {
            return BindDecision::NotBound(Why::AlreadyCurrent);
        }
        // An approval's receipt is the inbox's record of the owner's verdict: signed again
        // as it was accepted. `ready-to-merge` is signed again only while GitHub's record
        // still proves the binding, so a receipt forged with a leaked previous key is not
        // carried past the window.
        if !label.is_rebindable() || evidence(pr, roots, label).is_ok() {
            return BindDecision::Resign;
        }
        return BindDecision::NotBound(Why::AlreadyCurrent);
    }
    let (actor, proof) = match evidence(pr, roots, label) {
        Ok(found) => found,
        Err(why) => return BindDecision::NotBound(why),
    };
    let Some(receipt) = receipt else {
        return BindDecision::FirstBind { applier: actor };
    };
    let receipt_head = receipt.head.clone();
    if !label.is_rebindable() {
        return BindDecision::NotBound(Why::NotRebindable { receipt_head });
    }
    if proof.carried.is_empty() {
        BindDecision::Rebind {
            applier: actor,
            previous_head: receipt_head,
        }
    } else {
        BindDecision::CarryOver {
            applier: actor,
            labeled_head: proof.labeled_head,
        }
    }
}

/// GitHub's record of the label: an allowlisted human (never the bot) applied it, and the
/// current head was the head then.
fn evidence(
    pr: &PrContext,
    roots: TrustRoots<'_>,
    label: ReceiptLabel,
) -> Result<(Login, HeadAtLabel), NotBoundReason> {
    use NotBoundReason as Why;
    let applier = match label_applier(pr, label.as_str()) {
        Provenance::Undeterminable(why) => return Err(Why::ApplierUndeterminable(why)),
        Provenance::Established(applier) => applier,
    };
    let Some(actor) = applier.actor.clone() else {
        return Err(Why::ApplierUnknown);
    };
    if roots.is_bot(&actor) {
        return Err(Why::AppliedByBot);
    }
    if !roots.is_allowlisted(&actor) {
        return Err(Why::ApplierNotAllowlisted { actor });
    }
    let proof = head_at_label(pr, applier.at, roots).map_err(Why::HeadNotProven)?;
    Ok((actor, proof))
}

#[cfg(test)]
mod tests;
