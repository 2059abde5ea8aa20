// The version a consumer holds, for any task to await: "has my client reached version N?"

/// The newest version a consumer holds, which any task can await: the storage of a subscription's
/// progress (``Subscription/reached(_:)``, G13) and of the package's followers (models,
/// sessions, derived sources), fed by the subscription's hub, which alone knows the versions no batch
/// carries.
///
/// What is promised:
/// - ``reached(_:)`` returns `true` _exactly_ when ``hold(through:)`` reached `version` or past it,
///   and then at once, also for a version reached long before.
/// - It returns `false` when ``finish()`` was called before the version was reached, or when the
///   waiting task is cancelled; nothing waits for ever once the consumer finishes.
/// - Versions only grow: holding through a lower version changes nothing.
/// - Safe from any task; a waiter is resumed outside the lock, exactly once.
///
/// A copy is the same tracker (it holds the lock's storage, one object): a struct, so that holding through
/// a version reaches that object directly, as a publisher does for each of its subscribers.
@usableFromInline package struct HeldVersion: Sendable {
  @usableFromInline typealias Machine = HeldVersionStateMachine<CheckedContinuation<Bool, Never>>
  private let state: Locked<Machine>

  /// Creates a tracker at `version`, usually a subscription's ``Subscription/version``.
  @usableFromInline package init(_ version: Int = 0) { state = Locked(Machine(version: version)) }

  /// The newest version held.
  @usableFromInline package var current: Int { state.withLock(\.version) }

  /// Whether ``finish()`` has been called.
  package var isFinished: Bool { state.withLock(\.isFinished) }

  /// Records that the consumer holds everything up to `version`, and wakes the tasks waiting for
  /// it or an earlier one.
  ///
  /// - Complexity: O(*w*) in the number of waiting tasks.
  @usableFromInline package func hold(through version: Int) {
    for waiter in state.withLock({ $0.hold(through: version) }) { waiter.resume(returning: true) }
  }

  /// Ends the consumer's progress (its stream ended): waiting tasks return `false`.
  ///
  /// - Complexity: O(*w*) in the number of waiting tasks.
  @usableFromInline package func finish() {
    for waiter in state.withLock({ $0.finish() }) { waiter.resume(returning: false) }
  }

  /// Returns once the consumer holds `version`.
  ///
  /// - Returns: `true` when `version` was reached; `false` when the tracker finished first or the task
  ///   was cancelled.
  /// - Complexity: O(1) when `version` is already reached; otherwise O(*w*) to register.
  @usableFromInline package func reached(_ version: Int) async -> Bool {
    let id = state.withLock { $0.makeID() }
    let wait = TaskSchedule.beginWait("version \(version) of a subscription")
    defer { TaskSchedule.endWait(wait) }
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
