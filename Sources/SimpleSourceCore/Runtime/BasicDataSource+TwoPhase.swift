// Two-phase writes: prepare a transaction and its batch, let the caller commit its storage, then apply.

extension BasicDataSource {
  /// Validates a transaction and derives its batch without making it: the source is reserved for the
  /// returned ``PreparedWrite`` until you apply or abandon it.
  ///
  /// This is what a service needs to keep a database and the source in step: write the batch with the
  /// rows in one database transaction, then ``PreparedWrite/apply()`` (which cannot fail), or
  /// ``PreparedWrite/abandon()`` when the database refused. No window exists where one has a write the
  /// other has not published, and none where another write comes between.
  ///
  /// ```swift
  /// let write = try await source.prepare { transaction in
  ///   try transaction.moveItem(card.id, toSection: "done")
  /// }
  /// try await database.commit(write.batch)  // then
  /// await write.apply()
  /// ```
  ///
  /// **Concurrent prepares are serialized**, first come first served: a call made while another
  /// prepared write holds the source waits until that one is applied or abandoned, then prepares against
  /// the state it left. They are not refused, because the caller's storage commit sits between the two
  /// phases: a service's writers already queue for their database, and a refusal would only make each of
  /// them retry in a loop. **Direct mutations wait their turn** in the same queue, in arrival order, so
  /// that the state the write was prepared against is the state it is applied to; none is refused. Take
  /// this and your storage's lock in one order in every writer (see <doc:WritingThroughADatabase>): a writer holding one while it waits for
  /// the other must never meet a writer holding the other.
  ///
  /// - Parameters:
  ///   - version: The version the write must start from, if it must (a writer that read the state at that
  ///     version, or a follower of a log whose next entry starts there); `nil` prepares against whatever
  ///     the source holds when the write's turn comes.
  ///   - body: Makes the edits, as in ``transaction(_:)->_``; runs on the source's actor.
  /// - Returns: The prepared write: its batch (`nil` when the edits change nothing) and what `body`
  ///   returned.
  /// - Throws: A ``DataSourceError`` from an edit, the source left exactly as it was and free for the
  ///   next write (G8); ``DataSourceErrorCode/cancelled`` when the task was cancelled while it waited;
  ///   ``DataSourceErrorCode/unexpectedVersion`` when the source is not at `version` once it is the
  ///   write's turn (`body` does not run).
  /// - Complexity: O(*k* log *n*) for *k* item edits (the batch is derived from what they touched, off the
  ///   actor, as a published one is), plus the wait for the writes before it.
  @inlinable
  public func prepare<Result: Sendable>(
    from version: Int? = nil, _ body: @Sendable (inout Transaction<Section>) throws(Error) -> Result
  ) async throws(Error) -> PreparedWrite<Section, Result> {
    let ticket = try await reserve(from: version)
    let (transaction, result) = try run(body, holding: ticket)
    return await prepared(transaction, result: result, ticket: ticket)
  }

  /// Prepares a transaction whose body may throw its own errors; otherwise as the overload whose body
  /// throws only ``DataSourceError``.
  ///
  /// - Throws: What `body` throws, or ``DataSourceErrorCode/cancelled`` or
  ///   ``DataSourceErrorCode/unexpectedVersion`` as a ``DataSourceError``; either way the source is left
  ///   exactly as it was and free for the next write (G8).
  /// - Complexity: as the other overload.
  @inlinable
  public func prepare<Result: Sendable>(
    from version: Int? = nil, _ body: @Sendable (inout Transaction<Section>) throws -> Result
  ) async throws -> PreparedWrite<Section, Result> {
    let ticket = try await reserve(from: version)
    let (transaction, result) = try run(body, holding: ticket)
    return await prepared(transaction, result: result, ticket: ticket)
  }

  /// Runs a prepared write's body against the reserved state; releases the reservation when it throws.
  @inlinable
  func run<Result, Failure: Swift.Error>(
    _ body: (inout Transaction<Section>) throws(Failure) -> Result, holding ticket: Int
  ) throws(Failure) -> (Transaction<Section>, Result) {
    var transaction = Transaction(store: store.withEmptyLog())
    do {
      let result = try body(&transaction)
      return (transaction, result)
    } catch {
      release(ticket: ticket)
      throw error
    }
  }

