// The pure state machine of a source's publishing: versions made, cut, published, cancelled out; waiters.

/// What a ``BasicDataSource`` decides while its writers, its publish loop and its waiters interleave:
/// which versions exist, which are cut into a batch, which batch is published, and who to wake.
///
/// Plain synchronous code in the style of ``SubscriberStateMachine``: each event changes the state and
/// returns what to do (start the loop, diff this cut, publish, bring subscribers to a version that
/// cancelled out, resume these waiters); the actor performs it. There is no `await` inside, so every
/// interleaving of the writers, the loop and the waiters is a sequence of these events, and
/// `PublishStateMachineTests` enumerates those sequences exhaustively. `State` is what a cut freezes (a
/// ``Snapshot``; an `Int` in tests), `ID` an item id, `Waiter` a suspended caller of
/// ``BasicDataSource/settled(through:)``, `Preparer` a
/// suspended caller of `BasicDataSource.prepare(_:)` waiting its turn.
///
/// **Two-phase writes.** A prepared write reserves the source from ``reserve(_:)`` to
/// ``released(_:committing:refreshing:)``, so the state the write was prepared against is the state it is
/// applied to, and its version is the next one. Other writers wait their turn, first come first served:
/// preparers, and direct mutations made while the source is reserved (``isReserved``), which reserve it
/// the same way, make their change when granted and release it at once. Releasing hands the reservation
/// straight to the next one, in the same step, so nothing slips in between two writers in the queue.
///
/// The loop runs while versions are left to cut: ``committed(refreshing:)`` says when to start it,
/// ``continuePublishing()`` says whether a version is left to cut, ``cut(_:log:)`` gives it
/// each cut, ``diffed(_:isEmpty:)`` says what to do with the diff, and the loop stops when
/// ``continuePublishing()`` returns `false`, in the same step that saw nothing left, so a mutation is
/// never left uncut with no loop running.
@usableFromInline
struct PublishStateMachine<State, ID: Hashable, Waiter, Preparer> {
  // Each part of the state is a phase or a value the others cannot contradict: the versions are one
  // value that keeps their order, the loop's phase says whether it runs and what it diffs, the turns say
  // who holds the source, who waits for it and the last ticket (and that the source has ended), the
  // unpublished edits say what a log-derived batch may use. What the types cannot say (that the loop
  // runs while versions are uncut, the waiters due) ``violations`` checks.

  /// The version numbers and their order: `published` ≤ `cut` ≤ `newest`, `cancelledOut` ≤ `cut`,
  /// `subscribed` ≤ `newest`. Each change keeps the order or stops the program: no event can leave
  /// them out of order.
  @usableFromInline
  struct Versions: Hashable, Sendable {
    /// The newest version: every mutation that changes something adds one.
    @usableFromInline private(set) var newest: Int
    /// Mutations up to this version have been diffed (and, unless they cancelled out, published).
    @usableFromInline private(set) var cut: Int
    /// The `to` of the newest published batch.
    @usableFromInline private(set) var published: Int
    /// The newest version a subscriber started at: when it is past ``offered``, a subscriber may hold a
    /// state that no batch has offered.
    @usableFromInline private(set) var subscribed: Int
    /// The version subscribers were brought to after mutations that cancelled out.
    @usableFromInline private(set) var cancelledOut: Int

    /// Every version at `version`.
    @inlinable
    init(_ version: Int) {
      (newest, cut, published, subscribed, cancelledOut) = (version, version, version, version, version)
    }

    /// The version a subscriber that has taken every batch offered so far is at.
    @inlinable var offered: Int { max(published, cancelledOut) }

    /// A mutation made the next version.
    @inlinable
    mutating func make() -> Int {
      newest += 1
      return newest
    }

    /// A subscriber started at the newest version.
    @inlinable mutating func subscribe() { subscribed = newest }

    /// Versions up to `version` are cut: published (`published`), cancelled out (`cancelledOut`) or
    /// neither (nothing changed, and no subscriber held anything else).
    @inlinable
    mutating func cut(through version: Int, published isPublished: Bool, cancelledOut isCancelledOut: Bool) {
      precondition(cut < version && version <= newest, "SimpleSource: a cut out of order")
      cut = version
      if isPublished { published = version }
      if isCancelledOut { cancelledOut = version }
    }
  }

  /// Where the publish loop stands.
  @usableFromInline
  enum Loop: Hashable, Sendable {
    /// No loop runs: every version is cut.
    case idle
    /// The loop runs, between two cuts.
    case running
    /// The loop diffs the cut that ends at this version.
    case diffing(through: Int)
  }

