// The pure state machine of a remote source's own edits: which are pending, which the connection has
// been sent, what a reconnect sends again, and who waits for which answer.

package import SimpleSourceCore

/// The edits a ``RemoteDataSource`` made that its sender has not answered yet, in the order they were
/// made, and the callers waiting for their answers.
///
/// Plain synchronous code in the style of ``RemoteStateMachine``: each event returns what to do (send
/// these edits, resume these waiters), and the actor does it. It holds no state of the list: the actor
/// shows the sender's state with every pending edit applied on top, in this order.
///
/// - **Sending.** While connected, every pending edit has been handed to the connection: one made then is
///   sent at once, and a connection sends every pending edit again, in order, after its `subscribe`. An
///   unanswered edit may or may not have reached the sender before a connection dropped; the sender answers
///   an edit id once and a repeated id with the same answer, so sending it again is safe.
/// - **Answers.** An answer removes its edit, whatever its position (answers to edits that did not
///   depend on each other may come in any order), and resumes its waiter. An answer to an id not pending
///   (answered already, on an earlier connection) changes nothing.
/// - **Waiting.** A waiter whose task is cancelled leaves; its edit stays pending. The newest
///   ``rememberedAnswers`` answers are kept, for a caller that asks after the answer came.
/// - **Posting** (a source that follows by reads over HTTP). One edit is posted at a time, the oldest not
///   confirmed, so that an edit naming what the one before it made reaches the sender after it. The
///   sender confirms a post as soon as it made the edit, before what this source reads shows it: the edit
///   stays pending, shown on top, with the version that carries it, until what the source holds or a read
///   covered reaches that version (``covered(_:)``), and is answered then.
@usableFromInline package struct PendingEdits<Edit, Answer, Waiter> {
  /// The pending edits, oldest first.
  package private(set) var entries: [(id: String, edit: Edit)] = []
  /// Whether a connection is open: every pending edit has been handed to it.
  package private(set) var isConnected = false
  /// Callers waiting for the answer to an edit, by its id.
  package private(set) var waiters = ParkedWaiters<String, Waiter>()
  /// Whether the source went away.
  package private(set) var isFinished = false
  /// The newest answers, oldest first.
  package private(set) var answers: [(id: String, answer: Answer)] = []
  /// The edit posted and not answered yet, if one is.
  package private(set) var posting: String?
  /// The edits the sender confirmed to a post, by id, with the version that carries each: still pending
  /// until what the source holds or reads reaches that version.
  package private(set) var confirmedByPost: [String: Int] = [:]
  /// How many answers are kept.
  package static var rememberedAnswers: Int { 256 }

  package init() {}

  /// Whether no edit is pending.
  package var isEmpty: Bool { entries.isEmpty }

  /// The edits pending, oldest first.
  package var edits: [Edit] { entries.map(\.edit) }

  /// A new edit `id`, shown at once.
  /// - Returns: Whether to send it now (a connection is open).
  /// - Precondition: no pending edit has the id.
  package mutating func make(_ id: String, _ edit: Edit) -> Bool {
    precondition(!entries.contains { $0.id == id }, "SimpleSource: two pending edits are named \(id)")
    entries.append((id, edit))
    return isConnected
  }

  /// The next edit to post: the oldest pending edit the sender has not confirmed, unless a post is under
  /// way (or the source went away). It is under way until ``posted(_:confirmedAt:)`` or ``answer(_:_:)``.
  /// - Complexity: O(*p*) for *p* pending edits.
  package mutating func nextPost() -> (id: String, edit: Edit)? {
    guard posting == nil, !isFinished, let next = entries.first(where: { confirmedByPost[$0.id] == nil })
    else { return nil }
    posting = next.id
    return next
  }

  /// The post of edit `id` ended: confirmed by the sender at `version`, or not answered (`nil`: posted
  /// again later). A refusal is an ``answer(_:_:)``.
  /// - Complexity: O(*p*).
  package mutating func posted(_ id: String, confirmedAt version: Int?) {
    if posting == id { posting = nil }
    if let version, entries.contains(where: { $0.id == id }) { confirmedByPost[id] = version }
  }

  /// What the source holds, or what a read covered, reached `version`: the edits confirmed to a post at
  /// it or before, oldest first, with their versions, to answer now.
  /// - Complexity: O(*p*).
  package func covered(_ version: Int) -> [(id: String, version: Int)] {
    entries.compactMap { entry in
      confirmedByPost[entry.id].flatMap { $0 <= version ? (entry.id, $0) : nil }
    }
  }

  /// What a caller waiting for edit `id` does.
  package enum Wait {
    /// The answer came already.
    case answered(Answer)
    /// No such edit is pending or was answered recently.
    case unknown
    /// Parked; the id names it to ``cancelWait(_:)``.
    case parked(Int)
  }

  /// A caller waits for the answer to edit `id`.
  package mutating func wait(for id: String, _ waiter: Waiter) -> Wait {
    if let answered = answers.last(where: { $0.id == id }) { return .answered(answered.answer) }
    guard !isFinished, entries.contains(where: { $0.id == id }) else { return .unknown }
    return .parked(waiters.park(waiter, until: id))
  }

  /// Keeps `answers` (oldest first) as answered edits, as a restart finds them in a store.
  /// - Complexity: O(*a*) for *a* answers.
  package mutating func remember(_ answers: [(id: String, answer: Answer)]) {
    self.answers.append(contentsOf: answers)
    if self.answers.count > Self.rememberedAnswers {
      self.answers.removeFirst(self.answers.count - Self.rememberedAnswers)
    }
  }

  /// A connection opened.
  /// - Returns: Every pending edit, oldest first, to send after the `subscribe`.
  package mutating func connect() -> [Edit] {
    isConnected = true
    return edits
  }

  /// The connection closed, or failed to send: pending edits wait for the next one.
  package mutating func disconnect() { isConnected = false }

  /// The sender answered edit `id` with `answer`.
  /// - Returns: The edit, when it was pending (it is removed, and its answer kept), and its waiters, to
  ///   resume with the answer.
  package mutating func answer(_ id: String, _ answer: Answer) -> (edit: Edit?, waiters: [Waiter]) {
    guard let index = entries.firstIndex(where: { $0.id == id }) else { return (nil, []) }
    let edit = entries.remove(at: index).edit
    confirmedByPost[id] = nil
    if posting == id { posting = nil }
    answers.append((id, answer))
    if answers.count > Self.rememberedAnswers { answers.removeFirst() }
    return (edit, waiters.take { $0 == id })
  }

  /// The task of waiter `waitID` was cancelled.
  /// - Returns: The waiter, to resume as not answered, unless it left already.
  package mutating func cancelWait(_ waitID: Int) -> Waiter? { waiters.cancel(waitID) }

  /// The source goes away.
  /// - Returns: Every waiter, to resume as not answered.
  package mutating func finish() -> [Waiter] {
    isFinished = true
    isConnected = false
    posting = nil
    return waiters.take { _ in true }
  }

  /// The invariants every event keeps; empty when all hold.
  package var violations: [String] {
    var found: [String] = []
    if Set(entries.map(\.id)).count != entries.count { found.append("two pending edits share an id") }
    let pending = Set(entries.map(\.id))
    if waiters.conditions.contains(where: { !pending.contains($0) }) {
      found.append("a waiter for an edit that is not pending")
    }
    if isFinished && (isConnected || !waiters.isEmpty) {
      found.append("connected or waited on after the end")
    }
    if Set(answers.map(\.id)).intersection(pending).count > 0 {
      found.append("an answered edit still pending")
    }
    if answers.count > Self.rememberedAnswers { found.append("more answers kept than remembered") }
    if let posting, !pending.contains(posting) || confirmedByPost[posting] != nil {
      found.append("a post under way for an edit not pending, or confirmed")
    }
    if !Set(confirmedByPost.keys).isSubset(of: pending) { found.append("a confirmed post not pending") }
    if isFinished && posting != nil { found.append("posting after the end") }
    return found
  }
}

extension PendingEdits: Sendable where Edit: Sendable, Answer: Sendable, Waiter: Sendable {}
