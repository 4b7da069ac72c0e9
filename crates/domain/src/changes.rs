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
}
