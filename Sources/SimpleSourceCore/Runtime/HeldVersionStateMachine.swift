// The pure state machine behind HeldVersion: the version reached, and who waits for which version.

/// The version a consumer holds and the tasks waiting for later ones; synchronous, no `await`.
///
/// Every waiter is handed out exactly once: by ``hold(through:)`` (reached), ``cancel(id:)`` or ``finish()``
/// (not reached). A cancellation that arrives before its wait is registered is remembered, so the wait
/// then returns at once.
@usableFromInline
struct HeldVersionStateMachine<Waiter: Sendable>: Sendable {
  @usableFromInline
  struct Pending: Sendable {
    let id: Int
    let version: Int
    let waiter: Waiter
  }

  private(set) var version: Int
  private(set) var isFinished = false
  private(set) var pending: [Pending] = []
  /// Ids made by ``makeID()`` whose wait is not registered yet, and whether each was cancelled meanwhile.
  private(set) var unregistered: [Int: Bool] = [:]
  private var nextID = 0

  init(version: Int) { self.version = version }

  /// A fresh id for one wait.
  mutating func makeID() -> Int {
    defer { nextID += 1 }
    unregistered[nextID] = false
    return nextID
  }

  /// Registers a wait for `target`. Returns the answer at once (`true`: reached; `false`: finished or
  /// cancelled), or `nil` when the waiter is kept until an event hands it out.
  mutating func wait(for target: Int, id: Int, waiter: Waiter) -> Bool? {
    let wasCancelled = unregistered.removeValue(forKey: id) ?? false
    if version >= target { return true }
    if isFinished || wasCancelled { return false }
    pending.append(Pending(id: id, version: target, waiter: waiter))
    return nil
  }

  /// Raises the version (a lower one is ignored) and hands out the waiters it satisfies.
  mutating func hold(through newVersion: Int) -> [Waiter] {
    guard newVersion > version else { return [] }
    version = newVersion
    // Nobody waits (a follower's usual state): no pass over the waiters.
    guard !pending.isEmpty else { return [] }
    var reached: [Waiter] = []
    pending.removeAll { waiting in
      guard waiting.version <= newVersion else { return false }
      reached.append(waiting.waiter)
      return true
    }
    return reached
  }

  /// Cancels one wait: its waiter if it is registered, otherwise remembers the id for when it is.
  mutating func cancel(id: Int) -> Waiter? {
    if let index = pending.firstIndex(where: { $0.id == id }) { return pending.remove(at: index).waiter }
    // Not registered yet: the wait will see it. Already answered: nothing to do, nothing kept.
    if unregistered[id] != nil { unregistered[id] = true }
    return nil
  }

  /// Ends the sequence of versions: every waiter is handed out, and later waits for a version not yet
  /// reached return at once.
  mutating func finish() -> [Waiter] {
    isFinished = true
    defer { pending = [] }
    return pending.map(\.waiter)
  }
}
