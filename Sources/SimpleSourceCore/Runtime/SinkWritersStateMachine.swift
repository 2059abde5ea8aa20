// Which subscribers' sinks are due a write, and how many tasks write them: a queue shared by a few writers.

/// The writes a hub owes its subscribers' sinks, and the tasks that make them.
///
/// A publisher decides under each subscriber's lock whether its sink is due the batch; it never calls a
/// sink itself. It hands the due subscribers here (``enqueue(_:)``), which says how many writers to start;
/// each writer claims the oldest subscribers (``claim()``: one at a time while few are queued) and writes
/// to their sinks outside every lock, until nothing is left, when it stops. The publisher waits for none.
///
/// One writer runs; a second starts at a publish when the first claimed nothing since the previous one. A
/// sink that blocks thus holds the first writer, and the subscribers queued behind it wait at most until
/// the next publish, which wakes each one whose write was not started to catch up by itself (or starts the
/// second writer for it). One writer, when nothing blocks, keeps sinks off each other's locks.
///
/// A subscriber is queued once until a writer claims it (its machine says so:
/// ``SubscriberStateMachine/queueWrite()``), so the queue holds at most one entry per subscriber and a
/// wake-up.
///
/// Kept by the hub under its own lock; no other lock is taken while it is held. Invariants, checked by
/// its exhaustive test: whenever a write is queued, a writer runs (none is stranded); at most
/// ``maxWriters`` run; every queued subscriber is claimed once per time it was queued, in order, one at a
/// time while fewer than 32 are queued.
@usableFromInline
struct SinkWritersStateMachine<Item: Sendable>: Sendable {
  /// The queued subscribers, oldest first from ``head``.
  @usableFromInline var queue: [Item] = []
  @usableFromInline var head = 0
  /// The writers running: started and not yet stopped.
  @usableFromInline var writers = 0
  @usableFromInline let maxWriters: Int
  /// Whether a writer claimed since the last ``enqueue(_:)``: when none did while one runs, it may be held
  /// by a sink that blocks.
  @usableFromInline var claimedSinceEnqueue = true

  @inlinable
  init(maxWriters: Int = 2) {
    precondition(maxWriters > 0)
    self.maxWriters = maxWriters
  }

  /// How many subscribers wait for a writer.
  @inlinable
  var queued: Int { queue.count - head }

  /// `items` are due a write. Returns how many writers the caller starts: one when none runs, or when
  /// the ones that run claimed nothing since the last publish (a sink may hold them), up to
  /// ``maxWriters`` running; none otherwise, since the writers that run take the items too.
  /// - Complexity: O(*k*) for *k* items.
  @inlinable
  mutating func enqueue(_ items: [Item]) -> Int {
    queue.append(contentsOf: items)
    let wanted = writers == 0 || !claimedSinceEnqueue ? 1 : 0
    let start = min(maxWriters - writers, wanted, queued)
    writers += start
    claimedSinceEnqueue = false
    return start
  }

  /// A writer asks for its next subscribers: the oldest queued, as many as a claim takes (``claimSize``);
  /// none when none is queued: the writer stops, and is no longer counted.
  /// - Complexity: O(*c*) for the *c* claimed, amortized.
  @inlinable
  mutating func claim() -> ArraySlice<Item> {
    claimedSinceEnqueue = true
    guard head < queue.count else {
      writers -= 1
      return []
    }
    let end = head + claimSize
    let claimed = queue[head..<end]
    head = end
    if head == queue.count {
      queue.removeAll(keepingCapacity: true)
      head = 0
    } else if head >= 1_024 && head * 2 >= queue.count {
      // Never drained (writers always busy): what was claimed is dropped, in O(1) amortized per claim.
      queue.removeFirst(head)
      head = 0
    }
    return claimed
  }

  /// How many subscribers the next claim takes: one while few are queued, so that a sink that blocks
  /// holds no other; an eighth of the queue per writer when many are (at most 64), so that the writers
  /// take their lock once per claim rather than once per subscriber.
  @inlinable
  var claimSize: Int { min(queued, max(1, min(64, queued / (maxWriters * 8)))) }
}
