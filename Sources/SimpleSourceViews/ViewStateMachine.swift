// The pure state machine of one view data source: subscriptions, the apply gate, the user's moves, waiters.

/// What a ``ListViewDataSource`` decides while several of its tasks run: the one that follows the source,
/// reconciliations after the user's moves, and the reordering delegate's calls.
///
/// Plain synchronous code in the style of ``SubscriberStateMachine``: each event changes the state and
/// returns what to do (apply, reconcile, resume these waiters); ``ListViewDataSource`` performs it. There is
/// no `await` inside, so every interleaving of the tasks is a sequence of these events, and the tests
/// enumerate those sequences exhaustively. `Move` is the user's move (``InteractiveMove``) and `Waiter` a
/// suspended task (a continuation; anything in tests).
///
/// The gate: at most one task changes what the view shows at a time (``isApplying``), and none while the
/// user drags (``interactiveMoves``). A task that finds the gate closed parks, and every task parked is
/// handed back when the gate opens, to ask again.
struct ViewStateMachine<Move, Waiter> {
  /// A move of the user's on its way to the source.
  struct PendingMove {
    let serial: Int
    let move: Move
    /// The source version that includes the move, once the reordering delegate returned it.
    var includedIn: Int?
  }

  /// Work that needs the gate.
  enum Work: Hashable {
    /// A batch of the subscription, to the source's version `to`.
    case batch(to: Int)
    /// Bringing the view to the source's state plus the pending moves, scheduled after a move landed,
    /// failed, or was found included.
    case reconcile
  }

  /// What to do with work that asked for the gate.
  enum Admission: Equatable {
    /// The gate is closed: park with ``park(_:)`` and ask again when resumed.
    case wait
    /// The work belongs to an earlier subscription, or a scheduled reconciliation found nothing to do.
    case drop
    /// Apply the batch as it is; then ``finished(at:reconciled:)`` and ``leave()``.
    case apply
    /// Rebase onto the moves still pending (``beginReconcile(epoch:)``); then ``leave()``.
    case reconcile
  }

  /// The next step of a reconciliation.
  enum ReconcileStep {
    /// The user drags: park with ``parkUntilDragsEnd(_:)`` and ask again when resumed.
    case wait
    /// A later subscription took over: stop, and ``leave()``.
    case drop
    /// Diff what the view shows against the source with `moves` replayed (off the main actor), then report
    /// with ``reconcileComputed(epoch:edits:)``.
    case compute(edits: Int, moves: [Move])
  }

  /// What to do with a reconciliation's diff.
  enum Computed: Equatable {
    /// A later subscription took over: stop, and ``leave()``.
    case drop
    /// The view changed under the diff (a move, a drag): begin again.
    case retry
    /// Apply it, then ``finished(at:reconciled:)`` with `reconciled: true`.
    case apply
  }

  /// Counts subscriptions: work of an earlier one is dropped, so a batch of the old source never lands on
  /// the new one's data.
  private(set) var epoch = 0
  /// The subscription of ``epoch`` returned, so the view shows its data: work of the epoch is admitted only
  /// from then on (a reconciliation scheduled while `follow(_:)` subscribes would rebase the old data).
  private(set) var isSubscribed = false
  /// The source version the view shows (plus the moves still pending).
  private(set) var version = 0
  private(set) var pendingMoves: [PendingMove] = []
  private(set) var moveSerial = 0
  /// Counts changes to what the view shows made here rather than by the source (the user's moves, moves
  /// dropped): a diff computed across one is stale.
  private(set) var localEdits = 0
  /// What the view shows differs from the source by the user's moves, so batches must be rebased.
  private(set) var diverged = false
  /// Drags under way (they nest).
  private(set) var interactiveMoves = 0
  /// A task is changing what the view shows.
  private(set) var isApplying = false
  private(set) var gateWaiters: [Waiter] = []
  private(set) var landingWaiters: [Waiter] = []

  /// Whether work must wait: a task applies, or the user drags.
  var isHeld: Bool { interactiveMoves > 0 || isApplying }

  /// Whether a move is still waiting for the reordering delegate.
  var hasUnlandedMoves: Bool { pendingMoves.contains { $0.includedIn == nil } }

  // MARK: - Subscriptions

  /// `follow(_:)` began: everything of earlier subscriptions is stale from now on.
  /// - Returns: The new subscription's epoch.
  mutating func beginFollowing() -> Int {
    stop()
    return epoch
  }

