// A data source that follows another one across the wire, checks every batch, and re-serves it locally.

public import SimpleSourceCore
public import Foundation

/// A data source that follows a remote one through ``WireMessage``s from any transport (a WebSocket, a
/// file, a broker), checks every batch against what it holds, and serves the result to its own
/// subscribers and views with the contract G1–G13 of every source of this package.
///
/// ```swift
/// let remote = RemoteDataSource<Section<String, Task>>()
/// while !Task.isCancelled {
///   let socket = try await connect()
///   try await socket.send(WireCoder().encode(await remote.subscribeRequest))
///   do {
///     try await remote.follow(socket.messages)  // returns when the socket closes
///   } catch {
///     // A refused batch or a dropped connection: reconnect, and resume from the version held.
///   }
/// }
/// ```
///
/// What is promised:
/// - **Checked.** A batch whose `from` is not the version held, or that does not apply (a position out
///   of range, another id at a position, an id already held), is refused with a ``WireError``; what the
///   source holds and serves is unchanged. It then ignores batches until the sender answers a new
///   ``subscribeRequest`` with a reset or a resume, so a stream that went wrong is never applied.
/// - **Never a gap, never a duplicate.** ``subscribeRequest`` names the stream and version held; the
///   sender resumes from exactly there or resets (G11). A ``WireMessage/resumed(stream:version:)`` for
///   another stream or version is refused.
/// - **Re-served.** Each applied batch becomes one batch for local subscribers, derived from the ids it
///   changed; a reset becomes one batch diffed from what they held. Local versions follow the remote
///   ones, and stay increasing across a reset to a stream whose versions are lower.
/// - **Writes.** ``edit(_:)`` shows an edit at once and sends it; until the sender answers, every state it
///   sends is shown with the pending edits applied on top (rebase), each step one batch; a refusal rolls
///   the edit back. See <doc:WritingFromAClient>.
public actor RemoteDataSource<Section: SectionType>: DataSourceType
where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
  /// Where the source stands with its sender.
  package typealias Phase = RemotePhase

  // Guard map: the remote state machine (`state`), `pending`, `connection`, the counters, the connection's
  // start and the store's last error are the actor's; every message, edit and disconnect is one step on
  // it. Subscribers live in `broadcaster`, behind its own locks. ``follow(_:sending:)`` starts one task per
  // connection, which only drains that connection's outbox (an `AsyncStream`) into `send` and, when
  // `send` throws, closes the connection on the actor. The store is written on the actor, in order.
  @usableFromInline let broadcaster: Broadcaster<Section>
  /// ``WireBatch/update(from:at:)``, made in the inlinable initialiser so that the client's build
  /// specialises it (see ``Differ``).
  @usableFromInline let apply:
    @Sendable (WireBatch<Section>, Snapshot<Section>, Int) throws(WireError) -> UpdateBatch<Section>
  /// The state held, at ``remoteVersion``.
  @usableFromInline var held: Snapshot<Section>
  /// The stream and version held, whether it follows, and who waits (see ``RemoteStateMachine``).
  @usableFromInline var state: RemoteStateMachine<CheckedContinuation<Bool, Never>>

  /// The stream followed, as the sender names it; `nil` before the first reset.
  public var stream: String? { state.stream }
  /// The sender's version of the state held; `nil` before the first reset.
  public var remoteVersion: Int? { state.remoteVersion }
  /// Where the source stands with its sender.
  package var phase: Phase { state.phase }
  /// The last message refused, if any.
  public var lastError: WireError? { state.lastError }

  /// How a connection to the sender began.
  public enum ConnectionStart: Hashable, Sendable {
    /// The sender resumed from the version the source held: only what changed since followed.
    case resumed(version: Int)
    /// The sender sent its whole state at `version`: the source held nothing, another stream, or a
    /// version the sender no longer retains.
    case reset(version: Int)
  }

  /// How the current connection began: `nil` from ``connect(_:)`` (or ``follow(_:sending:)``) until the
  /// sender answers its subscribe. Await ``reached(remoteVersion:inStream:)`` for the version the
  /// connection should reach, then read it; a connection made with ``WireService/connect(_:scope:)``
  /// awaits it with ``WireConnection/started()``.
  public private(set) var connectionStart: ConnectionStart?
  /// Batches ignored while awaiting a reset or resume (they were in flight when a refusal happened).
  package var ignoredBatches: Int { state.ignoredBatches }

  /// The query it follows (format 2), or `nil` for the whole stream.
  public let query: WireQueryRequest?
  /// The prefix of this source's edit ids, unique per source: the sender tells its edits from other
  /// clients' by it.
  public nonisolated let clientID: String
  /// The edits made and not answered yet, and who waits for their answers.
  @usableFromInline var pending: Pending
  /// The items each pending edit that runs named edits touched, in any state it was shown on (`nil`: it
  /// changed sections): what a rebase may change besides what the edit names.
  var namedTouched: [String: Set<Section.Item.ID>?] = [:]
  /// Where messages to the sender go while a connection is open, and which connection it is.
  var connection: (number: Int, sink: @Sendable (WireMessage<Section>) -> Void)?
  /// The number of the last connection, and of the last edit made.
  var connections = 0
  /// How edits are posted while the source follows by reads with posting (``follow(reading:posting:)``).
  var poster: (@Sendable (Data) async throws -> WireReadAnswer)?
  /// The newest source version a read's answer covered (``WireReadAnswer/Header/sourceVersion``).
  var readCovered = -1
  /// Posts not answered in a row: the next is made again after 50 ms doubled that many times, up to 2 s.
  var postRetries = 0
  @usableFromInline var editsMade: Int
  /// The epoch of its edit ids (``ReplicaState/epoch``): new at each start that may have forgotten edits.
  @usableFromInline let epoch: String?

  /// The number of edits made and not answered yet.
  public var pendingEditCount: Int { pending.entries.count }

  /// Where it keeps what it holds and its pending edits, if anywhere (see <doc:WorkingOffline>).
  @usableFromInline let replicaStore: (any ReplicaStore<Section>)?
  /// The last error of the source's store: met when the source started (it then started from nothing)
  /// or when it journalled a message (it goes on in memory).
  public var storeError: ReplicaStoreError? { keptStoreError }
  @usableFromInline var keptStoreError: ReplicaStoreError?

  /// Creates a source that holds nothing until the sender's first reset, or, with a `store`, what the
  /// store kept: the stream, version and state held and the edits not answered, shown at once.
  ///
  /// With a store, ``subscribeRequest`` resumes from the version kept (the sender resets when it no
  /// longer retains it), every pending edit is sent again with its id at the next connection, and each
  /// message received or made is journalled: a batch costs what it changed (O(*k*)), a reset or a journal
  /// larger than the state compacts it (O(*n*)).
  ///
  /// - Parameters:
  ///   - history: How many versions are retained for its own subscribers that resume.
  ///   - query: The query of the sender to follow, named in every ``subscribeRequest``; `nil` follows
  ///     the whole stream.
  ///   - clientID: The prefix of its edit ids; a new one by default. A store keeps the first one used
  ///     with it, which wins over this one. A start with nothing kept, or from a store that may forget
  ///     appends, also takes a new ``ReplicaState/epoch``, so that a stable id (a device's) never
  ///     names an edit made before with the same number.
  ///   - store: Where to keep the replica. A store that cannot be read (``ReplicaStoreError``), or that
  ///     holds another query, is cleared: the source starts from nothing and ``storeError`` says why.
  ///   - named: The named edits it runs (``NamedEdit``), the same as the server's: what finds the bodies
  ///     of pending edits restored from `store`. An edit made here carries its own body.
  /// - Complexity: O(size of the store) to load it, once.
  @inlinable
  public init(
    history: HistoryLimit = .default, query: WireQueryRequest? = nil, clientID: String = UUID().uuidString,
    store: (any ReplicaStore<Section>)? = nil, named: NamedEdits<Section> = NamedEdits()
  ) {
    let restored = Self.restore(store, query: query, clientID: clientID, named: named)
    self.query = query
    replicaStore = store
    self.clientID = restored.kept.clientID
    keptStoreError = restored.error
    state = restored.state
    pending = restored.pending
    editsMade = restored.kept.editsMade
    epoch = restored.kept.epoch
    broadcaster = Broadcaster(snapshot: restored.shown, version: restored.kept.version ?? 0, history: history)
    held = restored.kept.snapshot
    // The server's batches are numbered by the server; held here under this source's counter.
    let counter = broadcaster.version.counter
    apply = { (batch, held, version) throws(WireError) in
      try batch.update(from: held, at: Version(version, of: counter))
    }
  }

  /// What `store` kept, replayed; a fresh replica (and the store cleared for it) when there is no store,
  /// it is empty, or it cannot be read or holds another query.
  @usableFromInline
  static func restore(
    _ store: (any ReplicaStore<Section>)?, query: WireQueryRequest?, clientID: String,
    named: NamedEdits<Section>
  ) -> Restored {
    var (kept, error) = load(store, query: query, clientID: clientID)
    // Named edits come back from the store by name: their bodies are this build's. One whose name or
    // arguments no longer resolve stays pending without a body, left out of what is shown until answered.
    kept.pendingEdits = kept.pendingEdits.map { (try? $0.resolved(in: named)) ?? $0 }
    var restored = Restored(kept: kept, error: error, shown: rebase(kept.snapshot, kept.pendingEdits))
    (restored.state.stream, restored.state.remoteVersion) = (kept.stream, kept.version)
    for edit in kept.pendingEdits { _ = restored.pending.make(edit.id, edit) }
    // Answers given before a restart are answered again: the store journals them.
    restored.pending.remember(kept.answers.map { ($0.edit, $0.result) })
    return restored
  }

  /// What a source starts from: what its store kept, and its state machines set from it.
  @usableFromInline
  struct Restored {
    @usableFromInline var kept: ReplicaState<Section>
    @usableFromInline var error: ReplicaStoreError?
    @usableFromInline var shown: Snapshot<Section>
    @usableFromInline var state = RemoteStateMachine<CheckedContinuation<Bool, Never>>()
    @usableFromInline var pending = Pending()
  }

  @usableFromInline
  typealias Pending = PendingEdits<
    WireEdit<Section>, Result<Int, WireError>, CheckedContinuation<Result<Int, WireError>, Never>
  >

  private static func load(_ store: (any ReplicaStore<Section>)?, query: WireQueryRequest?, clientID: String)
    -> (ReplicaState<Section>, ReplicaStoreError?)
  {
    // Nothing kept: the numbers count from 0 again, under an epoch of their own (an app-given client id
    // may have made edits with them before, in a store since lost or in memory).
    var fresh = ReplicaState<Section>(clientID: clientID, query: query)
    fresh.epoch = ReplicaState<Section>.newEpoch()
    guard let store else { return (fresh, nil) }
    do throws(ReplicaStoreError) {
      let (base, journal) = try store.load()
      guard var kept = base else {
        // Kept at once, so that the client id (and so its edit ids) survives a restart.
        try store.compact(fresh)
        return (fresh, nil)
      }
      guard kept.query == query else {
        throw ReplicaStoreError(
          .foreign,
          "the store follows \(kept.query.map { "\($0)" } ?? "the whole stream"), not \(query.map { "\($0)" } ?? "the whole stream")"
        )
      }
      for message in journal { try kept.replay(message) }
      // A power loss may have taken edits this replica sent (and the sender made): their numbers come
      // again, so they get a new epoch. Random at every such start, it needs no flush: an epoch the store
      // forgets is replaced by another at the next start, never counted again.
      if store.forgetsAppends { kept.epoch = ReplicaState<Section>.newEpoch() }
      return (kept, nil)
    } catch {
      try? store.compact(fresh)
      return (fresh, error)
    }
  }

  /// What the source keeps in its store: the state held and the edits pending.
  var replicaState: ReplicaState<Section> {
    var kept = ReplicaState<Section>(clientID: clientID, query: query)
    (kept.editsMade, kept.epoch, kept.stream, kept.version) = (editsMade, epoch, stream, remoteVersion)
    (kept.snapshot, kept.pendingEdits) = (held, pending.edits)
    kept.answers = pending.answers.map { answer in
      switch answer.answer {
      case .success(let version): ReplicaAnswer(edit: answer.id, version: version)
      case .failure(let error): ReplicaAnswer(edit: answer.id, error: error)
      }
    }
    return kept
  }

  /// Journals `message` in the store, compacting it when the journal outgrew the state; a failure is
  /// kept in ``storeError`` and the source goes on in memory.
  private func journal(_ message: WireMessage<Section>) {
    guard let store = replicaStore else { return }
    do {
      if try store.append(message) { try store.compact(replicaState) }
    } catch {
      keptStoreError = error
    }
  }

  /// Replaces what the store keeps by the state held and the edits pending.
  private func keepWhole() {
    guard let store = replicaStore else { return }
    do { try store.compact(replicaState) } catch { keptStoreError = error }
  }

  deinit {
    broadcaster.finish()
    for waiter in state.finish() { waiter.resume(returning: false) }
    let gone = WireError(.unanswered, "the remote source went away")
    for waiter in pending.finish() { waiter.resume(returning: .failure(gone)) }
  }

  // MARK: - Following

  /// The message to send the sender to (re)subscribe: the stream and version held, so that it resumes
  /// from exactly there or resets, and the query followed.
  public var subscribeRequest: WireMessage<Section> {
    .subscribe(stream: stream, from: remoteVersion, query: query)
  }

  /// Receives every message of `messages`, in order, until the sequence ends.
  ///
  /// - Throws: the ``WireError`` of the first message refused (see ``receive(_:)``); the sequence's own
  ///   error when it fails. Either way, send ``subscribeRequest`` again to resume.
  public func follow<Messages: AsyncSequence>(_ messages: Messages) async throws
  where Messages.Element == WireMessage<Section> {
    for try await message in messages { try receive(message) }
  }

  /// Receives one message from the sender.
  ///
  /// - A reset replaces the state held; a resume for the stream and version held starts following.
  /// - A batch is checked and applied (``WireBatch/update(from:at:)``), then offered to subscribers.
  /// - Throws: ``WireError``: the batch's or message's problem, or the sender's own refusal (an `error`
  ///   message), or ``WireError/Code-swift.struct/unexpectedMessage`` for a `subscribe`. The state held
  ///   is unchanged, and batches are ignored until a reset or resume.
  /// - Complexity: a batch of *k* changes: O(*k* log *n*) when the sections kept their order, O(*n*)
  ///   otherwise; a reset: O(*n*) to diff it against what subscribers held.
  public func receive(_ message: WireMessage<Section>) throws(WireError) {
    switch message {
    case .subscribe:
      throw state.refused(WireError(.unexpectedMessage, "a subscribe sent to a receiver"))
    case .error(let error):
      throw state.refused(error)
    case .reset(let stream, let version, let snapshot):
      held = snapshot
      let ready = state.reset(stream: stream, version: version)
      // Subscribers first, the store after: a replica never delays what is shown (a crash in between
      // only leaves the store at the version before, from which the source resumes).
      show(rebased(), touching: nil, remote: version)
      keepWhole()
      connectionStart = .reset(version: version)
      for waiter in ready { waiter.resume(returning: true) }
    case .resumed(let stream, let version):
      try state.resumed(stream: stream, version: version)
      connectionStart = .resumed(version: version)
    case .batch(let batch):
      guard case .apply(let version) = state.batch() else { return }
      let update: UpdateBatch<Section>
      do { update = try apply(batch, held, version) } catch { throw state.refused(error) }
      held = update.snapshot
      let ready = state.applied(to: batch.to)
      if pending.isEmpty {
        offer(update.changeset, remote: batch.to)
      } else {
        // Rebased first: what its named edits touch now counts too.
        let shown = rebased()
        let touched = pendingItemIDs.map { Set(update.changeset.itemChanges.ids).union($0) }
        show(shown, touching: touched, refreshing: update.changeset.forcedRefreshes, remote: batch.to)
      }
      journal(message)
      for waiter in ready { waiter.resume(returning: true) }
    case .confirmed(let id, let version):
      // The sender answers after every batch of `version` this client is sent: the version held now is
      // the end of the batch that carried the edit (or a later one), a version to wait on and resume from.
      answer(id, with: .success(max(state.remoteVersion ?? version, version)))
    case .refused(let id, let error):
      answer(id, with: .failure(error))
    case .edit:
      throw state.refused(WireError(.unexpectedMessage, "an edit sent to a receiver"))
    case .subscribeViews, .views, .viewBatches:
      throw state.refused(
        WireError(.unexpectedMessage, "a \(message.typeName) message sent to a source of one stream"))
    }
  }

  // MARK: - Writing

  /// Makes `operations` one edit: shown at once (one batch to local subscribers), sent to the sender, and
  /// shown on top of every state the sender sends until it answers; ``submit(_:)``, then ``answer(to:)``.
  ///
  /// ```swift
  /// let version = try await remote.edit([.move("t3", .before("t1"))])   // shown before it is sent
  /// ```
  ///
  /// - Returns: Once the sender confirmed the edit, the sender's version this source holds then: the end
  ///   of the batch that carried the edit, or a later one (``WireMessage/confirmed(edit:version:)``
  ///   follows the batches of the edit's version), for which ``reached(remoteVersion:inStream:)`` returns
  ///   at once. When the edit changed nothing this source is sent, the edit's own version, which the
  ///   sender reached without a batch for it. Either way the state at it includes the edit, and the sender
  ///   resumes a subscriber from it while its history (``HistoryLimit``) retains it.
  /// - Throws: ``WireError``: ``WireError/Code-swift.struct/invalidEdit`` when the operations do not apply
  ///   to what is shown (nothing is shown or sent); the sender's refusal (the edit is rolled back, one
  ///   batch); ``WireError/Code-swift.struct/unanswered`` when the waiting task is cancelled (the edit
  ///   stays pending and is still sent) or the source goes away.
  /// - Complexity: as ``submit(_:)``, then the wait.
  @discardableResult
  public func edit(_ operations: [WireOperation<Section>]) async throws(WireError) -> Int {
    try await answer(to: try submit(operations))
  }

  /// Makes `operations` one edit, shown at once and sent when a connection is open (else at the next
  /// ``connect(_:)``), without waiting for the answer.
  ///
  /// - Returns: The edit's id, for ``answer(to:)``.
  /// - Throws: ``WireError/Code-swift.struct/invalidEdit`` when the operations do not apply to what is
  ///   shown; nothing is shown or sent.
  /// - Complexity: O((*k* + *p*) log *n*) to show it, for *k* ids it names and *p* ids of other pending
  ///   edits; while edits are pending, each batch from the sender costs that much more to rebase.
  public func submit(_ operations: [WireOperation<Section>]) throws(WireError) -> String {
    let id = ReplicaState<Section>.editID(client: clientID, epoch: epoch, number: editsMade + 1)
    let edit = WireEdit(id: id, operations: operations, base: state.remoteVersion)
    let shown: Snapshot<Section>
    let touched: Set<Section.Item.ID>?
    do {
      (shown, touched) = try broadcaster.snapshot.applyingLogged {
        (transaction) throws(DataSourceError<Section.ID, Section.Item.ID>) in
        try edit.apply(to: &transaction)
      }
    } catch {
      throw WireError(.invalidEdit, "\(error)")
    }
    if edit.runsNamedEdits { namedTouched[edit.id] = touched }
    editsMade += 1
    let sendsNow = pending.make(edit.id, edit)
    // Journalled once pending (a compaction it triggers keeps it) and before it is sent: an edit the
    // sender may have made is never forgotten by a restart.
    journal(.edit(edit))
    if sendsNow { connection?.sink(.edit(edit)) }
    if poster != nil { startPosting() }
    show(shown, touching: touched, remote: nil)
    return edit.id
  }

  /// Returns once the sender answered edit `id` (at once when it did already, among the newest 256,
  /// across restarts when the source has a store: the store journals the answers).
  /// - Returns: The sender's version that holds the edit.
  /// - Throws: the sender's refusal; ``WireError/Code-swift.struct/unanswered`` when the waiting task is
  ///   cancelled or the source goes away; ``WireError/Code-swift.struct/answerForgotten`` for an edit of
  ///   this client answered before its newest 256 answers; ``WireError/Code-swift.struct/unknownEdit`` for
  ///   an id this client never made.
  public func answer(to id: String) async throws(WireError) -> Int {
    let answer = await cancellableWait { (waiter: CheckedContinuation<Result<Int, WireError>, Never>) in
      switch pending.wait(for: id, waiter) {
      case .parked(let parked): return parked
      case .answered(let answer): waiter.resume(returning: answer)
      case .unknown: waiter.resume(returning: .failure(self.unknownAnswer(id)))
      }
      return nil
    } cancel: {
      await self.cancelEditWait($0)
    }
    return try answer.get()
  }

  /// Why no answer to `id` is known: an edit of this replica answered so long ago that its answer was
  /// forgotten, or an id it never made.
  private func unknownAnswer(_ id: String) -> WireError {
    var kept = ReplicaState<Section>(clientID: clientID, query: query)
    (kept.editsMade, kept.epoch) = (editsMade, epoch)
    guard kept.made(id) else {
      return WireError(.unknownEdit, "edit \(id) was never made by this client (\(clientID))")
    }
    return WireError(
      .answerForgotten,
      "edit \(id) was answered, but only the newest \(ReplicaState<Section>.keptAnswers) answers are kept")
  }

  /// Resumes the edit waiter `id` names as unanswered, if it still waits: its task was cancelled.
  private func cancelEditWait(_ id: WaiterID) {
    guard let parked = id.parked, let waiter = pending.cancelWait(parked) else { return }
    waiter.resume(returning: .failure(WireError(.unanswered, "the task waiting for the edit was cancelled")))
  }

  /// The sender answered edit `id`: it leaves the pending edits, and what is shown is the state held with
  /// the others on top (a refusal rolls it back; a confirmation usually changes nothing shown).
  func answer(_ id: String, with result: Result<Int, WireError>) {
    let (edit, waiters) = pending.answer(id, result)
    guard let edit else { return }
    switch result {
    case .success(let version): journal(.confirmed(edit: id, version: version))
    case .failure(let error): journal(.refused(edit: id, error: error))
    }
    let answered = touchedIDs(of: edit)
    namedTouched[id] = nil
    let shown = rebased()
    show(shown, touching: answered.flatMap { ids in pendingItemIDs.map { ids.union($0) } }, remote: nil)
    for waiter in waiters { waiter.resume(returning: result) }
  }

  /// The ids the pending edits name or touched: what a rebase may move or change besides the sender's
  /// batch; `nil` when a named edit among them changed sections (a full diff).
  private var pendingItemIDs: Set<Section.Item.ID>? {
    var ids = Set<Section.Item.ID>()
    for edit in pending.edits {
      guard let touched = touchedIDs(of: edit) else { return nil }
      ids.formUnion(touched)
    }
    return ids
  }

  /// The ids `edit` names, and those its named edits touched on any state it was shown on; `nil` when
  /// they changed sections.
  private func touchedIDs(of edit: WireEdit<Section>) -> Set<Section.Item.ID>? {
    guard edit.runsNamedEdits else { return edit.itemIDs }
    guard case .some(.some(let touched)) = namedTouched[edit.id] else { return nil }
    return touched.union(edit.itemIDs)
  }

  /// The state held with every pending edit applied on top, in order; an edit that no longer applies (the
  /// sender's state deleted its anchor) is left out until the sender answers it. What the named edits
  /// among them touch is added to ``namedTouched``.
  /// - Complexity: O(*p* log *n*) for *p* ids the pending edits name or touch.
  private func rebased() -> Snapshot<Section> {
    var shown = held
    for edit in pending.edits {
      guard edit.runsNamedEdits else {
        if let next = try? shown.applying({
          (transaction) throws(DataSourceError<Section.ID, Section.Item.ID>) in
          try edit.apply(to: &transaction)
        }) {
          shown = next
        }
        continue
      }
      guard
        let (next, touched) = try? shown.applyingLogged({
          (transaction) throws(DataSourceError<Section.ID, Section.Item.ID>) in
          try edit.apply(to: &transaction)
        })
      else { continue }
      shown = next
      if case .some(.some(let before)) = namedTouched[edit.id], let touched {
        namedTouched[edit.id] = before.union(touched)
      } else if namedTouched[edit.id] == nil, let touched {
        namedTouched[edit.id] = touched
      } else {
        namedTouched[edit.id] = .some(nil)
      }
    }
    return shown
  }

  /// `held` with every edit of `edits` that applies made on top, in order.
  @usableFromInline
  static func rebase(_ held: Snapshot<Section>, _ edits: [WireEdit<Section>]) -> Snapshot<Section> {
    var shown = held
    for edit in edits {
      if let next = try? shown.applying({
        (transaction) throws(DataSourceError<Section.ID, Section.Item.ID>) in
        try edit.apply(to: &transaction)
      }) {
        shown = next
      }
    }
    return shown
  }

  /// Offers the change from what subscribers hold to `shown`: derived from the ids in `touched` when the
  /// sections kept their ids and order, a full diff otherwise (or when `touched` is `nil`).
  private func show(
    _ shown: Snapshot<Section>, touching touched: Set<Section.Item.ID>?,
    refreshing: Set<Section.Item.ID> = [],
    remote version: Int?
  ) {
    let current = broadcaster.snapshot
    let differ = broadcaster.differ
    let changeset = differ.changes(from: current, to: shown, touched: touched, refreshing: refreshing)
    offer(changeset, remote: version ?? 0)
  }

  // MARK: - Connecting

  /// A connection to the sender opened: `sink` receives, in order, the ``subscribeRequest``, every
  /// pending edit again (the sender answers an edit id once, so one that arrived before is not made
  /// twice), then each edit made while it stays open. It must not block: hand the message to the
  /// transport's queue.
  public func connect(_ sink: @escaping @Sendable (WireMessage<Section>) -> Void) {
    _ = open(sink)
  }

  /// The connection closed: edits made from now on are shown and wait for the next ``connect(_:)``.
  public func disconnect() {
    connection = nil
    pending.disconnect()
  }

  private func open(_ sink: @escaping @Sendable (WireMessage<Section>) -> Void) -> Int {
    connectionStart = nil
    connections += 1
    connection = (connections, sink)
    sink(subscribeRequest)
    for edit in pending.connect() { sink(.edit(edit)) }
    return connections
  }

  private func close(_ number: Int) {
    if connection?.number == number { disconnect() }
  }

  /// Runs one connection: sends the ``subscribeRequest`` and every pending edit through `send`, then each
  /// edit made meanwhile, while it receives every message of `messages` (``receive(_:)``) until the
  /// sequence ends. Call it again on a new connection to resume.
  ///
  /// - Throws: the ``WireError`` of the first message refused, or the sequence's error. A `send` that
  ///   throws stops sending; the edits stay pending for the next connection.
  public func follow<Messages: AsyncSequence>(
    _ messages: Messages, sending send: @escaping @Sendable (WireMessage<Section>) async throws -> Void
  ) async throws where Messages.Element == WireMessage<Section> {
    let (outbox, continuation) = AsyncStream.makeStream(of: WireMessage<Section>.self)
    let number = open { continuation.yield($0) }
    let sending = Task.schedulable("sending edits") {
      do {
        for await message in outbox { try await send(message) }
      } catch {
        self.close(number)
      }
    }
    defer {
      continuation.finish()
      sending.cancel()
      close(number)
    }
    try await follow(messages)
  }

  /// Decodes `data` with `coder` and receives the message; see ``receive(_:)``.
  public func receive(_ data: Data, coder: WireCoder = WireCoder()) throws(WireError) {
    let message: WireMessage<Section>
    do { message = try coder.decode(data) } catch { throw state.refused(error) }
    try receive(message)
  }

  /// Offers a change to local subscribers as the next local version (the remote one when it is after).
  private func offer(_ changeset: Changeset<Section>, remote version: Int) {
    guard !changeset.isEmpty else { return }
    let from = broadcaster.version.number
    let batch = UpdateBatch(
      from: from, to: max(from + 1, version), of: broadcaster.version.counter, changeset: changeset)
    do { try broadcaster.publish(batch, refreshing: changeset.forcedRefreshes) } catch {
      preconditionFailure("SimpleSource: the remote source is the broadcaster's only publisher: \(error)")
    }
  }

  // MARK: - Waiting

  /// Returns once the state held is at the sender's version `version` or later, of `stream` when one is
  /// named. Tests and clients await this instead of sleeping.
  ///
  /// - Returns: `true` then; `false` when the waiting task was cancelled first, or the source went away.
  @discardableResult
  public func reached(remoteVersion version: Int, inStream stream: String? = nil) async -> Bool {
    await cancellableWait {
      state.wait(until: version, inStream: stream, $0)
    } cancel: {
      await self.cancelWait($0)
    }
  }

  /// Resumes the waiter `id` names with `false`, if it still waits: its task was cancelled.
  private func cancelWait(_ id: WaiterID) {
    if let parked = id.parked { state.cancelWait(parked)?.resume(returning: false) }
  }

  // MARK: - DataSourceType

  /// The state held.
  public var snapshot: Snapshot<Section> { broadcaster.snapshot }
  /// The local version of the state held: the newest offered to subscribers.
  public var version: Version { broadcaster.version }
  /// The number of live local subscriptions.
  public nonisolated var subscriberCount: Int { broadcaster.subscriberCount }

  /// Returns the state held and the batches after it (G5).
  public func subscribe(pacing: Pacing) -> Subscription<Section> { broadcaster.subscribe(pacing: pacing) }

  /// Resumes a local subscriber from a local version it holds (G11).
  public func subscribe(from version: Int, pacing: Pacing) -> Resumption<Section> {
    broadcaster.subscribe(from: version, pacing: pacing)
  }

  /// Returns at once: every message received has been offered before ``receive(_:)`` returned.
  public func settled() async {}
}

extension RemoteDataSource.ConnectionStart: CustomStringConvertible {
  /// `resumed from version 153`, `reset at version 12`: what a log line should say.
  public var description: String {
    switch self {
    case .resumed(let version): "resumed from version \(version)"
    case .reset(let version): "reset at version \(version)"
    }
  }
}