  /// Waits until no prepared write holds the source, then holds it, if it is at `version` (when one is given).
  /// - Returns: The reservation's ticket.
  /// - Throws: ``DataSourceErrorCode/cancelled`` when the task was cancelled while it waited;
  ///   ``DataSourceErrorCode/unexpectedVersion`` when the source is not at `version` (it is released).
  @usableFromInline
  func reserve(from version: Int?) async throws(Error) -> Int {
    let ticket: Int? = await cancellableWait { (preparer: CheckedContinuation<Int?, Never>) in
      switch publishing.reserve(preparer) {
      case .granted(let ticket):
        preparer.resume(returning: ticket)
        return nil
      case .ended:
        preparer.resume(returning: nil)
        return nil
      case .wait(let id):
        writerQueued?()
        return id
      }
    } cancel: {
      await self.cancelReserve($0)
    }
    guard let ticket else { throw Error(code: .cancelled) }
    if let version, version != publishing.version {
      release(ticket: ticket)
      throw Error(code: .unexpectedVersion)
    }
    return ticket
  }

  /// Installs `observer`, called each time a writer (prepared or direct) queues behind the writer that
  /// holds the source; tests await it instead of sleeping.
  package func onWriterQueued(_ observer: @escaping @Sendable () -> Void) { writerQueued = observer }

  /// Resumes the preparer `id` names with nothing, if it still waits: its task was cancelled.
  func cancelReserve(_ id: WaiterID) {
    if let parked = id.parked { publishing.cancelReserve(parked)?.resume(returning: nil) }
  }

  /// Derives the batch of a transaction run against the reserved state, off the actor.
  @inlinable
  func prepared<Result: Sendable>(_ transaction: Transaction<Section>, result: Result, ticket: Int) async
    -> PreparedWrite<Section, Result>
  {
    let base = publishing.version
    guard transaction.changed else {
      let claim = PreparedWriteClaim(source: self, ticket: ticket, store: nil, refreshing: [])
      return PreparedWrite(result: result, base: base, batch: nil, claim: claim)
    }
    // The transaction's store started with an empty log: it logs exactly what the write touched, and
    // keeps it until the write is applied.
    var after = transaction.store
    let target = after.settledSnapshot()
    diffsMade += 1
    let (changeset, edits) = await Self.diff(
      from: currentSnapshot(), to: target, touching: after.log.touching,
      refreshing: transaction.refreshing, differ: differ, keepingEdits: hub.keepsHistory)
    guard !changeset.isEmpty else {
      // Edits that cancel out: nothing to make (G4).
      let claim = PreparedWriteClaim(source: self, ticket: ticket, store: nil, refreshing: [])
      return PreparedWrite(result: result, base: base, batch: nil, claim: claim)
    }
    let batch = differ.batch(base, base + 1, counter, changeset)
    let claim = PreparedWriteClaim(
      source: self, ticket: ticket, store: after, refreshing: transaction.refreshing,
      diff: PreparedDiff(batch: batch, edits: edits))
    return PreparedWrite(result: result, base: base, batch: batch, claim: claim)
  }

  /// Makes a prepared write's state the next version, and passes the source to the next preparer.
  func applyPrepared(_ claim: PreparedWriteClaim<Section>) -> Int {
    if let after = claim.store {
      // What the publish loop has not cut yet stays in the log, with what the write touched.
      store.take(after)
      // The publish loop's cut of exactly this write publishes this diff rather than making it again.
      preparedDiff = claim.diff
    }
    return release(ticket: claim.ticket, committing: claim.store != nil, refreshing: claim.refreshing)
  }

  /// Releases reservation `ticket` (abandoned, unless `committing`); a ticket released already is ignored.
  @usableFromInline
  @discardableResult
  func release(ticket: Int, committing: Bool = false, refreshing: Set<Item.ID> = []) -> Int {
    let release = publishing.released(ticket, committing: committing, refreshing: refreshing)
    if release.startPublishing { Task.schedulable("publishing") { await self.publish() } }
    if let next = release.next { next.preparer.resume(returning: next.ticket) }
    return release.version
  }
}

/// The batch a prepared write was made with, from its base to the version after it, which the publish loop
/// publishes as it is.
@usableFromInline
struct PreparedDiff<Section: SectionType>: Sendable {
  @usableFromInline let batch: UpdateBatch<Section>
  /// What the history keeps of it, when the history kept versions as the write was prepared.
  @usableFromInline let edits: [BatchEdit<Section>]?

  @inlinable
  init(batch: UpdateBatch<Section>, edits: [BatchEdit<Section>]?) {
    self.batch = batch
    self.edits = edits
  }
}
