// The one way the package suspends a caller until an event: a continuation its owner parks, resumed once.

/// Suspends the calling task until the continuation that `park` receives is resumed: by the owner's state
/// machine when the awaited state holds, at the end, or through `cancel` when the task is cancelled.
///
/// Every wait of the package (``BasicDataSource/settled(through:)``, `RemoteDataSource.reached(…)`, the
/// view layer's `showing(_:)`) goes through here, so each returns when its task is cancelled:
/// - `park` runs at once, isolated to the caller's actor: it resumes the continuation itself when the
///   state already holds (or the task is already cancelled) and returns `nil`, or parks it in the owner's
///   state machine and returns the id the machine named it with;
/// - when the task is cancelled, `cancel` is called with a box holding that id, on a new task that runs
///   on the owner's actor after `park` (the owner is busy until the caller suspends), so it always finds
///   the id; it hands the waiter back from the machine, if it is still parked, and resumes it.
///
/// - Returns: The value the continuation was resumed with.
package func cancellableWait<Value: Sendable>(
  isolation: isolated (any Actor)? = #isolation,
  waiting function: StaticString = #function,
  park: (CheckedContinuation<Value, Never>) -> Int?,
  cancel: @escaping @Sendable (WaiterID) async -> Void
) async -> Value {
  let id = WaiterID()
  let wait = TaskSchedule.beginWait("\(function)")
  defer { TaskSchedule.endWait(wait) }
  return await withTaskCancellationHandler {
    await withCheckedContinuation(isolation: isolation) { (continuation: CheckedContinuation<Value, Never>) in
      if let parked = park(continuation) { id.value.withLock { $0 = parked } }
    }
  } onCancel: {
    Task.schedulable("cancelling a wait") { await cancel(id) }
  }
}

/// Suspends the calling task until the state `decide` waits for holds, as ``cancellableWait(isolation:park:cancel:)``
/// does: `decide` answers with the owner's ``WaitDecision``, whose `reached` the wait returns when it
/// resumes at once; a parked waiter is resumed with `true` when its state holds, with `false` when its
/// task is cancelled (`cancel` hands it back from the owner) or the owner goes away.
///
/// - Returns: Whether the state was reached.
package func cancellableWait(
  isolation: isolated (any Actor)? = #isolation,
  waiting function: StaticString = #function,
  decide: (CheckedContinuation<Bool, Never>) -> WaitDecision<CheckedContinuation<Bool, Never>>,
  cancel: @escaping @Sendable (WaiterID) async -> Void
) async -> Bool {
  await cancellableWait(
    isolation: isolation, waiting: function,
    park: { continuation in
      switch decide(continuation) {
      case .resume(let continuation, let reached):
        continuation.resume(returning: reached)
        return nil
      case .wait(let id):
        return id
      }
    }, cancel: cancel)
}

/// The id a state machine named a parked waiter with, set once it is parked; read by its cancellation.
package final class WaiterID: Sendable {
  let value = Locked<Int?>(nil)

  init() {}

  /// The id, once the waiter is parked; `nil` while it is not, or when it never was.
  package var parked: Int? { value.withLock { $0 } }
}
