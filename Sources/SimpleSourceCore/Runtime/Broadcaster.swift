// The fan-out behind every data source of this package, public so that users' own sources share it.

/// Fans one sequence of versions out to any number of subscribers, with the contract of
/// ``BasicDataSource``: atomic start (G5), batches in order (G1), never an empty one (G4), a bounded
/// backlog composed on demand off the caller's actor (G6, G9), pacing, and release on every way a
/// subscription ends (G7).
///
/// Build your own ``DataSourceType`` on it (a database feed, a server's mirror): keep the state where you
/// like, and publish each new version, either as a snapshot to diff or as a batch you computed:
///
/// ```swift
/// struct Quote: Identifiable, Equatable, Sendable {
///   var id: String
///   var price: Double
/// }
///
/// final class Prices: DataSourceType {
///   let broadcaster = Broadcaster(snapshot: Snapshot<Section<String, Quote>>())
///
///   var snapshot: Snapshot<Section<String, Quote>> { get async { broadcaster.snapshot } }
///   var version: Int { get async { broadcaster.version } }
///   func subscribe(pacing: Pacing) async -> Subscription<Section<String, Quote>> {
///     broadcaster.subscribe(pacing: pacing)
///   }
///   // `received` is awaited by whoever calls it, and returns once its batch is offered: nothing is in
///   // flight after it. A source fed by its own task waits for that task (<doc:BringingYourOwnSource>).
///   func settled() async {}
///
///   /// Called by the feed, one value at a time.
///   func received(_ quotes: [Quote]) async throws {
///     let next = try Snapshot([Section(id: "all", items: quotes)])
///     try await broadcaster.publish(next, as: broadcaster.version.number + 1)
///   }
/// }
/// ```
///
/// What is promised:
/// - **Order.** Batches reach every subscriber in the order they were accepted; a batch whose `from` is
///   not the newest accepted version is refused with ``BroadcastError/Code-swift.enum/staleBatch``, so
///   concurrent publishers cannot interleave wrongly.
/// - **Off the caller's actor.** Diffs run on the global concurrent executor (G9).
/// - **Offered on return.** When `publish` returns, the batch has been offered to every subscriber,
///   unless another task is publishing at the same moment; then that task offers it, in order, before
///   its own `publish` returns.
/// - **Nothing empty.** A snapshot equal to the newest one publishes nothing and makes no version.
/// - **Ending.** ``finish()`` ends every subscription; later subscriptions end at once.
public final class Broadcaster<Section: SectionType>: Sendable {
  /// The item type.
  public typealias Item = Section.Item

  // Guard map: `state` (the sequencer's queue and version, the newest accepted snapshot) is read and
  // written only under its lock. No task of its own: the publisher whose batch finds the queue idle drains
  // it (the sequencer elects one drainer), offering each batch through `hub` after releasing the lock, and
  // `publish(_:as:)` diffs in the caller's task, outside every lock, off the caller's actor.
  @usableFromInline let hub: SubscriptionHub<Section>
  @usableFromInline package let differ: Differ<Section>
  @usableFromInline let state: Locked<PublishState>

  /// The sequencer, and the newest accepted snapshot (which the drainer may not have offered yet).
  @usableFromInline
  struct PublishState: Sendable {
    @usableFromInline var sequencer: PublishSequencer<Published>
    @usableFromInline var accepted: Snapshot<Section>

    @inlinable
    init(version: Int, snapshot: Snapshot<Section>) {
      sequencer = PublishSequencer(version: version)
      accepted = snapshot
    }
  }

  /// One accepted batch with its forced refreshes.
  @usableFromInline
  struct Published: Sendable {
    @usableFromInline let batch: UpdateBatch<Section>
    @usableFromInline let refreshing: Set<Item.ID>

    @inlinable
    init(batch: UpdateBatch<Section>, refreshing: Set<Item.ID>) {
      self.batch = batch
      self.refreshing = refreshing
    }
  }