  /// `stop()`: everything of the current subscription is stale from now on.
  mutating func stop() {
    epoch += 1
    isSubscribed = false
  }

  /// The subscription of `epoch` returned, at the source's `version`.
  /// - Returns: `nil` if a later `follow(_:)` or `stop()` won (show nothing); otherwise the waiters for
  ///   moves to resume, since moves of the old data are forgotten.
  mutating func subscribed(epoch: Int, version: Int) -> [Waiter]? {
    guard epoch == self.epoch else { return nil }
    isSubscribed = true
    self.version = version
    pendingMoves = []
    diverged = false
    localEdits += 1
    return takeLandingWaiters()
  }

  // MARK: - The gate

  /// `work` of the subscription `epoch` asks for the gate.
  mutating func admit(_ work: Work, epoch: Int) -> Admission {
    if isHeld { return .wait }
    guard epoch == self.epoch, isSubscribed else { return .drop }
    switch work {
    case .batch(let to):
      isApplying = true
      dropMovesIncluded(through: to)
      return diverged ? .reconcile : .apply
    case .reconcile:
      guard diverged else { return .drop }
      isApplying = true
      return .reconcile
    }
  }

  /// Parks a task that got ``Admission/wait``, until the gate opens.
  /// - Returns: The waiter itself if the gate is open already (resume it at once).
  mutating func park(_ waiter: Waiter) -> Waiter? {
    guard isHeld else { return waiter }
    gateWaiters.append(waiter)
    return nil
  }

  /// Parks a reconciliation that got ``ReconcileStep/wait``: it holds the gate, and waits for the drags
  /// to end.
  /// - Returns: The waiter itself if no drag is under way (resume it at once).
  mutating func parkUntilDragsEnd(_ waiter: Waiter) -> Waiter? {
    guard interactiveMoves > 0 else { return waiter }
    gateWaiters.append(waiter)
    return nil
  }

  /// The applying task is done: the gate opens.
  /// - Returns: The waiters to resume; each asks again.
  mutating func leave() -> [Waiter] {
    precondition(isApplying, "SimpleSource: internal inconsistency, leave() without admission")
    isApplying = false
    return takeGateWaiters()
  }

  /// A batch (`reconciled: false`) or a reconciliation (`reconciled: true`) now shows the source's
  /// `version`.
  /// - Returns: Whether to schedule a reconciliation: a move found included now may have landed elsewhere
  ///   than shown.
  mutating func finished(at version: Int, reconciled: Bool) -> Bool {
    precondition(isApplying, "SimpleSource: internal inconsistency, finished(at:) without admission")
    if reconciled { diverged = !pendingMoves.isEmpty }
    self.version = version
    return scheduleIfDropped(dropMovesIncluded(through: version))
  }

  // MARK: - Reconciling

  /// The next step of a reconciliation of the subscription `epoch`, which holds the gate.
  mutating func beginReconcile(epoch: Int) -> ReconcileStep {
    precondition(isApplying, "SimpleSource: internal inconsistency, reconciling without admission")
    if interactiveMoves > 0 { return .wait }
    guard epoch == self.epoch else { return .drop }
    return .compute(edits: localEdits, moves: pendingMoves.map(\.move))
  }

  /// The diff a reconciliation computed from the state at `edits` is ready.
  mutating func reconcileComputed(epoch: Int, edits: Int) -> Computed {
    guard epoch == self.epoch else { return .drop }
    return edits == localEdits && interactiveMoves == 0 ? .apply : .retry
  }

  // MARK: - The user

  /// The user moved an item in the view, which now shows it moved; the move goes to the delegate.
  /// - Returns: The move's serial, for ``moveLanded(_:in:)`` or ``moveFailed(_:)``.
  mutating func userMoved(_ move: Move) -> Int {
    moveSerial += 1
    pendingMoves.append(PendingMove(serial: moveSerial, move: move, includedIn: nil))
    localEdits += 1
    diverged = true
    return moveSerial
  }

