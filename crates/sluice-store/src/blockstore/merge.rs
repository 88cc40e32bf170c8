//! Which of a workspace's small blocks to merge, and when ([`merge_plan`]).

use sluice_blocks::MAX_BLOCK_ROWS;

/// A block smaller than this is merged with its workspace's other small ones ([`merge_plan`]).
pub const SMALL_BLOCK_ROWS: u32 = (MAX_BLOCK_ROWS / 2) as u32;

/// How long a workspace's oldest small block may wait for enough logs to fill half a block
/// before it is merged with the others anyway.
pub const MERGE_AFTER_MS: i64 = 30_000;

/// A workspace's block as the merge planner sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mergeable {
    /// Its number.
    pub id: i64,
    /// Logs in it.
    pub rows: u32,
    /// When it was written, Unix ms.
    pub created_at: i64,
}

/// Which of a workspace's small blocks (under [`SMALL_BLOCK_ROWS`], oldest first) to merge
/// now: the oldest run of them that fits one block, once it holds half a block of logs or its
/// oldest has waited [`MERGE_AFTER_MS`]; nothing while fewer than two would merge.
pub fn merge_plan(small: &[Mergeable], now_ms: i64) -> Vec<i64> {
    let mut total = 0_usize;
    let mut run = Vec::new();
    for block in small {
        if total + block.rows as usize > MAX_BLOCK_ROWS {
            break;
        }
        total += block.rows as usize;
        run.push(*block);
    }
    let waited = run.first().is_some_and(|oldest| now_ms - oldest.created_at >= MERGE_AFTER_MS);
    if run.len() >= 2 && (total >= SMALL_BLOCK_ROWS as usize || waited) {
        run.iter().map(|block| block.id).collect()
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(id: i64, rows: u32, created_at: i64) -> Mergeable {
        Mergeable { id, rows, created_at }
    }

    #[test]
    fn small_blocks_merge_once_they_fill_half_a_block_or_have_waited() {
        let half = SMALL_BLOCK_ROWS / 2;
        assert_eq!(merge_plan(&[block(1, half, 0), block(2, half - 1, 0)], 1_000), Vec::<i64>::new());
        assert_eq!(merge_plan(&[block(1, half, 0), block(2, half, 0)], 1_000), vec![1, 2]);
        assert_eq!(merge_plan(&[block(1, 10, 0), block(2, 10, 0)], MERGE_AFTER_MS), vec![1, 2]);
        assert_eq!(merge_plan(&[block(1, 10, 0)], MERGE_AFTER_MS), Vec::<i64>::new());
    }

    #[test]
    fn a_merge_never_passes_one_block() {
        let most = MAX_BLOCK_ROWS as u32;
        let plan = merge_plan(&[block(1, most / 2 - 1, 0), block(2, most / 2 - 1, 0), block(3, most / 2 - 1, 0)], 0);
        assert_eq!(plan, vec![1, 2]);
    }
}