  /// Creates a broadcaster whose newest state is `snapshot` at `version`.
  ///
  /// Inlinable so that the catch-up diffs of subscribers that fall behind run specialised for your types.
  /// - Parameters:
  ///   - snapshot: The newest state.
  ///   - version: Its version.
  ///   - history: How many offered versions are retained for subscribers that resume (G11).
  ///   - counter: The counter its versions belong to: a new one unless given. Give the parent's
  ///     (`parentVersion.counter`) when the broadcaster numbers its versions with its parent's, so that
  ///     waits for the parent's versions are answered (see ``Version``).
  @inlinable
  public convenience init(
    snapshot: Snapshot<Section>, version: Int = 0, history: HistoryLimit = .default,
    counter: VersionCounter? = nil
  ) {
    self.init(snapshot: snapshot, version: version, history: history, counter: counter, loops: HubLoops())
  }

  /// A broadcaster whose loops over its subscribers are `loops`, made where its section type was named
  /// (see ``HubLoops``).
  @inlinable
  package init(
    snapshot: Snapshot<Section>, version: Int = 0, history: HistoryLimit = .default,
    counter: VersionCounter? = nil, loops: HubLoops<Section>
  ) {
    let differ = Differ<Section>()
    self.differ = differ
    hub = SubscriptionHub(
      version: version, snapshot: snapshot, differ: differ, history: history,
      counter: counter ?? VersionCounter(), loops: loops)
    state = Locked(PublishState(version: version, snapshot: snapshot))
  }

  /// The newest version offered to subscribers; its ``Version/number`` is what
  /// ``publish(_:as:refreshing:)`` counts from.
  /// - Complexity: O(1).
  public var version: Version { Version(hub.newest.version, of: hub.counter) }

  /// The newest snapshot offered to subscribers.
  public var snapshot: Snapshot<Section> { hub.newest.snapshot }

  /// The number of live subscriptions.
  public var subscriberCount: Int { hub.count }

  /// Returns the newest offered snapshot and the batches after it (G5): no gap and no overlap, whatever
  /// publishers do meanwhile.
  ///
  /// - Complexity: O(1) amortized, whatever the number of subscribers; ``Subscription/cancel()`` O(1)
  ///   expected.
  @inlinable
  public func subscribe(pacing: Pacing = .immediate) -> Subscription<Section> {
    hub.subscribe(at: nil, pacing: pacing)
  }

  /// Resumes a subscriber that holds the state at `version` (G11).
  ///
  /// When the history retains `version`, the subscription starts there: its snapshot is the one the
  /// subscriber holds, and its first batch, if any, is one batch from exactly that version to the newest,
  /// derived from the ids changed since when every batch since could say which. Otherwise (a version no
  /// longer retained, never offered, or not yet made) it is a reset at the newest offered state.
  ///
  /// - Complexity: O(log *v*) for *v* retained versions; O(*e* log *n*) to rebuild the version's state
  ///   from the *e* changes since the nearest snapshot the history keeps (at most about *n*; none for the
  ///   current version); O(*k*) for the *k* ids changed since.
  @inlinable
  public func subscribe(from version: Int, pacing: Pacing = .immediate) -> Resumption<Section> {
    hub.resume(from: version, pacing: pacing)
  }

  /// Resumes a subscriber that holds `version`, which the history no longer (or never) retained, from
  /// `snapshot`, the state at `version` derived again by the caller; its first batch is a full diff.
  @inlinable
  func subscribe(from version: Int, derived snapshot: Snapshot<Section>, pacing: Pacing) -> Resumption<
    Section
  > {
    hub.resume(from: version, derived: snapshot, pacing: pacing)
  }

  /// The versions retained for subscribers that resume, oldest first; the newest offered is the last.
  package var retainedVersions: [Int] { hub.retainedVersions }

