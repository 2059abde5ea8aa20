// The callers a state machine has parked until a condition holds, each named by an id its cancellation uses.

/// What a state machine answers a caller that waits for a condition.
@usableFromInline
package enum WaitDecision<Waiter> {
  /// Return now: `reached` when the condition holds, `false` when it can no longer come.
  case resume(Waiter, reached: Bool)
  /// Parked; `id` names the waiter to the machine's cancellation event.
  case wait(id: Int)
}

/// Waiters parked until their condition (`Condition`, such as the version they wait for) holds: the part
/// of a state machine that every wait of the package shares (``PublishStateMachine``, the remote source's).
/// A waiter leaves exactly once: when its condition holds, when its task is cancelled, or at the end.
@usableFromInline
package struct ParkedWaiters<Condition, Waiter> {
  @usableFromInline var parked: [(id: Int, condition: Condition, waiter: Waiter)] = []
  @usableFromInline var lastID = 0

  @inlinable package init() {}

  /// Whether no waiter is parked.
  @inlinable package var isEmpty: Bool { parked.isEmpty }

  /// The conditions of the parked waiters.
  @inlinable package var conditions: [Condition] { parked.map(\.condition) }

  /// Parks `waiter` until `condition` holds.
  /// - Returns: The id its cancellation names it with.
  @inlinable
  package mutating func park(_ waiter: Waiter, until condition: Condition) -> Int {
    lastID += 1
    parked.append((lastID, condition, waiter))
    return lastID
  }

  /// The waiter `id` names leaves, its task cancelled.
  /// - Returns: The waiter, to resume, unless it left already.
  @inlinable
  package mutating func cancel(_ id: Int) -> Waiter? {
    guard let index = parked.firstIndex(where: { $0.id == id }) else { return nil }
    return parked.remove(at: index).waiter
  }

  /// The waiter parked first leaves, if any.
  /// - Complexity: O(*w*) for *w* parked waiters.
  @inlinable
  package mutating func takeFirst() -> Waiter? {
    parked.isEmpty ? nil : parked.removeFirst().waiter
  }

  /// The waiters whose condition `holds` leave.
  /// - Returns: Them, in the order they parked, to resume.
  /// - Complexity: O(*w*) for *w* parked waiters.
  @inlinable
  package mutating func take(where holds: (Condition) -> Bool) -> [Waiter] {
    guard !parked.isEmpty else { return [] }
    var due: [Waiter] = []
    var waiting: [(id: Int, condition: Condition, waiter: Waiter)] = []
    for entry in parked {
      if holds(entry.condition) { due.append(entry.waiter) } else { waiting.append(entry) }
    }
    parked = waiting
    return due
  }
}

/// Plain values: an owner's nonisolated `deinit` hands its waiters back through them.
extension ParkedWaiters: Sendable where Condition: Sendable, Waiter: Sendable {}

/// Values, compared whole: a state machine's exhaustive test visits each of its states once.
extension ParkedWaiters: Equatable where Condition: Hashable, Waiter: Hashable {
  @inlinable
  package static func == (a: Self, b: Self) -> Bool {
    a.lastID == b.lastID
      && a.parked.elementsEqual(b.parked) {
        $0.id == $1.id && $0.condition == $1.condition && $0.waiter == $1.waiter
      }
  }
}

extension ParkedWaiters: Hashable where Condition: Hashable, Waiter: Hashable {
  @inlinable
  package func hash(into hasher: inout Hasher) {
    hasher.combine(lastID)
    hasher.combine(parked.count)
    for entry in parked {
      hasher.combine(entry.id)
      hasher.combine(entry.condition)
      hasher.combine(entry.waiter)
    }
  }
}
