// Group commit: writes that arrive while one group commits form the next, with one storage commit.

/// Commits the writes of many tasks to a ``BasicDataSource`` (and your storage) in groups: the writes that
/// arrive while one group commits form the next group, which costs one transaction, one diff and one
/// version (and one storage commit), and each write is answered on its own.
///
/// A service whose every edit is a two-phase write (``BasicDataSource/prepare(from:_:)-(_,(Transaction<Section>)->Result)``)
/// pays a storage commit and a published version per edit; under load, databases answer that with group
/// commit, and so does this:
///
/// ```swift
/// let commits = GroupCommit(source) { group in
///   // One database transaction: the group's batch, and what each write recorded.
///   try await database.write(group.batch, answers: group.results)
/// }
/// // From any number of tasks:
/// let (version, card) = try await commits.write { transaction in
///   try transaction.appendItems([card], toSection: "todo")
///   return card
/// }
/// ```
///
/// The promises:
/// - **Each write is answered _exactly_ once**, with the version that holds it and what its body returned,
///   or with its own error: a body that throws leaves no trace (its edits are dropped, the source and the
///   rest of its group go on as if it had not run), and refuses nothing else.
/// - **Arrival order.** A group is every write that arrived while the group before it committed, in the
///   order they arrived; its bodies run in that order, each against the state the ones before it left.
/// - **One version per group.** Without a storage step a group is one transaction, coalesced into the
///   source's batches as direct writes are. With one, it is one prepared write: one batch from
///   ``Group/base`` to ``Group/version``, which your `commit` stores, then the source applies it, offered
///   in a batch of its own (``PreparedWrite/apply()``), so that a client holding any version of your log
///   resumes there. A group whose writes change nothing makes no version (G4): ``Group/batch`` is `nil`.
/// - **All or nothing with your storage.** When `commit` throws, the group is abandoned: the source is left
///   as it was, and every write of the group whose body succeeded gets that error.
/// - **In the source's one order.** Direct writes and prepared writes take their turns with the groups
///   (see <doc:WritingThroughADatabase>).
/// - **Cancellation.** A write whose task is cancelled while it waits for its group throws
///   ``DataSourceErrorCode/cancelled`` and makes nothing; once its group is committing, it is answered
///   with the group's outcome.
///
/// The groups are committed by a task this object starts when a write arrives and no group commits, and
/// which ends when none waits.
public final class GroupCommit<Section: SectionType, Value: Sendable>: Sendable {
  /// A write's body: edits made through the ``Transaction``, run on the source's actor.
  @usableFromInline typealias Body = @Sendable (inout Transaction<Section>) throws -> Value

  /// One group, as your storage commits it.
  public struct Group: Sendable {
    /// The version the source held when the group was prepared.
    public let base: Int
    /// The version that holds the group: ``base`` + 1, or ``base`` when its writes change nothing.
    public let version: Int
    /// The batch from ``base`` to ``version``; `nil` when the writes change nothing.
    public let batch: UpdateBatch<Section>?
    /// Each write's outcome, in the group's order: what its body returned, or what it threw (its edits
    /// are not in ``batch``).
    public let results: [Result<Value, any Error>]
  }

  /// A submitted write: its id (for cancellation), body and the continuation its answer resumes.
  @usableFromInline
  struct Submitted: Sendable {
    @usableFromInline let id: Int
    @usableFromInline let body: Body
    @usableFromInline let answer:
      CheckedContinuation<Result<(version: Version, value: Value), any Error>, Never>
  }

  @usableFromInline let source: BasicDataSource<Section>
  @usableFromInline let commit: (@Sendable (Group) async throws -> Void)?
  // Guard map: `state` (the machine and the next id) is read and written only under its lock; the loop
  // task owns the committing group's writes and answers them; a continuation is resumed outside the lock.
  @usableFromInline let state: Locked<(machine: GroupCommitStateMachine<Submitted>, nextID: Int)>

  /// Creates a group committer for `source`.
  /// - Parameters:
  ///   - source: The source the writes are made to.
  ///   - commit: Your storage's step, between prepare and apply: store the group (its batch, and what
  ///     each write recorded in its result) in one transaction, or throw to abandon the group. Without
  ///     storage of your own, pass nothing: each group is then one transaction of the source, made in one
  ///     turn of its actor and coalesced into its batches as direct writes are.
  public init(_ source: BasicDataSource<Section>, commit: (@Sendable (Group) async throws -> Void)? = nil) {
    self.source = source
    self.commit = commit
    state = Locked((GroupCommitStateMachine(), 0))
  }