  /// Who holds the source between writers, first come first served. Tickets count up from 1.
  @usableFromInline
  enum Turns {
    /// No prepared write holds it: direct mutations run at once; `lastTicket` is the newest granted.
    case free(lastTicket: Int)
    /// The write with `ticket` (the newest granted) holds it; `waiting` preparers queue behind it, in
    /// the order they came.
    case held(ticket: Int, waiting: ParkedWaiters<Void, Preparer>)
    /// The source went away: waits return at once, and no one is granted it.
    case ended
  }

  /// The version numbers, in their order.
  @usableFromInline private(set) var versions: Versions
  /// The state at the newest published version: the next batch's `from`.
  @usableFromInline private(set) var published: State
  /// Items to refresh in the next batch although `==` did not change.
  @usableFromInline private(set) var pendingRefresh = Set<ID>()
  /// What the edits since ``published`` touched, for a batch derived from them (the log of a cut that
  /// published nothing stays until a batch is published).
  @usableFromInline private(set) var unpublished = EditLog<ID>.nothing
  /// Where the publish loop stands.
  @usableFromInline private(set) var loop = Loop.idle
  /// Callers of `settled(through:)`, until the version they wait for is cut.
  @usableFromInline private(set) var settleWaiters = ParkedWaiters<Int, Waiter>()
  /// Who holds the source.
  @usableFromInline private(set) var turns = Turns.free(lastTicket: 0)

  /// A source whose version `version` (0 unless given) is `state`.
  @inlinable
  init(state: State, version: Int = 0) {
    published = state
    versions = Versions(version)
  }

  /// The newest version: every mutation that changes something adds one.
  @inlinable var version: Int { versions.newest }
  /// Mutations up to this version have been diffed (and, unless they cancelled out, published).
  @inlinable var cutVersion: Int { versions.cut }
  /// The version a subscriber that has taken every batch offered so far is at.
  @inlinable var offeredVersion: Int { versions.offered }

  /// Whether the source went away.
  @inlinable var isFinished: Bool {
    if case .ended = turns { return true }
    return false
  }

  /// The cut being diffed, if any.
  @inlinable var diffing: Int? {
    if case .diffing(let through) = loop { return through }
    return nil
  }

  /// The ticket of the prepared write that holds the source.
  @inlinable var reservation: Int? {
    if case .held(let ticket, _) = turns { return ticket }
    return nil
  }

  // MARK: - Writers and subscribers

  /// A mutation made the next version, forcing `refreshing` to be refreshed in the next batch.
  /// - Returns: The new version, and whether to start the publish loop (none runs).
  @inlinable
  mutating func committed(refreshing: Set<ID> = []) -> (version: Int, startPublishing: Bool) {
    let version = versions.make()
    if !refreshing.isEmpty { pendingRefresh.formUnion(refreshing) }
    guard loop == .idle else { return (version, false) }
    loop = .running
    return (version, true)
  }

  /// A subscriber started at the current version.
  @inlinable
  mutating func subscribed() { versions.subscribe() }

  // MARK: - The publish loop

  /// What the loop diffs: the state at ``to`` against ``from``, from the touched ids when they say
  /// everything (``touching`` is not `nil`), in full otherwise.
  @usableFromInline
  struct Cut {
    @usableFromInline let from: State
    @usableFromInline let fromVersion: Int
    @usableFromInline let to: State
    @usableFromInline let toVersion: Int
    @usableFromInline let touching: Set<ID>?
    @usableFromInline let refreshing: Set<ID>

    @inlinable
    init(from: State, fromVersion: Int, to: State, toVersion: Int, touching: Set<ID>?, refreshing: Set<ID>) {
      self.from = from
      self.fromVersion = fromVersion
      self.to = to
      self.toVersion = toVersion
      self.touching = touching
      self.refreshing = refreshing
    }
  }

  /// Whether versions are left to cut; when none are, the loop stops here, in the same step.
  /// - Precondition: The loop runs and is not diffing.
  @inlinable
  mutating func continuePublishing() -> Bool {
    precondition(loop == .running, "SimpleSource: publish loop out of step")
    if cutVersion < version { return true }
    loop = .idle
    return false
  }

  /// The loop cuts the current version, whose state is `state`, with the `log` of the edits since the
  /// last cut, taken from the store.
  /// - Precondition: ``continuePublishing()`` just returned `true`.
  @inlinable
  mutating func cut(_ state: State, log: EditLog<ID>) -> Cut {
    precondition(loop == .running && cutVersion < version, "SimpleSource: cut out of step")
    // Usually nothing is unpublished: the cut's log is taken as it is, no rehash on the actor.
    unpublished.merge(log)
    let refreshing = pendingRefresh
    pendingRefresh = []
    loop = .diffing(through: version)
    return Cut(
      from: published, fromVersion: versions.published, to: state, toVersion: version,
      touching: unpublished.touching, refreshing: refreshing)
  }

