// How far a session's subscription has been sent: its first message, then its batches until it ends; and
// who waits for either.

/// How far the sending of one subscription of a ``WireSession`` has come, and the session's waits on it:
/// for the first message (what must follow it, an edit's answer or a refusal, waits for it) and for the end
/// (a subscription being replaced or closed waits until nothing more of it is written).
///
/// The session keeps no task's handle for this: a finished task's handle keeps the task's memory while it
/// lives, and a session lives as long as its connection. The task that sends the first message reports it
/// here, and the task that sends the rest (started only when there is a rest) reports the end.
///
/// A plain synchronous state machine: ``SendingControl`` keeps it under its lock and resumes the waiters
/// it returns after releasing it (never from inside it).
struct SendingProgress<Waiter> {
  /// The sending's phase.
  enum Phase: Hashable {
    /// The first message is being sent.
    case starting
    /// The first message was sent; the batches after it are being sent.
    case following
    /// Nothing more is written: the first message could not be sent, or the following ended.
    case finished
  }

  /// Where the sending is.
  private(set) var phase = Phase.starting
  /// Whether the first message was sent: known once the phase is past `starting`.
  private(set) var firstSent = false
  /// The waits for the first message, and for the end.
  private var waitingForFirst: [Waiter] = []
  private var waitingForEnd: [Waiter] = []

  /// How many waits are parked (tests read it).
  var waitingCount: Int { waitingForFirst.count + waitingForEnd.count }

  /// A wait for the first message: its outcome now (`true`: sent), or `nil` when `waiter` is parked until
  /// it is known (resumed by a later ``firstMessage(sent:)`` or ``finished()``).
  /// - Complexity: O(1) amortized.
  mutating func awaitFirst(_ waiter: Waiter) -> Bool? {
    guard phase == .starting else { return firstSent }
    waitingForFirst.append(waiter)
    return nil
  }

  /// A wait for the end: `true` when nothing more is written already; `false` when `waiter` is parked
  /// until a later ``finished()``.
  /// - Complexity: O(1) amortized.
  mutating func awaitEnd(_ waiter: Waiter) -> Bool {
    guard phase != .finished else { return true }
    waitingForEnd.append(waiter)
    return false
  }

  /// The first message was sent (`sent`), or could not be. When it could not, nothing more is written.
  /// - Returns: The waits for the first message, to resume with `sent`; with the waits for the end too
  ///   (`ended`) when it could not be sent.
  /// - Complexity: O(*w*) for *w* parked waits.
  mutating func firstMessage(sent: Bool) -> (first: [Waiter], ended: [Waiter]) {
    precondition(
      phase == .starting,
      "SimpleSource: a subscription's first message was reported twice (internal inconsistency)")
    firstSent = sent
    let first = waitingForFirst
    waitingForFirst = []
    guard !sent else {
      phase = .following
      return (first, [])
    }
    phase = .finished
    defer { waitingForEnd = [] }
    return (first, waitingForEnd)
  }

  /// Nothing more is written: the batches after the first message were followed to the end.
  /// - Returns: The waits for the end, to resume.
  /// - Complexity: O(*w*) for *w* parked waits.
  mutating func finished() -> [Waiter] {
    precondition(
      phase == .following,
      "SimpleSource: a subscription's following ended before it began (internal inconsistency)")
    phase = .finished
    defer { waitingForEnd = [] }
    return waitingForEnd
  }
}

/// Plain values: ``SendingControl`` keeps it under a lock shared by tasks.
extension SendingProgress: Sendable where Waiter: Sendable {}
