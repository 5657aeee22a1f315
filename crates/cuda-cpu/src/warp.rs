//! Warp-synchronous operations on the CPU: the lanes named by an operation's member mask meet
//! (each fiber deposits its operand and stops), and when every lane of the mask still running
//! has arrived with the same operation, each gets its result.

/// The operations that make the lanes of a warp meet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WarpKind {
    Sync,
    ShuffleIdx,
    ShuffleXor,
    ShuffleDown,
    ShuffleUp,
    All,
    Any,
    Uni,
    Ballot,
    MatchAny,
    MatchAll,
    AddU32,
    MinU32,
    MaxU32,
    MinI32,
    MaxI32,
    And,
    Or,
    Xor,
    Elect,
    /// `activemask()`: not a meeting on a GPU, but the lanes that run it together; here,
    /// the lanes of the warp that wait at it once no lane of the warp can run on.
    Active,
}

/// What one lane brings to a warp operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WarpOp {
    pub(crate) kind: WarpKind,
    /// The member mask, limited to the lanes the warp has.
    pub(crate) mask: u32,
    /// The lane's value (a predicate is 0 or 1).
    pub(crate) value: u64,
    /// The source lane, or the lane offset, of a shuffle.
    pub(crate) lane: u32,
}

/// The result of `op` for each lane of `arrived` (lane, operation), all with the same kind and
/// mask: `(lane, result)`.
pub(crate) fn results(arrived: &[(u32, WarpOp)]) -> Vec<(u32, u64)> {
    let value_of = |lane: u32| {
        arrived
            .iter()
            .find(|(l, _)| *l == lane)
            .map(|(_, op)| op.value)
    };
    let values = || arrived.iter().map(|(_, op)| op.value);
    let signed = || values().map(|v| v as u32 as i32);
    let Some((_, first)) = arrived.first() else {
        return Vec::new();
    };
    let common: Option<u64> = match first.kind {
        WarpKind::All => Some(values().all(|v| v != 0) as u64),
        WarpKind::Any => Some(values().any(|v| v != 0) as u64),
        WarpKind::Uni => Some(values().all(|v| v == first.value) as u64),
        WarpKind::Ballot => Some(
            arrived
                .iter()
                .filter(|(_, op)| op.value != 0)
                .fold(0u32, |mask, (lane, _)| mask | 1 << lane) as u64,
        ),
        WarpKind::MatchAll => Some(values().all(|v| v == first.value) as u64),
        WarpKind::AddU32 => Some(values().fold(0u32, |a, v| a.wrapping_add(v as u32)) as u64),
        WarpKind::MinU32 => values().map(|v| v as u32 as u64).min(),
        WarpKind::MaxU32 => values().map(|v| v as u32 as u64).max(),
        WarpKind::MinI32 => signed().min().map(|v| v as u32 as u64),
        WarpKind::MaxI32 => signed().max().map(|v| v as u32 as u64),
        WarpKind::And => Some(values().fold(u32::MAX, |a, v| a & v as u32) as u64),
        WarpKind::Or => Some(values().fold(0, |a, v| a | v as u32) as u64),
        WarpKind::Xor => Some(values().fold(0, |a, v| a ^ v as u32) as u64),
        WarpKind::Active => Some(
            arrived
                .iter()
                .fold(0u32, |mask, (lane, _)| mask | 1 << lane) as u64,
        ),
        _ => None,
    };
    let lowest = arrived.iter().map(|(lane, _)| *lane).min().unwrap_or(0);
    arrived
        .iter()
        .map(|&(lane, op)| {
            let from = |source: Option<u32>| {
                source
                    .filter(|s| *s < 32)
                    .and_then(value_of)
                    .unwrap_or(op.value)
            };
            let result = match op.kind {
                WarpKind::ShuffleIdx => from(Some(op.lane & 31)),
                WarpKind::ShuffleXor => from(Some(lane ^ (op.lane & 31))),
                WarpKind::ShuffleDown => from(lane.checked_add(op.lane)),
                WarpKind::ShuffleUp => from(lane.checked_sub(op.lane)),
                WarpKind::MatchAny => arrived
                    .iter()
                    .filter(|(_, other)| other.value == op.value)
                    .fold(0u32, |mask, (l, _)| mask | 1 << l)
                    as u64,
                WarpKind::Elect => (lane == lowest) as u64,
                WarpKind::Sync => 0,
                _ => common.unwrap_or(0),
            };
            (lane, result)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warp(kind: WarpKind, values: &[u64], lane: u32) -> Vec<u64> {
        let arrived: Vec<(u32, WarpOp)> = values
            .iter()
            .enumerate()
            .map(|(l, &value)| {
                let op = WarpOp {
                    kind,
                    mask: u32::MAX,
                    value,
                    lane,
                };
                (l as u32, op)
            })
            .collect();
        results(&arrived).into_iter().map(|(_, r)| r).collect()
    }

    #[test]
    fn shuffles_read_the_named_lane_or_keep_their_own() {
        let values: Vec<u64> = (0..32).map(|v| v * 10).collect();
        assert_eq!(warp(WarpKind::ShuffleIdx, &values, 3)[17], 30);
        assert_eq!(warp(WarpKind::ShuffleXor, &values, 1)[4], 50);
        let down = warp(WarpKind::ShuffleDown, &values, 16);
        assert_eq!(
            (down[0], down[15], down[16], down[31]),
            (160, 310, 160, 310)
        );
        let up = warp(WarpKind::ShuffleUp, &values, 1);
        assert_eq!((up[0], up[1], up[31]), (0, 0, 300));
    }

    #[test]
    fn votes_and_reductions_cover_the_arrived_lanes() {
        let preds: Vec<u64> = (0..32).map(|l| (l % 2) as u64).collect();
        assert_eq!(warp(WarpKind::Ballot, &preds, 0)[0], 0xaaaa_aaaa);
        assert_eq!(warp(WarpKind::All, &preds, 0)[5], 0);
        assert_eq!(warp(WarpKind::Any, &preds, 0)[5], 1);
        let values: Vec<u64> = (0..32).map(|l| l as u64).collect();
        assert_eq!(warp(WarpKind::AddU32, &values, 0)[9], 496);
        let negative: Vec<u64> = (0i32..32).map(|l| (l - 5) as u32 as u64).collect();
        assert_eq!(warp(WarpKind::MinI32, &negative, 0)[0] as u32 as i32, -5);
        assert_eq!(warp(WarpKind::MinU32, &negative, 0)[0], 0);
        let groups: Vec<u64> = (0..32).map(|l| (l / 8) as u64).collect();
        assert_eq!(warp(WarpKind::MatchAny, &groups, 0)[9], 0xff00);
        assert_eq!(warp(WarpKind::Elect, &groups, 0)[..2], [1, 0]);
    }
}