  /// What to do with a cut's diff.
  @usableFromInline
  enum Publication {
    /// Publish the batch `from` → `to` (its changeset is the diff).
    case publish(from: Int, to: Int)
    /// Mutations cancelled out while a subscriber had started between them: bring every subscriber to
    /// `to` (its state is the cut's), composing from `since` with the ids `touched` (`nil`: a full diff).
    case cancelledOut(to: Int, since: Int, touched: Set<ID>?)
    /// Nothing changed, and no subscriber holds anything but the offered state (G4).
    case nothing
  }

  /// The loop diffed `cut`; `isEmpty` says whether the changeset holds no change.
  /// - Returns: What to publish, and the waiters whose version is now cut, to resume.
  @inlinable
  mutating func diffed(_ cut: Cut, isEmpty: Bool) -> (publication: Publication, resume: [Waiter]) {
    precondition(loop == .diffing(through: cut.toVersion), "SimpleSource: a diff for another cut")
    loop = .running
    let publication: Publication
    if !isEmpty {
      publication = .publish(from: versions.published, to: cut.toVersion)
      published = cut.to
      unpublished = .nothing
    } else if versions.subscribed > versions.offered {
      publication = .cancelledOut(
        to: cut.toVersion, since: versions.published, touched: unpublished.touching)
    } else {
      publication = .nothing
    }
    switch publication {
    case .publish: versions.cut(through: cut.toVersion, published: true, cancelledOut: false)
    case .cancelledOut: versions.cut(through: cut.toVersion, published: false, cancelledOut: true)
    case .nothing: versions.cut(through: cut.toVersion, published: false, cancelledOut: false)
    }
    let through = cutVersion
    return (publication, settleWaiters.take { $0 <= through })
  }

  // MARK: - Waiting

  /// A caller waits until `version` is cut and offered.
  @inlinable
  mutating func settle(through version: Int, _ waiter: Waiter) -> WaitDecision<Waiter> {
    if cutVersion >= version { return .resume(waiter, reached: true) }
    if isFinished { return .resume(waiter, reached: false) }
    return .wait(id: settleWaiters.park(waiter, until: version))
  }

  /// The task of waiter `id` was cancelled.
  /// - Returns: The waiter, to resume, unless it was resumed already.
  @inlinable
  mutating func cancelSettle(_ id: Int) -> Waiter? { settleWaiters.cancel(id) }

  /// The source goes away.
  /// - Returns: Every waiter and every waiting preparer, to resume (with nothing).
  @inlinable
  mutating func finish() -> (waiters: [Waiter], preparers: [Preparer]) {
    var preparers: [Preparer] = []
    if case .held(_, var waiting) = turns { preparers = waiting.take { _ in true } }
    turns = .ended
    return (settleWaiters.take { _ in true }, preparers)
  }

  // MARK: - Two-phase writes

  /// Whether a writer holds the source: a direct mutation then queues behind it (``reserve(_:)``).
  @inlinable var isReserved: Bool { reservation != nil }

  /// What a preparer is told when it asks for the source.
  @usableFromInline
  enum Reservation {
    /// The source is its own until it releases `ticket`.
    case granted(ticket: Int)
    /// Parked until the writes before it are released; `id` names it to ``cancelReserve(_:)``.
    case wait(id: Int)
    /// The source went away.
    case ended
  }

  /// A preparer asks for the source: it is granted at once when no prepared write holds it.
  @inlinable
  mutating func reserve(_ preparer: Preparer) -> Reservation {
    switch turns {
    case .ended: return .ended
    case .free(let lastTicket): return .granted(ticket: grant(after: lastTicket, queue: ParkedWaiters()))
    case .held(let ticket, var waiting):
      turns = .ended  // the queue's only reference is `waiting` now: it is changed in place
      let id = waiting.park(preparer, until: ())
      turns = .held(ticket: ticket, waiting: waiting)
      return .wait(id: id)
    }
  }

  /// Hands the source to the ticket after `lastTicket`, with `queue` waiting behind it.
  @inlinable
  mutating func grant(after lastTicket: Int, queue: ParkedWaiters<Void, Preparer>) -> Int {
    turns = .held(ticket: lastTicket + 1, waiting: queue)
    return lastTicket + 1
  }

