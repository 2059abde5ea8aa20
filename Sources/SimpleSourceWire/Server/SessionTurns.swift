// Whose turn it is to change a session's subscription: one change at a time, in the order they arrived.

/// The turns of a ``WireSession``'s subscription changes (subscribe, scope change, close): at most one
/// holds the turn, the others wait in arrival order, and leaving hands the turn to the oldest waiter.
///
/// A session's changes suspend (opening a view, stopping the old subscription's sender), so without turns a
/// scope change could interleave with a subscribe that had read the old scope and finish before it. Holding
/// the turn for a whole change makes every change see the one before it complete.
///
/// A plain synchronous state machine: the session keeps it in its actor and resumes the waiter ``leave()``
/// returns after updating it (never from inside it).
struct SessionTurns<Waiter> {
  /// Whether a change holds the turn.
  private(set) var isHeld = false
  /// The changes waiting for the turn, oldest first from `head`.
  private var waiting: [Waiter?] = []
  private var head = 0

  /// The number of changes waiting.
  var waitingCount: Int { waiting.count - head }

  /// A change asks for the turn: `true` when it holds it now; `false` when `waiter` waits (it is handed
  /// the turn by a later ``leave()``).
  /// - Complexity: O(1) amortized.
  mutating func enter(_ waiter: Waiter) -> Bool {
    guard isHeld else {
      isHeld = true
      return true
    }
    waiting.append(waiter)
    return false
  }

  /// The change holding the turn is done: returns the waiter that holds it now (resume it), or `nil` when
  /// none waits and the turn is free.
  /// - Complexity: O(1) amortized.
  mutating func leave() -> Waiter? {
    precondition(isHeld, "SimpleSource: a session left a turn it did not hold (internal inconsistency)")
    guard head < waiting.count else {
      isHeld = false
      waiting.removeAll(keepingCapacity: true)
      head = 0
      return nil
    }
    guard let next = waiting[head] else {
      preconditionFailure("SimpleSource: a session's turn had no waiter (internal inconsistency)")
    }
    waiting[head] = nil
    head += 1
    if head * 2 >= waiting.count && head > 16 {
      waiting.removeFirst(head)
      head = 0
    }
    return next
  }
}
