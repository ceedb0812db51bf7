//! The per-cluster pass of a cycle, split over scoped threads: KubeFleet runs its Filter and
//! Score plugins in parallel per cluster too. The chunks are contiguous and their results come
//! back in order, so a decision is the same however many threads compute it.

use std::panic;
use std::thread;

/// Clusters per thread: below this a fleet is swept on the calling thread alone.
const CLUSTERS_PER_THREAD: usize = 2500;
/// The most threads one sweep uses.
const MAX_THREADS: usize = 4;

/// Runs `work(offset, chunk)` over contiguous chunks of `items` (on scoped threads when there
/// are enough items) and returns the results in chunk order; `offset` is the index of the
/// chunk's first item.
pub(crate) fn in_chunks<'a, T: Sync, R: Send>(
    items: &'a [T],
    work: impl Fn(usize, &'a [T]) -> R + Sync,
) -> Vec<R> {
    let threads = items
        .len()
        .div_ceil(CLUSTERS_PER_THREAD)
        .clamp(1, MAX_THREADS);
    chunked(items, items.len().div_ceil(threads).max(1), &work)
}

fn chunked<'a, T: Sync, R: Send>(
    items: &'a [T],
    size: usize,
    work: &(impl Fn(usize, &'a [T]) -> R + Sync),
) -> Vec<R> {
    if items.len() <= size {
        return vec![work(0, items)];
    }
    thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(size)
            .enumerate()
            .map(|(i, chunk)| scope.spawn(move || work(i * size, chunk)))
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().unwrap_or_else(|e| panic::resume_unwind(e)))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_come_back_in_order_with_their_offsets() {
        let items: Vec<usize> = (0..103).collect();
        for size in [1, 7, 50, 103, 500] {
            let results = chunked(&items, size, &|offset, chunk: &[usize]| {
                assert_eq!(chunk[0], offset);
                chunk.to_vec()
            });
            assert_eq!(results.concat(), items, "chunks of {size}");
        }
        assert_eq!(in_chunks(&items, |_, chunk| chunk.len()), vec![103]);
        let many: Vec<usize> = (0..10_000).collect();
        let sums = in_chunks(&many, |_, chunk| chunk.len());
        assert_eq!(sums, vec![2500; 4]);
        assert_eq!(in_chunks(&[] as &[usize], |_, chunk| chunk.len()), vec![0]);
    }
}
