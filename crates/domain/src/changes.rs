//! The change feed's positions: every sync or import that changes a user's
//! data takes the next number of that user's change sequence, and stamps
//! what it writes with it; a reader stands at a [`FeedPosition`] and reads
//! what lies past it, in order (docs/changes.md).

/// A number of one user's change sequence. The first change is 1; 0 is
/// "before any change" (and the number of rows written before the feed
/// existed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ChangeSeq(i64);

impl ChangeSeq {
    pub const fn new(value: i64) -> Self {
        Self(value)
    }

    pub const fn get(self) -> i64 {
        self.0
    }
}

/// Where a reader of the feed stands: past every change numbered below
/// `seq`, and past the rows of change `seq` whose id is `id` or lower
/// (one change may touch more rows than a page holds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct FeedPosition {
    pub seq: ChangeSeq,
    /// A transaction id (of a row or of a tombstone: ids are never reused).
    pub id: i64,
}

impl FeedPosition {
    /// Before everything: a reader without a cursor.
    pub const START: FeedPosition = FeedPosition {
        seq: ChangeSeq(0),
        id: 0,
    };

    pub const fn new(seq: ChangeSeq, id: i64) -> Self {
        Self { seq, id }
    }

    /// Whether a row stamped `seq` with id `id` lies past this position.
    pub fn is_before(&self, seq: ChangeSeq, id: i64) -> bool {
        (seq, id) > (self.seq, self.id)
    }
}

/// The feeds one user's change sequence numbers: each has its rows and
/// its tombstones, and cursors of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Feed {
    /// `GET /transactions/sync`.
    Transactions,
    /// `GET /investment_transactions/sync`.
    InvestmentTransactions,
}

impl Feed {
    /// What the cursor's fingerprint starts with (the transactions' is the
    /// one cursors had before there were two feeds, so theirs still read).
    fn tag(self) -> &'static str {
        match self {
            Feed::Transactions => "feed",
            Feed::InvestmentTransactions => "investment-feed",
        }
    }
}

/// A reader's cursor: a position, and a fingerprint of who may use it (the
/// user, the key's account scope, the account asked for). The fingerprint
/// is no secret (a feed reads only what the credential may see anyway): it
/// tells a client that sent another viewer's cursor to start again instead
/// of silently skipping what the other viewer had read. Written as
/// base64url of version, number, id and fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedCursor {
    pub position: FeedPosition,
    pub fingerprint: [u8; FINGERPRINT_BYTES],
}

pub const FINGERPRINT_BYTES: usize = 8;
const CURSOR_VERSION: u8 = 1;

/// Not a cursor of this feed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not a cursor of this API")]
pub struct MalformedCursor;

impl FeedCursor {
    /// The fingerprint of `viewer` reading `account` (or every account)
    /// of the transactions' feed.
    pub fn fingerprint(
        viewer: &crate::access::Viewer,
        account: Option<crate::ids::AccountId>,
    ) -> [u8; FINGERPRINT_BYTES] {
        Self::fingerprint_of(Feed::Transactions, viewer, account)
    }

    /// The fingerprint of `viewer` reading `account` (or every account) of
    /// `feed`: a cursor of one feed is another viewer's in the other.
    pub fn fingerprint_of(
        feed: Feed,
        viewer: &crate::access::Viewer,
        account: Option<crate::ids::AccountId>,
    ) -> [u8; FINGERPRINT_BYTES] {
        use sha2::Digest as _;
        let mut scope: Vec<i64> = viewer
            .account_scope
            .iter()
            .flatten()
            .map(|id| id.get())
            .collect();
        scope.sort_unstable();
        let text = format!(
            "{}|{}|{}|{:?}|{:?}",
            feed.tag(),
            viewer.user_id,
            viewer.account_scope.is_some(),
            scope,
            account.map(crate::ids::AccountId::get)
        );
        let digest = sha2::Sha256::digest(text.as_bytes());
        let mut out = [0; FINGERPRINT_BYTES];
        out.copy_from_slice(&digest[..FINGERPRINT_BYTES]);
        out
    }

    pub fn to_text(&self) -> String {
        use base64::Engine as _;
        let mut bytes = Vec::with_capacity(1 + 16 + FINGERPRINT_BYTES);
        bytes.push(CURSOR_VERSION);
        bytes.extend_from_slice(&self.position.seq.get().to_be_bytes());
        bytes.extend_from_slice(&self.position.id.to_be_bytes());
        bytes.extend_from_slice(&self.fingerprint);
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    }

    pub fn parse(text: &str) -> Result<Self, MalformedCursor> {
        use base64::Engine as _;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(text)
            .map_err(|_| MalformedCursor)?;
        let (&version, rest) = bytes.split_first().ok_or(MalformedCursor)?;
        if version != CURSOR_VERSION || rest.len() != 16 + FINGERPRINT_BYTES {
            return Err(MalformedCursor);
        }
        let number = |at: usize| {
            let mut raw = [0; 8];
            raw.copy_from_slice(&rest[at..at + 8]);
            i64::from_be_bytes(raw)
        };
        let (seq, id) = (number(0), number(8));
        if seq < 0 || id < 0 {
            return Err(MalformedCursor);
        }
        let mut fingerprint = [0; FINGERPRINT_BYTES];
        fingerprint.copy_from_slice(&rest[16..]);
        Ok(FeedCursor {
            position: FeedPosition::new(ChangeSeq::new(seq), id),
            fingerprint,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_order_by_number_then_id() {
        let at = FeedPosition::new(ChangeSeq::new(3), 10);
        assert!(at.is_before(ChangeSeq::new(3), 11));
        assert!(at.is_before(ChangeSeq::new(4), 1));
        assert!(!at.is_before(ChangeSeq::new(3), 10));
        assert!(!at.is_before(ChangeSeq::new(2), 99));
        assert!(FeedPosition::START.is_before(ChangeSeq::new(0), 1));
    }

    #[test]
    fn a_cursor_of_one_feed_is_not_one_of_the_other() {
        let viewer = crate::access::Viewer::whole_user(crate::ids::UserId::new(1));
        assert_eq!(
            FeedCursor::fingerprint(&viewer, None),
            FeedCursor::fingerprint_of(Feed::Transactions, &viewer, None)
        );
        assert_ne!(
            FeedCursor::fingerprint_of(Feed::Transactions, &viewer, None),
            FeedCursor::fingerprint_of(Feed::InvestmentTransactions, &viewer, None)
        );
    }
}
