// The pure state machine that keeps a Broadcaster's batches in version order whoever publishes them.

/// Accepts batches from any task in version order and hands them to exactly one draining task at a time,
/// in the order accepted; synchronous, no `await`.
///
/// A publisher calls ``accept(_:)``: the batch is checked against the newest accepted version and queued.
/// If nobody is draining, the caller becomes the drainer and calls ``next()`` until it returns `nil`; a
/// publisher that arrives meanwhile only queues. So subscribers see batches in exactly the accepted order.
@usableFromInline
struct PublishSequencer<Batch: Sendable>: Sendable {
  /// What ``accept(_:)`` tells its caller.
  @usableFromInline
  enum Acceptance: Equatable, Sendable {
    /// Queued; the caller must drain (call ``next()`` until `nil`).
    case drain
    /// Queued; another task is draining and will deliver it.
    case queued
    /// Refused: `from` is not the newest accepted version (`expected`).
    case stale(expected: Int)
    /// Refused: `to` is not after `from`.
    case notAfter
    /// Refused: the broadcaster has finished.
    case finished
  }

  @usableFromInline private(set) var version: Int
  @usableFromInline private(set) var queue: [Batch] = []
  @usableFromInline private(set) var isDraining = false
  @usableFromInline private(set) var isFinished = false

  @inlinable
  init(version: Int) { self.version = version }

  /// Checks and queues a batch going from version `from` to `to`.
  @inlinable
  mutating func accept(_ batch: Batch, from: Int, to: Int) -> Acceptance {
    if isFinished { return .finished }
    guard from == version else { return .stale(expected: version) }
    guard to > from else { return .notAfter }
    version = to
    queue.append(batch)
    if isDraining { return .queued }
    isDraining = true
    return .drain
  }

  /// The next batch for the drainer, or `nil` when the queue is empty (the caller stops draining).
  @inlinable
  mutating func next() -> Batch? {
    precondition(isDraining, "SimpleSource internal inconsistency: next() without draining")
    if queue.isEmpty {
      isDraining = false
      return nil
    }
    return queue.removeFirst()
  }

  /// Refuses every later batch. Batches already accepted are still delivered by the drainer.
  @inlinable
  mutating func finish() -> Bool {
    defer { isFinished = true }
    return !isFinished
  }
}
