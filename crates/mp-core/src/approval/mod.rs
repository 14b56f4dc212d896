//! Approval labels: who established a label, the bot's receipts binding a label to a head,
//! and the verified-label predicate used by C1, C3 and the auto-revert classifier rule.
//!
//! A gate-opening label is never trusted on its own. [`provenance`] finds the timeline event
//! that established the label's current presence (and refuses one the label was renamed or
//! re-created after), [`receipt`] reads and writes the bot's
//! receipt comments (optionally HMAC-signed) that bind a label to one head SHA, and
//! [`binding`] proves from GitHub's record of the head branch which head a label was applied
//! to, and [`verified`] combines them into a verdict that names its reason.

pub mod binding;
pub mod provenance;
pub mod receipt;
pub mod verified;

use crate::ids::Login;

pub use binding::{
    HeadAtLabel, NoHeadEvidence, SettleWindow, head_at_label, is_mp_update, merged_from_base,
    mp_update_commits, prove_head_at_label,
};
pub use provenance::{
    EffectiveApplier, Provenance, Undeterminable, effective_applier, label_applier, unchanged_since,
};
pub use receipt::{
    BindDecision, BindPlan, IgnoredReason, IgnoredReceipt, KeyGeneration, MAX_ROTATION_WINDOW_DAYS,
    NotBoundReason, PreviousReceiptKey, Receipt, ReceiptKey, ReceiptLabel, Receipts, RotationError,
    UNSIGNED_RECEIPTS_WARNING, plan_receipts, render_receipt, rotation_ring,
};
pub use verified::{LabelVerification, Unverified, UnverifiedLabel, VerifiedBy, verify_label};

pub use crate::labels::{APPROVED_A, APPROVED_B, APPROVED_C, AUTO_REVERT, READY_TO_MERGE};

/// Whether a label counts only through a bot receipt bound to the current head.
pub fn requires_receipt(label: &str) -> bool {
    ReceiptLabel::from_name(label).is_some()
}

/// The human trust roots for label appliers: the owner's allowlist and the bot user.
///
/// "Trusted" means allowlisted or the bot; some decisions (C1, minting receipts) demand an
/// allowlisted human and say so.
#[derive(Debug, Clone, Copy)]
pub struct TrustRoots<'a> {
    allowlist: &'a [Login],
    bot: Option<&'a Login>,
    settle: SettleWindow,
}

impl<'a> TrustRoots<'a> {
    /// Trust roots from the allowlist and the bot user (when known), with the default
    /// settle window.
    pub fn new(allowlist: &'a [Login], bot: Option<&'a Login>) -> Self {
        Self {
            allowlist,
            bot,
            settle: SettleWindow::DEFAULT,
        }
    }

    /// The same roots with another settle window for human labels.
    #[must_use]
    pub fn with_settle_window(self, settle: SettleWindow) -> Self {
        Self { settle, ..self }
    }

    /// How long a head must have been the tip before a human's label binds it.
    pub fn settle_window(&self) -> SettleWindow {
        self.settle
    }

    /// The allowlisted actors.
    pub fn allowlist(&self) -> &'a [Login] {
        self.allowlist
    }

    /// The bot user, when known.
    pub fn bot(&self) -> Option<&'a Login> {
        self.bot
    }

    /// Whether `actor` is on the allowlist.
    pub fn is_allowlisted(&self, actor: &Login) -> bool {
        self.allowlist.contains(actor)
    }

    /// Whether `actor` is the bot user.
    pub fn is_bot(&self, actor: &Login) -> bool {
        self.bot == Some(actor)
    }

    /// Whether `actor` is allowlisted or the bot user.
    pub fn is_trusted(&self, actor: &Login) -> bool {
        self.is_allowlisted(actor) || self.is_bot(actor)
    }
}
