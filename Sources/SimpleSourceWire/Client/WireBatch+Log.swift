// A batch read from a shared log, made in a source as its next version: how instances follow one log.

public import SimpleSourceCore

extension Transaction {
  /// Makes the changes of `batch`, a batch made from this transaction's state by another writer (read
  /// from a log they share), checked as ``RemoteDataSource`` checks one: every position, id and stage
  /// against what ``snapshot`` holds, before anything is made.
  ///
  /// Only the changes are checked here; the versions are the caller's (see
  /// ``BasicDataSource/apply(logged:)``, which checks both).
  /// - Throws: ``WireError`` naming the stage, the change and the position; the transaction is left as
  ///   it was.
  /// - Complexity: O(*k* log *n*) for *k* changes, plus the size of sections inserted or moved.
  @inlinable
  public mutating func apply(_ batch: WireBatch<Section>) throws(WireError) {
    let (target, touched, reshaped) = try batch.applied(to: snapshot)
    let refreshing = Set(batch.stages.lazy.flatMap { $0.items.updates.lazy.map(\.value.id) })
    do {
      try adopt(target, touched: reshaped ? nil : touched, refreshing: refreshing)
    } catch {
      throw WireError(.unexpectedMessage, "the source refused the batch: \(error)")
    }
  }
}

extension BasicDataSource {
  /// Makes `batch`, the next entry of a log that several writers share, this source's next version:
  /// what each instance of a service does with the entries other instances wrote.
  ///
  /// ```swift
  /// for entry in try await log.entries(after: await board.version) {
  ///   guard case .batch(let batch) = try WireCoder().decode(entry, as: Column.self) else { continue }
  ///   try await board.apply(logged: batch)
  /// }
  /// ```
  ///
  /// The batch is made as a two-phase write (``prepare(from:_:)-(_,(Transaction<Section>)->Result)``), so it
  /// waits its turn behind the writes prepared before it, and is checked against the state it starts from:
  /// its `from` must be this source's version and every change must apply. An entry read twice (by a
  /// follower and by a writer catching up) is skipped.
  ///
  /// Each entry is offered as a version of its own, never coalesced with the one before it (as every
  /// prepared write is, ``PreparedWrite/apply()``), so this source retains every version of the log
  /// (within its ``HistoryLimit``), and a client holding any of them, from whichever follower, resumes here.
  ///
  /// - Returns: `true` when the batch was made; `false` when the source is at `batch.to` or later already.
  /// - Throws: ``WireError``: ``WireError/Code-swift.struct/versionMismatch`` when the source holds an
  ///   earlier version than `batch.from` (a gap: read the entries before it first) or the batch spans
  ///   more than one version; the problem of a change that does not apply. The source is left as it was.
  /// - Complexity: O(*k* log *n*) for *k* changes, as any prepared write.
  @discardableResult
  public func apply(logged batch: WireBatch<Section>) async throws(WireError) -> Bool {
    guard batch.to == batch.from + 1 else {
      throw WireError(
        .versionMismatch, "a logged batch spans one version; this one \(batch.from)→\(batch.to)")
    }
    let write: PreparedWrite<Section, Void>
    do {
      write = try await prepare(from: batch.from) { (transaction: inout Transaction<Section>) throws in
        try transaction.apply(batch)
      }
    } catch let error as WireError {
      throw error
    } catch let error as Error where error.code == .unexpectedVersion {
      if version.number >= batch.to { return false }
      throw WireError(.versionMismatch, "batch from \(batch.from), the source holds \(version.number)")
    } catch {
      throw WireError(.unexpectedMessage, "the source refused the batch: \(error)")
    }
    await write.apply()
    return true
  }
}
