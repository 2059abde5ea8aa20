// The data source actor: serialized, validated mutations; coalesced diffs off the main actor; subscribers.

/// A data source you mutate directly: an actor holding sections, followed by any number of subscribers.
///
/// ```swift
/// let source = try BasicDataSource(sections: [Section(id: "inbox", items: messages)])
/// let subscription = await source.subscribe()
/// try await source.appendItems([newMessage], toSection: "inbox")
/// for await batch in subscription.batches { render(batch) }
/// ```
///
/// The contract, each part tested:
///
/// - **G1 Order, G2 Exactness, G5 Atomic start.** See ``Subscription``.
/// - **G4 Nothing empty.** A mutation that changes nothing makes no version and no batch; its method
///   returns the unchanged ``version``.
/// - **G6 Bounded backlog, G7 Isolation.** Writers never wait for subscribers. A subscriber that does not
///   consume holds at most one pending batch; a cancelled or dropped one is released at once.
/// - **G8 Atomic mutations.** Every mutation is validated before it changes anything. One that throws
///   (a duplicate id, an unknown id, an index out of range, a transaction body that throws) leaves the
///   source exactly as it was, with no version and no batch, and the caller gets a ``DataSourceError``
///   naming the offending id or index (or the body's own error).
/// - **G9 Off main.** Diffs run on the global concurrent executor, whoever mutates.
/// - **G10 Settling.** ``settled()`` returns once every earlier mutation has been diffed and offered to
///   every subscriber.
///
/// **Two-phase writes.** A service that keeps the state in its own storage as well (a database) prepares a
/// write, commits the batch with its rows, then applies it: see `prepare(_:)` and <doc:WritingThroughADatabase>. Every
/// writer shares one order: while a prepared write holds the source, a direct mutation waits its turn
/// behind it (and behind the writes that came before it), then runs; it is never refused for it.
///
/// **When a batch is cut.** Mutations apply at once, each making a new ``version``. A batch is due when
/// the source is idle and a mutation arrives, or as soon as the previous batch's diff finishes. Before it
/// is cut, the writers waiting for the actor go first, one turn of its queue at a time, while each turn
/// brings new mutations and for at most the ``Coalescing`` delay (1 ms by default); the batch holds every
/// mutation since the last cut. An isolated mutation's batch is cut after one turn; a sustained stream
/// from many tasks makes a batch about once per delay and diff instead of one every few mutations.
public actor BasicDataSource<Section: SectionType>: DataSourceType {
  /// The item type.
  public typealias Item = Section.Item
  /// The error every mutation throws for bad input.
  public typealias Error = DataSourceError<Section.ID, Item.ID>

  // Guard map: `store`, `publishing`, `preparedDiff`, `diffsMade` and `writerQueued` are the actor's, read
  // and written only on it.
  // One task at a time (the publish task, started by the write that finds the source idle, `publish()`)
  // cuts, diffs and offers batches; it leaves the actor only for the diff, which reads the two snapshots
  // it was given, never `store`. Subscribers live in `hub`, behind its own locks, taken one at a time
  // and never while the actor waits; settle and prepare waiters are resumed on the actor.
  // The hot paths are @inlinable so that clients' builds specialise them for their section types.
  @usableFromInline var store: SectionStore<Section>
  /// Versions, cuts, publications and settle waiters: every decision the writers, the publish loop and
  /// the waiters share (see ``PublishStateMachine``).
  @usableFromInline var publishing: Publishing
  @usableFromInline typealias Publishing = PublishStateMachine<
    Snapshot<Section>, Item.ID, CheckedContinuation<Bool, Never>, CheckedContinuation<Int?, Never>
  >
  @usableFromInline let hub: SubscriptionHub<Section>
  /// Indexing and diffing, specialised for `Section` by the client's build (see ``Differ``).
  @usableFromInline let differ: Differ<Section>
  /// How long a cut waits for writers that keep arriving, in nanoseconds (see ``Coalescing``).
  @usableFromInline let coalescingDelay: UInt64
  /// The monotonic clock the coalescing delay is measured with, in nanoseconds; tests inject one.
  @usableFromInline let clock: @Sendable () -> UInt64
  /// Told each time a writer queues behind the one that holds the source (see `onWriterQueued(_:)`).
  @usableFromInline var writerQueued: (@Sendable () -> Void)?
  /// The diff of the prepared write applied last, until the publish loop's next cut: a cut of exactly that
  /// write publishes it instead of diffing the same two states again.
  @usableFromInline var preparedDiff: PreparedDiff<Section>?
  /// How many diffs this source has made (prepared writes' and the publish loop's); tests count them.
  @usableFromInline package var diffsMade = 0

  /// The version of the newest state; every mutation that changes something adds one to its number.
  /// - Complexity: O(1).
  public var version: Version { stamped(publishing.version) }

  /// The counter this source's versions belong to.
  /// - Complexity: O(1).
  public nonisolated var counter: VersionCounter { hub.counter }

  /// Version `number` of this source's counter.
  @inlinable nonisolated func stamped(_ number: Int) -> Version { Version(number, of: hub.counter) }

  /// Creates a source holding `sections` at `version` (0 unless given).
  ///
  /// A source restored from storage starts at the version its storage holds, so that versions mean the
  /// same in the storage's log, in this source and in every client (see <doc:WritingThroughADatabase>).
  /// - Parameters:
  ///   - sections: The first state.
  ///   - version: The version of the first state; later ones count up from it.
  ///   - history: How many offered versions are retained for subscribers that resume (G11).
  ///   - coalescing: How long a batch may wait for mutations that keep arriving (see ``Coalescing``).
  /// - Throws: ``DataSourceError`` for duplicate section or item ids.
  @inlinable
  public init(
    sections: [Section] = [], version: Int = 0, history: HistoryLimit = .default,
    coalescing: Coalescing = .default
  ) throws(Error) {
    try self.init(
      sections: sections, version: version, history: history, coalescing: coalescing,
      clock: monotonicNanoseconds)
  }

  /// Creates a source whose coalescing delay is measured with `clock` (nanoseconds); for tests.
  @inlinable
  init(
    sections: [Section], version: Int = 0, history: HistoryLimit, coalescing: Coalescing,
    clock: @escaping @Sendable () -> UInt64
  ) throws(Error) {
    coalescingDelay = coalescing.nanoseconds
    self.clock = clock
    let snapshot = try Snapshot(sections)
    store = SectionStore(trusted: snapshot)
    publishing = PublishStateMachine(state: snapshot, version: version)
    differ = Differ()
    hub = SubscriptionHub(
      version: version, snapshot: snapshot, differ: differ, history: history, counter: VersionCounter())
  }

  deinit {
    hub.finish()
    let (waiters, preparers) = publishing.finish()
    for waiter in waiters { waiter.resume(returning: false) }
    for preparer in preparers { preparer.resume(returning: nil) }
  }

  // MARK: - Reading and subscribing

  /// The newest state.
  /// - Complexity: O(1): every edit makes the next snapshot as it goes, sharing the rest with the last.
  public var snapshot: Snapshot<Section> { currentSnapshot() }

  /// The number of live subscriptions; ended ones are released at once (G7).
  public nonisolated var subscriberCount: Int { hub.count }

  /// Returns the current snapshot and the batches that follow it; see ``Subscription`` for the promises.
  /// - Parameter pacing: How often this subscriber receives batches; ``Pacing/immediate`` by default.
  /// - Complexity: O(1) amortized; ``Subscription/cancel()`` O(1) expected.
  public func subscribe(pacing: Pacing = .immediate) -> Subscription<Section> {
    publishing.subscribed()
    return hub.subscribe(at: (publishing.version, currentSnapshot()), pacing: pacing)
  }

  /// Resumes a subscriber that holds the state at `version` (G11): see ``Resumption``.
  ///
  /// The subscription starts at `version` when it is the current version or one the history retains
  /// (``HistoryLimit``): its first batch, if any, goes from exactly that version to the newest state, in
  /// one batch derived from the ids changed since when the batches since could say which. Any other
  /// version (forgotten, never offered, or not yet made) gets a reset at the current state.
  ///
  /// - Complexity: O(log *v*) for *v* retained versions; O(*e* log *n*) to rebuild the version's state
  ///   from the *e* changes since the nearest snapshot the history keeps (at most about *n*; none for the
  ///   current version); O(*k*) for the *k* ids changed since.
  public func subscribe(from version: Int, pacing: Pacing = .immediate) -> Resumption<Section> {
    if version == publishing.version { return .resumed(subscribe(pacing: pacing)) }
    return hub.resume(from: version, pacing: pacing)
  }

  /// How many times a subscriber that fell behind caught up by a full diff rather than from the ids its
  /// missed versions touched: only when those versions reshaped the sections (section inserts, deletes,
  /// moves or a whole replacement), touched more than a sixteenth of the list, or when the subscriber
  /// held a state no batch started from. Benchmarks and tests read it.
  package nonisolated var fullDiffCatchUps: Int { hub.fullDiffs.withLock { $0 } }

  /// The versions retained for subscribers that resume, oldest first: the `to` of each retained batch.
  package nonisolated var retainedVersions: [Int] { hub.retainedVersions }
  /// What the history holds, as its bytes bound counts it.
  package nonisolated var retainedBytes: Int { hub.retainedBytes }

  /// Returns once every mutation made before the call has been diffed and offered to every subscriber.
  ///
  /// Tests await this instead of sleeping. It does not wait for subscribers to consume. It returns early
  /// when the waiting task is cancelled (``settled(through:)`` says which).
  public func settled() async { await settled(throughNumber: publishing.version) }

  /// The version a subscriber that has taken every batch offered so far is at: the `to` of the newest
  /// batch, or the version mutations that cancelled out reached when a subscriber had started from a
  /// state between them. Behind ``version`` after mutations that cancelled out (G4).
  public var offeredVersion: Version { stamped(publishing.offeredVersion) }

  /// Returns once `version` exists and every mutation up to it has been diffed and offered to every
  /// subscriber. A writer uses it to await the delivery of the version its mutation returned.
  ///
  /// - Returns: `true` then; `false` when the waiting task was cancelled first, or the source went away.
  /// - Throws: ``VersionError/Code-swift.enum/otherCounter``, at once, when another counter than this
  ///   source's made `version`.
  @discardableResult
  public func settled(through version: Version) async throws(VersionError) -> Bool {
    try VersionError.check(version, against: counter)
    return await settled(throughNumber: version.number)
  }

  /// Returns once version `number` of this source exists and is offered to every subscriber; otherwise
  /// as ``settled(through:)``.
  ///
  /// - Returns: `true` then; `false` when the waiting task was cancelled first, or the source went away.
  @discardableResult
  package func settled(throughNumber version: Int) async -> Bool {
    await cancellableWait {
      publishing.settle(through: version, $0)
    } cancel: {
      await self.cancelSettle($0)
    }
  }

  /// Resumes the waiter `id` names with `false`, if it still waits: its task was cancelled.
  func cancelSettle(_ id: WaiterID) {
    if let parked = id.parked { publishing.cancelSettle(parked)?.resume(returning: false) }
  }

  @inlinable
  func currentSnapshot() -> Snapshot<Section> { store.settledSnapshot() }

  // MARK: - Transactions

  /// Mutates the sections in place; the result is validated and becomes the next state as one step.
  ///
  /// ```swift
  /// try await source.update { sections in
  ///   sections[0].items.removeAll { $0.isRead }
  ///   sections.append(Section(id: "archive", items: []))
  /// }
  /// ```
  ///
  /// A body that does not throw makes this overload's error typed: a ``DataSourceError``, which a `catch`
  /// receives as such. A body that throws its own errors picks the other overload, whose error is untyped.
  ///
  /// - Parameter body: Edits a copy of the sections; runs on the source's actor.
  /// - Returns: What `body` returns.
  /// - Throws: ``DataSourceError`` when the result has duplicate ids, or ``DataSourceErrorCode/cancelled``
  ///   (before `body` runs) when the task was cancelled while it waited for its turn behind a prepared
  ///   write; the source is left exactly as it was (G8).
  /// - Complexity: O(*n*): the result is validated, compared and diffed as a whole. When it keeps every
  ///   section and item id in place (only contents changed), that is id comparisons and `==` for the
  ///   sections the body edited, and nothing is hashed; otherwise one hash per id. For a few edits of a
  ///   long list, ``transaction(_:)->_`` costs O(*k* log *n*).
  @inlinable
  @discardableResult
  public func update<Result: Sendable>(_ body: @Sendable (inout [Section]) -> Result) async throws(Error)
    -> Result
  {
    try await inTurn { () throws(Error) in
      // The arrays of an edited store are built once, here, and compared with below.
      let current = store.snapshot
      var sections = current.sections
      let result = body(&sections)
      try replaceAll(current, with: sections)
      return result
    }
  }

  /// Mutates the sections in place with a body that may throw; otherwise as the overload for a body that
  /// does not.
  ///
  /// - Throws: What `body` throws, or ``DataSourceError`` when the result has duplicate ids or the task
  ///   was cancelled while it waited for its turn. Either way the source is left exactly as it was (G8).
  /// - Complexity: as the overload for a body that does not throw.
  @inlinable
  @discardableResult
  public func update<Result: Sendable>(_ body: @Sendable (inout [Section]) throws -> Result) async throws
    -> Result
  {
    try await inTurn { (refusal: DataSourceErrorCode?) throws in
      if let refusal { throw Error(code: refusal) }
      // The arrays of an edited store are built once, here, and compared with below.
      let current = store.snapshot
      var sections = current.sections
      let result = try body(&sections)
      try replaceAll(current, with: sections)
      return result
    }
  }

  /// Makes `sections` the state, validated, if they differ from `current` (the store's state, passed in
  /// so that arrays a caller built from it are not built again); the next batch is a full diff.
  ///
  /// The O(*n*) validation and comparison run in the ``Differ``'s closure, which the client's build
  /// specialised: Swift does not specialise a generic actor's methods themselves, and that work run
  /// unspecialised is several times slower.
  @inlinable
  func replaceAll(_ current: Snapshot<Section>, with sections: [Section]) throws(Error) {
    guard let replacement = try differ.replace(current, sections) else { return }
    store = replacement
    commit()
  }

  /// Runs one validated edit; commits a new version if it changed something.
  @inlinable
  @discardableResult
  func edit(_ change: @Sendable (inout Transaction<Section>) throws(Error) -> Bool) async throws(Error) -> Int
  {
    try await inTurn { () throws(Error) in try editNow(change) }
  }

  /// Runs one validated edit now, in a turn the caller holds; commits a new version if it changed
  /// something.
  @inlinable
  func editNow(_ change: @Sendable (inout Transaction<Section>) throws(Error) -> Bool) throws(Error) -> Int {
    try applyNow { (store, refreshing) throws(Error) in
      try Transaction.run(change, on: &store, refreshing: &refreshing)
    }
  }

  /// Lets `change` edit the store (and add to the pending refreshes) in place, in its turn; commits a new
  /// version if it returns `true`.
  @inlinable
  func apply(
    _ change:
      @Sendable (_ store: inout SectionStore<Section>, _ refreshing: inout Set<Item.ID>) throws(Error)
      -> Bool
  ) async throws(Error) -> Int {
    try await inTurn { () throws(Error) in try applyNow(change) }
  }

  /// Lets `change` edit the store in place now, in a turn the caller holds; commits a new version if it
  /// returns `true`.
  @inlinable
  func applyNow(
    _ change:
      @Sendable (_ store: inout SectionStore<Section>, _ refreshing: inout Set<Item.ID>) throws(Error)
      -> Bool
  ) throws(Error) -> Int {
    // The edit's refreshes are its own until it commits: an edit that throws leaves none behind.
    var refreshing = Set<Item.ID>()
    guard try change(&store, &refreshing) else { return publishing.version }
    return commit(refreshing: refreshing)
  }

  /// Makes a transaction's edits the next version, if it changed something.
  @inlinable
  @discardableResult
  func finish(_ transaction: Transaction<Section>) -> Int {
    guard transaction.changed else { return publishing.version }
    store = transaction.store
    return commit(refreshing: transaction.refreshing)
  }

  /// Runs `body`'s edits as one step: they become the next version together, and the batch is derived
  /// from what they touched.
  ///
  /// ```swift
  /// try await source.transaction { transaction in
  ///   for order in filled { try transaction.deleteItems([order.id]) }
  ///   try transaction.appendItems(incoming, toSection: "open")
  /// }
  /// ```
  ///
  /// - Parameter body: Makes edits through the ``Transaction``; runs on the source's actor.
  /// - Returns: The new version, as every mutation returns it; the current one when the edits changed
  ///   nothing. Edits that undo each other still make a version, which no batch carries (G4): a
  ///   subscription holds it once it has taken what precedes it (G13).
  /// - Throws: What `body` throws: a ``DataSourceError`` from an edit (every edit throws
  ///   ``DataSourceErrorCode/cancelled`` when the task was cancelled while the transaction waited for its
  ///   turn behind a prepared write), or the body's own error. Either way the source is left exactly as it was (G8), with no version and no batch. Mark
  ///   the closure `throws(Error)` (`Error` is the source's ``Error``) to catch it typed.
  /// - Complexity: O(*k* log *n*) for *k* item edits, to make and to publish (see ``Transaction``), unlike
  ///   `update { }`, which validates and diffs the whole list.
  @inlinable
  @discardableResult
  public func transaction<Failure: Swift.Error>(
    _ body: @Sendable (inout Transaction<Section>) throws(Failure) -> Void
  ) async throws(Failure) -> Version {
    try await transaction { (transaction: inout Transaction<Section>) throws(Failure) in
      try body(&transaction)
      return ()
    }.version
  }

  /// Runs `body`'s edits as one step, like ``transaction(_:)->_``, and returns what `body` returns too.
  ///
  /// ```swift
  /// let (version, moved) = try await source.transaction { transaction in
  ///   return try transaction.moveItem(order, toSection: "done")
  /// }
  /// ```
  ///
  /// A body whose one expression is not `return`ed is taken as returning nothing: the call then returns
  /// the version alone.
  /// - Returns: The new version (the current one when nothing changed) and `body`'s result.
  /// - Throws: What `body` throws; the source is then left exactly as it was (G8).
  /// - Complexity: As ``transaction(_:)->_``.
  @inlinable
  @discardableResult
  public func transaction<Result: Sendable, Failure: Swift.Error>(
    _ body: @Sendable (inout Transaction<Section>) throws(Failure) -> Result
  ) async throws(Failure) -> (version: Version, value: Result) {
    try await inTurn { (refusal: DataSourceErrorCode?) throws(Failure) in
      // A task cancelled while it waited for its turn makes nothing: every edit throws, so the body sees why.
      var transaction = Transaction(store: store, refusal: refusal)
      let result = try body(&transaction)
      return (stamped(finish(transaction)), result)
    }
  }

  // MARK: - Turns

  /// Where a direct write stands once it may run.
  @usableFromInline
  enum DirectTurn: Sendable {
    /// No prepared write held the source: it ran at once, without suspending.
    case free
    /// It waited behind prepared writes (and the writes that came before it) and holds the source until
    /// it releases `ticket`.
    case held(ticket: Int)
    /// Its task was cancelled while it waited: it makes nothing.
    case cancelled

    @inlinable var isCancelled: Bool {
      if case .cancelled = self { return true }
      return false
    }
  }

  /// Runs `body` in a direct write's turn (``takeTurn()``) and passes the source on after it. `refusal`
  /// is ``DataSourceErrorCode/cancelled`` when the task was cancelled while it waited: `body` must then
  /// make nothing.
  @inlinable
  func inTurn<Result, Failure: Swift.Error>(
    _ body: (_ refusal: DataSourceErrorCode?) throws(Failure) -> Result
  ) async throws(Failure) -> Result {
    let turn = await takeTurn()
    defer { endTurn(turn) }
    return try body(turn.isCancelled ? .cancelled : nil)
  }

  /// Runs `body` in a direct write's turn, as the other overload does, or throws
  /// ``DataSourceErrorCode/cancelled`` without running it when the task was cancelled while it waited.
  @inlinable
  func inTurn<Result>(_ body: () throws(Error) -> Result) async throws(Error) -> Result {
    try await inTurn { (refusal: DataSourceErrorCode?) throws(Error) in
      if let refusal { throw Error(code: refusal) }
      return try body()
    }
  }

  /// Waits for a direct write's turn: at once, without suspending, when no prepared write holds the
  /// source; otherwise in arrival order behind the prepared writes that hold it or wait for it, so that
  /// the state a prepared write was made against is the state it is applied to.
  /// - Complexity: O(1), plus the wait.
  @inlinable
  func takeTurn() async -> DirectTurn {
    guard publishing.isReserved else { return .free }
    do { return .held(ticket: try await reserve(from: nil)) } catch { return .cancelled }
  }

  /// Passes the source on to the next writer after a direct write that waited for its turn.
  @inlinable
  func endTurn(_ turn: DirectTurn) {
    if case .held(let ticket) = turn { release(ticket: ticket) }
  }

  /// Makes a new version of the current state and makes sure a batch will be cut for it.
  @inlinable
  @discardableResult
  func commit(refreshing: Set<Item.ID> = []) -> Int {
    let (version, startPublishing) = publishing.committed(refreshing: refreshing)
    if startPublishing { Task.schedulable("publishing") { await self.publish() } }
    return version
  }

  /// Forces a refresh of items whose `==` did not change (Apple's `reconfigureItems` role), in the next
  /// batch. Makes a version even though no value changed.
  /// - Throws: ``DataSourceErrorCode/unknownItemID`` for an id that does not exist.
  @inlinable
  @discardableResult
  public func refreshItems(_ ids: some Sequence<Item.ID> & Sendable) async throws(Error) -> Version {
    stamped(
      try await edit { (transaction: inout Transaction<Section>) throws(Error) in
        try transaction.refreshItems(ids)
      })
  }

  // MARK: - Publishing

  /// Cuts and publishes batches until every mutation is diffed. The diff runs off this actor, so
  /// writers keep going meanwhile; what they write joins the next batch.
  @inlinable
  func publish() async {
    while publishing.continuePublishing() {
      // Writers waiting for the actor go first and join this cut, turn after turn while they keep
      // coming, up to the coalescing delay: a batch freezes the tree, so the edits after it copy the
      // paths they touch, and fewer, fuller batches copy fewer paths and wake subscribers less often.
      var window = CoalescingWindow(version: publishing.version, now: clock(), maximumDelay: coalescingDelay)
      repeat { await Task.yield() } while !window.shouldCut(afterTurnAt: publishing.version, now: clock())
      let cut = publishing.cut(currentSnapshot(), log: store.takeLog())
      let (changeset, edits, prepared) = await diff(cut)
      let (publication, waiters) = publishing.diffed(cut, isEmpty: changeset.isEmpty)
      switch publication {
      case .publish(let from, let to):
        let batch = prepared ?? differ.batch(from, to, counter, changeset)
        hub.publish(batch, refreshing: cut.refreshing, edits: edits)
      case .cancelledOut(let to, let since, let touched):
        // A subscriber started from a state these mutations went through and undid: it holds something
        // else, and no batch would tell it (G2). Every subscriber is brought to this version instead;
        // those that hold the offered state compose nothing.
        hub.cancelledOut(to: to, snapshot: cut.to, since: since, touched: touched)
      case .nothing:
        // Mutations that cancel out make no batch (G4); the next starts at the last one's end (G1). Who
        // holds the last one's state holds this version too (G13).
        hub.reachedWithoutBatch(to: cut.toVersion)
      }
      for waiter in waiters { waiter.resume(returning: true) }
    }
  }

  /// The changes of `cut`: when the cut is exactly the prepared write applied last, that write's batch
  /// (`prepared`), published as it is (one diff per write); a new diff otherwise.
  @inlinable
  func diff(_ cut: Publishing.Cut) async -> (
    Changeset<Section>, edits: [BatchEdit<Section>]?, prepared: UpdateBatch<Section>?
  ) {
    let keepingEdits = hub.keepsHistory
    if let prepared = preparedDiff.take(),
      prepared.batch.fromNumber == cut.fromVersion, prepared.batch.toNumber == cut.toVersion,
      prepared.edits != nil || !keepingEdits
    {
      return (prepared.batch.changeset, keepingEdits ? prepared.edits : nil, prepared.batch)
    }
    diffsMade += 1
    let (changeset, edits) = await Self.diff(
      from: cut.from, to: cut.to, touching: cut.touching, refreshing: cut.refreshing, differ: differ,
      keepingEdits: keepingEdits)
    return (changeset, edits, nil)
  }

  /// Diffs the new state on the global concurrent executor (G9): from the log when the sections kept
  /// their shape (`touching` holds every item id edited since `from`), in full otherwise; and, when the
  /// history keeps versions (`keepingEdits`), makes the edits it keeps of the change there too.
  @inlinable
  @concurrent
  static func diff(
    from: Snapshot<Section>, to target: Snapshot<Section>, touching: Set<Item.ID>?, refreshing: Set<Item.ID>,
    differ: Differ<Section>, keepingEdits: Bool
  ) async -> (Changeset<Section>, edits: [BatchEdit<Section>]?) {
    let changeset = differ.changes(from: from, to: target, touched: touching, refreshing: refreshing)
    // What the history keeps of the batch, made here too: off the actor, which writers wait for.
    return (changeset, keepingEdits ? differ.historyEdits(changeset) : nil)
  }
}
