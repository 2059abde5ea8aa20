// The version a consumer has applied, for any task to await: "has my client reached version N?"

/// The newest version a consumer has applied, which any task can await.
///
/// A consumer (a service's client session, a cache, a view model) calls ``advance(to:)`` after it has
/// applied each batch; anyone who needs that consumer to be up to date awaits ``reached(_:)`` with the
/// version a mutation returned:
///
/// ```swift
/// let applied = AppliedVersion(subscription.version)
/// Task {
///   for await batch in subscription.batches {
///     cache.apply(batch)
///     applied.advance(to: batch.to)
///   }
///   applied.finish()
/// }
/// let version = try await source.appendItems([order], toSection: "open")
/// if await applied.reached(version) { /* the cache holds the order */ }
/// ```
///
/// What is promised:
/// - ``reached(_:)`` returns `true` _exactly_ when the version has been advanced to `version` or past it,
///   and then at once, also for a version reached long before.
/// - It returns `false` when ``finish()`` was called before the version was reached, or when the
///   waiting task is cancelled; nothing waits for ever once the consumer finishes.
/// - Versions only grow: advancing to a lower version changes nothing.
/// - Safe from any task; a waiter is resumed outside the lock, exactly once.
public final class AppliedVersion: Sendable {
  @usableFromInline typealias Machine = AppliedVersionStateMachine<CheckedContinuation<Bool, Never>>
  private let state: Locked<Machine>

  /// Creates a tracker at `version`, usually a subscription's ``Subscription/version``.
  public init(_ version: Int = 0) { state = Locked(Machine(version: version)) }

  /// The newest version applied.
  public var current: Int { state.withLock(\.version) }

  /// Whether ``finish()`` has been called.
  public var isFinished: Bool { state.withLock(\.isFinished) }

  /// Records that the consumer has applied everything up to `version`, and wakes the tasks waiting for
  /// it or an earlier one.
  ///
  /// - Complexity: O(*w*) in the number of waiting tasks.
  public func advance(to version: Int) {
    for waiter in state.withLock({ $0.advance(to: version) }) { waiter.resume(returning: true) }
  }

  /// Ends the consumer's progress (its stream ended): waiting tasks return `false`.
  ///
  /// - Complexity: O(*w*) in the number of waiting tasks.
  public func finish() {
    for waiter in state.withLock({ $0.finish() }) { waiter.resume(returning: false) }
  }

  /// Returns once the consumer has applied `version`.
  ///
  /// - Returns: `true` when `version` was reached; `false` when the tracker finished first or the task
  ///   was cancelled.
  /// - Complexity: O(1) when `version` is already reached; otherwise O(*w*) to register.
  public func reached(_ version: Int) async -> Bool {
    let id = state.withLock { $0.makeID() }
    return await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        if let answer = state.withLock({ $0.wait(for: version, id: id, waiter: continuation) }) {
          continuation.resume(returning: answer)
        }
      }
    } onCancel: {
      state.withLock { $0.cancel(id: id) }?.resume(returning: false)
    }
  }
}