  /// Publishes a batch computed elsewhere (from a mutation log, or decoded from a server).
  ///
  /// - Parameters:
  ///   - batch: The change from the newest accepted version; its `snapshot` is the new state.
  ///   - refreshing: Items refreshed although their `==` did not change (``Changeset/forcedRefreshes``).
  /// - Throws: ``BroadcastError`` when `batch.from` is not the newest accepted version, `batch.to` is
  ///   not after it, the batch is empty, or the broadcaster has finished; nothing is published then.
  /// - Complexity: O(*s*) in the number of subscribers; no diff.
  public func publish(_ batch: UpdateBatch<Section>, refreshing: Set<Item.ID> = []) throws(BroadcastError) {
    guard !batch.changeset.isEmpty else { throw BroadcastError(.emptyBatch, version: batch.toNumber) }
    let acceptance = state.withLock { state in
      let acceptance = state.sequencer.accept(
        Published(batch: batch, refreshing: refreshing), from: batch.fromNumber, to: batch.toNumber)
      if acceptance == .drain || acceptance == .queued { state.accepted = batch.snapshot }
      return acceptance
    }
    switch acceptance {
    case .drain: drain()
    case .queued: return
    case .stale(let expected):
      throw BroadcastError(.staleBatch, version: batch.fromNumber, expected: expected)
    case .notAfter:
      throw BroadcastError(.versionNotAfter, version: batch.toNumber, expected: batch.fromNumber + 1)
    case .finished: throw BroadcastError(.finished, version: batch.toNumber)
    }
  }

  /// Publishes `snapshot` as `version`: diffs it against the newest accepted state and publishes the
  /// change. A snapshot with no change publishes nothing. The diff runs on the global concurrent
  /// executor, never on the caller's actor (G9), so a main-actor caller does not diff on the main actor.
  ///
  /// - Returns: Whether a batch was published.
  /// - Throws: ``BroadcastError`` when `version` is not after the newest accepted one, another task
  ///   published meanwhile (``BroadcastError/Code-swift.enum/staleBatch``), or the broadcaster has
  ///   finished.
  /// - Complexity: O(*n*) for the diff, off the caller's actor; then O(*s*).
  @inlinable
  @discardableResult
  public func publish(_ snapshot: Snapshot<Section>, as version: Int, refreshing: Set<Item.ID> = [])
    async throws(BroadcastError) -> Bool
  {
    let (fromVersion, fromSnapshot) = state.withLock { ($0.sequencer.version, $0.accepted) }
    guard version > fromVersion else {
      throw BroadcastError(.versionNotAfter, version: version, expected: fromVersion + 1)
    }
    // The same off-actor diff a subscriber's catch-up uses.
    let changeset = await SubscriberMailbox<Section>.compose(
      from: fromSnapshot, to: snapshot, refreshing: refreshing, touched: nil, differ: differ)
    if changeset.isEmpty { return false }
    try publish(
      UpdateBatch(from: fromVersion, to: version, of: hub.counter, changeset: changeset),
      refreshing: refreshing)
    return true
  }

  /// Says that the newest offered state is also the state at `version`, a version after it that made no
  /// batch here (a derived source numbered by its parent, whose batch changed nothing it shows): who holds
  /// the newest state holds `version` too (G13). Ignored while batches are being offered (only a sole
  /// publisher, between its publishes, can vouch for it).
  /// - Complexity: O(*s*) for *s* subscribers.
  @usableFromInline package func reachedWithoutBatch(to version: Int) {
    let isIdle = state.withLock { state in
      !state.sequencer.isDraining && state.sequencer.queue.isEmpty && version > state.sequencer.version
    }
    if isIdle { hub.reachedWithoutBatch(to: version) }
  }

  /// Ends every subscription; publishing then throws ``BroadcastError/Code-swift.enum/finished``.
  public func finish() {
    if state.withLock({ $0.sequencer.finish() }) { hub.finish() }
  }

  /// Offers queued batches in order until the queue is empty.
  @usableFromInline
  func drain() {
    while let next = state.withLock({ $0.sequencer.next() }) {
      hub.publish(next.batch, refreshing: next.refreshing)
    }
  }
}