  /// Makes `body`'s edits in the next group, and returns once the group is applied.
  ///
  /// - Parameter body: Makes the write's edits; runs on the source's actor, after the bodies that arrived
  ///   before it, against the state they left.
  /// - Returns: The version that holds the write (the group's), and what `body` returned.
  /// - Throws: What `body` threw (its edits are dropped, the group goes on); what `commit` threw for its
  ///   group (nothing of the group is made); ``DataSourceErrorCode/cancelled`` when the task was cancelled
  ///   while the write waited for its group.
  /// - Complexity: O(*k* log *n*) for *k* edits, as a transaction; the group's diff and commit are shared.
  public func write(_ body: @escaping @Sendable (inout Transaction<Section>) throws -> Value) async throws
    -> (version: Version, value: Value)
  {
    let id = state.withLock { state in
      state.nextID += 1
      return state.nextID
    }
    let answer = await withTaskCancellationHandler {
      await withCheckedContinuation {
        (continuation: CheckedContinuation<Result<(version: Version, value: Value), any Error>, Never>) in
        if Task.isCancelled {
          continuation.resume(returning: .failure(BasicDataSource<Section>.Error(code: .cancelled)))
          return
        }
        let submitted = Submitted(id: id, body: body, answer: continuation)
        if case .startGroup(let group) = state.withLock({ $0.machine.submit(submitted) }) {
          Task.schedulable("committing a group") { await self.run(from: group) }
        }
      }
    } onCancel: {
      let cancelled = state.withLock { $0.machine.cancel { $0.id == id } }
      cancelled?.answer.resume(returning: .failure(BasicDataSource<Section>.Error(code: .cancelled)))
    }
    return try answer.get()
  }

  /// Commits groups until none waits.
  func run(from first: [Submitted]) async {
    var group = first
    while true {
      await commitGroup(group)
      guard case .nextGroup(let next) = state.withLock({ $0.machine.groupCommitted() }) else { return }
      group = next
    }
  }

  /// Runs each body of `bodies` in order against a copy of `transaction`, keeping the edits of those that
  /// return: one that throws leaves no trace.
  static func run(_ bodies: [Body], on transaction: inout Transaction<Section>) -> [Result<Value, any Error>]
  {
    var results: [Result<Value, any Error>] = []
    results.reserveCapacity(bodies.count)
    for body in bodies {
      // A copy is O(1) (persistent: paths are copied as it edits).
      var trial = transaction
      do {
        results.append(.success(try body(&trial)))
        transaction = trial
      } catch {
        results.append(.failure(error))
      }
    }
    return results
  }

  /// Makes the group's bodies one write and answers each: one transaction without a storage step; with
  /// one, a prepared write committed to storage, then applied.
  func commitGroup(_ group: [Submitted]) async {
    let bodies = group.map(\.body)
    guard let commit else {
      let (version, results) = await source.transaction {
        (transaction: inout Transaction<Section>) -> [Result<Value, any Error>] in
        return Self.run(bodies, on: &transaction)
      }
      for (write, result) in zip(group, results) {
        write.answer.resume(returning: result.map { (version, $0) })
      }
      return
    }
    let prepared: PreparedWrite<Section, [Result<Value, any Error>]>
    do {
      prepared = try await source.prepare {
        (transaction: inout Transaction<Section>) throws(BasicDataSource<Section>.Error) -> [Result<
          Value, any Error
        >] in
        Self.run(bodies, on: &transaction)
      }
    } catch {
      for write in group { write.answer.resume(returning: .failure(error)) }
      return
    }
    let results = prepared.result
    do {
      try await commit(
        Group(base: prepared.base, version: prepared.version, batch: prepared.batch, results: results))
    } catch {
      await prepared.abandon()
      for (write, result) in zip(group, results) {
        switch result {
        case .success: write.answer.resume(returning: .failure(error))
        case .failure(let own): write.answer.resume(returning: .failure(own))
        }
      }
      return
    }
    let version = await prepared.apply()
    for (write, result) in zip(group, results) {
      write.answer.resume(returning: result.map { (version, $0) })
    }
  }
}
