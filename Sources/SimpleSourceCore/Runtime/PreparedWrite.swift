// A write a source has validated and derived its batch for, held until its caller applies or abandons it.

/// A transaction that a ``BasicDataSource`` has validated and derived its batch for, but not made: the
/// source is reserved for it until you ``apply()`` or ``abandon()`` it.
///
/// Between the two, commit the batch to your own storage (a database transaction holding the rows and
/// the batch). Applying cannot fail, so once your storage has the write the source has it too, with
/// the version ``version`` names; abandoning leaves the source exactly as it was.
///
/// ```swift
/// let write = try await source.prepare { try $0.appendItems([card], toSection: "todo") }
/// do {
///   try await database.commit(card, batch: write.batch)  // your storage, in one transaction
///   await write.apply()
/// } catch {
///   await write.abandon()
/// }
/// ```
///
/// A prepared write is not copyable: it is applied or abandoned once, and the compiler says so. One that
/// is dropped without either is abandoned (on a task of its own, so the source is free again shortly
/// after, not at once): a caller that forgets does not hold the source forever.
public struct PreparedWrite<Section: SectionType, Result: Sendable>: ~Copyable, Sendable {
  /// What the transaction's body returned.
  public let result: Result
  /// The version the source held when the write was prepared: it holds it until the write is released.
  public let base: Version
  /// The batch from ``base`` to ``version``, as subscribers would receive it alone; `nil` when the write
  /// changes nothing (applying it then makes no version, G4). Encode it for your storage (the wire
  /// format's `WireCoder.encode(_:)` takes it).
  public let batch: UpdateBatch<Section>?
  /// The source's side: which reservation this is, the new state, and the abandoning of a dropped write.
  @usableFromInline let claim: PreparedWriteClaim<Section>

  @inlinable
  init(result: Result, base: Int, batch: UpdateBatch<Section>?, claim: PreparedWriteClaim<Section>) {
    self.result = result
    self.base = Version(base, of: claim.source.counter)
    self.batch = batch
    self.claim = claim
  }

  /// The version the source holds once this write is applied: ``base`` + 1, or ``base`` when it changes
  /// nothing.
  @inlinable public var version: Version { batch?.to ?? base }

  /// Makes the write the source's next version and publishes it to subscribers, as a direct mutation
  /// would, and lets the next prepared write have the source.
  ///
  /// It cannot fail: nothing has changed the source since the write was prepared. It first waits until
  /// ``base`` has been offered, so the write is offered as a version of its own, never in one batch with
  /// the write before it: a source whose writes are all prepared (a writer and the followers of a log)
  /// retains every version its storage logged, and a client holding any of them resumes there. (When the
  /// waiting task is cancelled it applies at once, and the two may share a batch.)
  /// - Returns: ``version``; ``base`` when the write was abandoned through its ``releaser`` first, and
  ///   nothing was made (``applyIfHeld()`` tells the two apart).
  /// - Complexity: O(1) on the source (it takes the prepared state); the prepared ``batch`` is the one
  ///   published, not diffed again.
  @discardableResult
  public consuming func apply() async -> Version {
    claim.source.stamped(await claim.applyIfHeld(base: base.number) ?? base.number)
  }

  /// Applies the write as ``apply()`` does, unless its ``releaser`` abandoned it first.
  /// - Returns: ``version``, or `nil` when the write was abandoned and nothing was made.
  /// - Complexity: as ``apply()``.
  public consuming func applyIfHeld() async -> Version? {
    await claim.applyIfHeld(base: base.number).map(claim.source.stamped)
  }

  /// Drops the write: the source is left exactly as it was, with no version and no batch, and the next
  /// prepared write has it. Nothing happens when its ``releaser`` abandoned it already.
  public consuming func abandon() async {
    _ = await claim.abandon()
  }

  /// Abandons this write from any task: for a caller whose storage may never answer (a commit on a
  /// connection that died), so that a deadline frees the source without waiting for the task that holds
  /// the write. The write itself is answered once: whichever of ``apply()``, ``applyIfHeld()``,
  /// ``abandon()`` and the releaser comes first decides.
  public var releaser: PreparedWriteReleaser<Section> { PreparedWriteReleaser(claim: claim) }
}

/// Abandons a ``PreparedWrite`` from another task (see ``PreparedWrite/releaser``).
public struct PreparedWriteReleaser<Section: SectionType>: Sendable {
  @usableFromInline let claim: PreparedWriteClaim<Section>

  @usableFromInline init(claim: PreparedWriteClaim<Section>) { self.claim = claim }

  /// Abandons the write unless it was applied or abandoned already.
  /// - Returns: `true` when this call abandoned it (the source is free for the next write); `false` when
  ///   the write had been answered.
  /// - Complexity: O(1).
  @discardableResult
  public func abandon() async -> Bool { await claim.abandon() }
}

/// The part of a ``PreparedWrite`` the source reads when it is applied, and that abandons a write dropped
/// without an answer (its `deinit` runs once the last reference to the write goes).
@usableFromInline
final class PreparedWriteClaim<Section: SectionType>: Sendable {
  // Guard map: everything is set once but `answered`, which apply, abandon and the deinit settle under
  // its lock, so exactly one of them answers for the write; the deinit of a write never answered starts
  // one task to release its reservation on the source's actor.
  @usableFromInline let source: BasicDataSource<Section>
  /// The reservation the write holds (see ``PublishStateMachine/reserve(_:)``).
  @usableFromInline let ticket: Int
  /// The state after the write, whose log holds only what the write touched; `nil` when it changes nothing.
  @usableFromInline let store: SectionStore<Section>?
  /// Items the write refreshes although `==` saw no change.
  @usableFromInline let refreshing: Set<Section.Item.ID>
  /// The write's diff, which the publish loop publishes (nil when the write changes nothing).
  @usableFromInline let diff: PreparedDiff<Section>?
  /// Whether ``PreparedWrite/apply()`` or ``PreparedWrite/abandon()`` answered for the write.
  let answered = Locked(false)

  @inlinable
  init(
    source: BasicDataSource<Section>, ticket: Int, store: SectionStore<Section>?,
    refreshing: Set<Section.Item.ID>, diff: PreparedDiff<Section>? = nil
  ) {
    self.source = source
    self.ticket = ticket
    self.store = store
    self.refreshing = refreshing
    self.diff = diff
  }

  /// Marks the write answered: `true` for the first caller only, who then applies or abandons it.
  @usableFromInline
  func settle() -> Bool {
    answered.withLock { answered in
      defer { answered = true }
      return !answered
    }
  }

  /// Applies the write if no one answered it yet; `nil` otherwise.
  @usableFromInline
  func applyIfHeld(base: Int) async -> Int? {
    guard settle() else { return nil }
    await source.settled(throughNumber: base)
    return await source.applyPrepared(self)
  }

  /// Abandons the write if no one answered it yet: `true` when this call did.
  @usableFromInline
  func abandon() async -> Bool {
    guard settle() else { return false }
    await source.release(ticket: ticket)
    return true
  }

  deinit {
    guard !answered.withLock({ $0 }) else { return }
    let source = source
    let ticket = ticket
    Task.schedulable("releasing a prepared write") { await source.release(ticket: ticket) }
  }
}