  /// The reordering delegate applied the move `serial`, in the source's `version`.
  /// - Returns: Whether to schedule a reconciliation, and the waiters for moves to resume.
  mutating func moveLanded(_ serial: Int, in version: Int) -> (reconcile: Bool, waiters: [Waiter]) {
    guard let index = pendingMoves.firstIndex(where: { $0.serial == serial }) else {
      return (false, takeLandingWaiters())
    }
    pendingMoves[index].includedIn = version
    // If the batch with the move came before the delegate returned, the move may have landed elsewhere
    // than shown (a neighbour went meanwhile), so reconcile with the source.
    let reconcile = scheduleIfDropped(dropMovesIncluded(through: self.version))
    return (reconcile, takeLandingWaiters())
  }

  /// The reordering delegate rejected the move `serial`.
  /// - Returns: The move (`nil` if it belonged to an earlier subscription), whether to schedule a
  ///   reconciliation that takes it back, and the waiters for moves to resume.
  mutating func moveFailed(_ serial: Int) -> (move: Move?, reconcile: Bool, waiters: [Waiter]) {
    guard let index = pendingMoves.firstIndex(where: { $0.serial == serial }) else {
      return (nil, false, takeLandingWaiters())
    }
    let move = pendingMoves.remove(at: index).move
    localEdits += 1
    return (move, scheduleIfDropped(true), takeLandingWaiters())
  }

  /// Parks a task until every move has reached the source.
  /// - Returns: The waiter itself if none is on its way (resume it at once).
  mutating func parkUntilLanded(_ waiter: Waiter) -> Waiter? {
    guard hasUnlandedMoves else { return waiter }
    landingWaiters.append(waiter)
    return nil
  }

  /// A drag begins: work waits until it ends.
  mutating func beginInteractiveMove() { interactiveMoves += 1 }

  /// A drag ends; an end with no drag begun changes nothing (a view may end a drag it never began, as
  /// `UICollectionView.endInteractiveMovement()` allows).
  /// - Returns: The waiters to resume; each asks again.
  mutating func endInteractiveMove() -> [Waiter] {
    guard interactiveMoves > 0 else { return [] }
    interactiveMoves -= 1
    return takeGateWaiters()
  }

  /// A waiter's task was cancelled: every waiter for moves is handed back, to ask again.
  mutating func wakeLandingWaiters() -> [Waiter] { takeLandingWaiters() }

  /// The view data source goes away.
  /// - Returns: Every waiter, to resume.
  mutating func end() -> [Waiter] {
    stop()
    return takeGateWaiters() + takeLandingWaiters()
  }

  // MARK: - Invariants

  /// The invariants every event keeps; empty when all hold. The exhaustive tests check them after each
  /// event.
  var violations: [String] {
    var found: [String] = []
    if interactiveMoves < 0 { found.append("negative drag count") }
    if !pendingMoves.isEmpty && !diverged { found.append("moves pending but the view is not rebased") }
    if pendingMoves.contains(where: { $0.includedIn.map { $0 <= version } ?? false }) {
      found.append("a move the shown version includes is still replayed")
    }
    if !isHeld && !gateWaiters.isEmpty { found.append("the gate is open but tasks wait at it") }
    if !hasUnlandedMoves && !landingWaiters.isEmpty { found.append("no move is on its way but tasks wait") }
    if zip(pendingMoves, pendingMoves.dropFirst()).contains(where: { $0.serial >= $1.serial }) {
      found.append("pending moves out of order")
    }
    return found
  }

  // MARK: - Helpers

  /// Forgets the pending moves that the source's state at `version` includes.
  /// - Returns: Whether it forgot any.
  @discardableResult
  private mutating func dropMovesIncluded(through version: Int) -> Bool {
    let before = pendingMoves.count
    pendingMoves.removeAll { $0.includedIn.map { $0 <= version } ?? false }
    guard pendingMoves.count != before else { return false }
    localEdits += 1
    return true
  }

  /// A reconciliation is scheduled when `needed`: the view is marked rebased until it runs.
  private mutating func scheduleIfDropped(_ needed: Bool) -> Bool {
    if needed { diverged = true }
    return needed
  }

  private mutating func takeGateWaiters() -> [Waiter] {
    defer { gateWaiters = [] }
    return gateWaiters
  }

  private mutating func takeLandingWaiters() -> [Waiter] {
    guard !hasUnlandedMoves else { return [] }
    defer { landingWaiters = [] }
    return landingWaiters
  }
}

/// Plain values: the view data source's nonisolated `deinit` hands its waiters back through it.
extension ViewStateMachine: Sendable where Move: Sendable, Waiter: Sendable {}
extension ViewStateMachine.PendingMove: Sendable where Move: Sendable, Waiter: Sendable {}