  /// The task of preparer `id` was cancelled while it waited.
  /// - Returns: The preparer, to resume with nothing, unless it was granted already.
  @inlinable
  mutating func cancelReserve(_ id: Int) -> Preparer? {
    guard case .held(let ticket, var waiting) = turns else { return nil }
    turns = .ended  // as in reserve(_:): `waiting` is changed in place
    let preparer = waiting.cancel(id)
    turns = .held(ticket: ticket, waiting: waiting)
    return preparer
  }

  /// What releasing a reservation does.
  @usableFromInline
  struct Release {
    /// The version after the release: a new one when the write committed a change.
    @usableFromInline let version: Int
    /// Whether to start the publish loop.
    @usableFromInline let startPublishing: Bool
    /// The next preparer, now holding the source, and its ticket, to resume.
    @usableFromInline let next: (preparer: Preparer, ticket: Int)?
  }

  /// The prepared write `ticket` is applied (`committing`: it changed something, forcing `refreshing` to be
  /// refreshed) or abandoned; the source passes to the next preparer, if one waits.
  ///
  /// A ticket that no longer holds the source (abandoned already) releases nothing.
  /// - Precondition: A write that commits holds the source.
  mutating func released(_ ticket: Int, committing: Bool, refreshing: Set<ID> = []) -> Release {
    guard case .held(ticket, var waiting) = turns else {
      precondition(!committing, "SimpleSource: a prepared write was applied without holding the source")
      return Release(version: version, startPublishing: false, next: nil)
    }
    turns = .free(lastTicket: ticket)
    var started = (version: version, startPublishing: false)
    if committing { started = committed(refreshing: refreshing) }
    var next: (Preparer, Int)?
    if let preparer = waiting.takeFirst() {
      next = (preparer, grant(after: ticket, queue: waiting))
    }
    return Release(version: started.version, startPublishing: started.startPublishing, next: next)
  }

  // MARK: - Invariants

  /// The invariants every event keeps; empty when all hold. The exhaustive tests check them after each
  /// event.
  var violations: [String] {
    var found: [String] = []
    if loop == .idle && cutVersion != version { found.append("versions left uncut with no loop running") }
    if let diffing, !(cutVersion < diffing && diffing <= version) {
      found.append("diffing \(diffing) out of range")
    }
    if settleWaiters.conditions.contains(where: { $0 <= cutVersion }) {
      found.append("a due waiter still parked")
    }
    if isFinished && !settleWaiters.isEmpty { found.append("waiters parked after the end") }
    if diffing == nil && versions.published == cutVersion && unpublished != .nothing {
      found.append("edits remembered with nothing unpublished")
    }
    return found
  }
}

/// Plain values: the source's nonisolated `deinit` hands its waiters back through it.
extension PublishStateMachine: Sendable
where State: Sendable, ID: Sendable, Waiter: Sendable, Preparer: Sendable {}
extension PublishStateMachine.Cut: Sendable
where State: Sendable, ID: Sendable, Waiter: Sendable, Preparer: Sendable {}
extension PublishStateMachine.Turns: Sendable
where State: Sendable, ID: Sendable, Waiter: Sendable, Preparer: Sendable {}

/// Values, compared whole: the exhaustive test visits each state of the machine once.
extension PublishStateMachine: Equatable where State: Hashable, Waiter: Hashable, Preparer: Hashable {}
extension PublishStateMachine: Hashable where State: Hashable, Waiter: Hashable, Preparer: Hashable {}
extension PublishStateMachine.Cut: Equatable where State: Hashable, Waiter: Hashable, Preparer: Hashable {}
extension PublishStateMachine.Cut: Hashable where State: Hashable, Waiter: Hashable, Preparer: Hashable {}
extension PublishStateMachine.Turns: Equatable where State: Hashable, Waiter: Hashable, Preparer: Hashable {
  @usableFromInline
  static func == (a: Self, b: Self) -> Bool {
    switch (a, b) {
    case (.free(let a), .free(let b)): a == b
    case (.held(let a, let queueA), .held(let b, let queueB)):
      a == b && queueA.lastID == queueB.lastID
        && queueA.parked.elementsEqual(queueB.parked) { $0.id == $1.id && $0.waiter == $1.waiter }
    case (.ended, .ended): true
    default: false
    }
  }
}
extension PublishStateMachine.Turns: Hashable where State: Hashable, Waiter: Hashable, Preparer: Hashable {
  @usableFromInline
  func hash(into hasher: inout Hasher) {
    switch self {
    case .free(let lastTicket): hasher.combine(0); hasher.combine(lastTicket)
    case .held(let ticket, let waiting):
      hasher.combine(1)
      hasher.combine(ticket)
      hasher.combine(waiting.lastID)
      for entry in waiting.parked {
        hasher.combine(entry.id)
        hasher.combine(entry.waiter)
      }
    case .ended: hasher.combine(2)
    }
  }
}
