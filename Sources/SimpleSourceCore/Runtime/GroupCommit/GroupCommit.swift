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
/// - **Arrival order.** A group is every write that arrived before its turn of the source came (while the
///   group before it was made and, with a storage step, committed), in the order they arrived; its bodies
///   run in that order, each against the state the ones before it left.
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
///   ``DataSourceErrorCode/cancelled`` and makes nothing; once its group is taken, it is answered with
///   the group's outcome. No write's cancellation reaches another's: your `commit` runs in a task of its
///   own.
///
/// No task of its own makes the groups: a group is led by its first write, whose task takes the group in
/// its turn of the source, makes it, and answers the others. The writes that arrive meanwhile wait for
/// the next leader: the first of them. So a write costs what a direct transaction costs when it arrives
/// alone, and under load its group's turn, diff and commit are shared.
public final class GroupCommit<Section: SectionType, Value: Sendable>: Sendable {
  /// A write's body: edits made through the ``Transaction``, run on the source's actor.
  @usableFromInline typealias Body = @Sendable (inout Transaction<Section>) throws -> Value

  /// One group, as your storage commits it.
  public struct Group: Sendable {
    /// The version the source held when the group was prepared.
    public let base: Version
    /// The version that holds the group: ``base`` + 1, or ``base`` when its writes change nothing.
    public let version: Version
    /// The batch from ``base`` to ``version``; `nil` when the writes change nothing.
    public let batch: UpdateBatch<Section>?
    /// Each write's outcome, in the group's order: what its body returned, or what it threw (its edits
    /// are not in ``batch``).
    public let results: [Result<Value, any Error>]
  }

  /// What a waiting write is resumed with: its answer, or the lead of the next group.
  @usableFromInline
  enum Resumption: Sendable {
    case answer(Result<(version: Version, value: Value), any Error>)
    case lead
  }

  /// A submitted write: its id (for cancellation), body and the continuation that resumes it (already
  /// resumed for the write that leads on submitting). Unchecked: the state machine hands each write out
  /// once (taken, cancelled or led), and its exhaustive test holds that; a checked one costs an allocation
  /// per write.
  @usableFromInline
  struct Submitted: Sendable {
    @usableFromInline let id: Int
    @usableFromInline let body: Body
    @usableFromInline let resume: UnsafeContinuation<Resumption, Never>

    @inlinable
    init(id: Int, body: @escaping Body, resume: UnsafeContinuation<Resumption, Never>) {
      self.id = id
      self.body = body
      self.resume = resume
    }
  }

  @usableFromInline let source: BasicDataSource<Section>
  @usableFromInline let commit: (@Sendable (Group) async throws -> Void)?
  // Guard map: `state` (the machine, the next id and the tests' submit observer) is read and written only
  // under its lock. A group's writes belong to its leader's task once taken; it answers them. A
  // continuation is resumed outside the lock.
  @usableFromInline let state:
    Locked<(machine: GroupCommitStateMachine<Submitted>, nextID: Int, submitted: (@Sendable () -> Void)?)>

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
    state = Locked((GroupCommitStateMachine(), 0, nil))
  }

  /// Tells `observer` each time a write is submitted (and leads or waits): tests order events with it.
  package func onSubmitted(_ observer: @escaping @Sendable () -> Void) {
    state.withLock { $0.submitted = observer }
  }

  /// Makes `body`'s edits in the next group, and returns once the group is made.
  ///
  /// - Parameter body: Makes the write's edits; runs on the source's actor, after the bodies that arrived
  ///   before it, against the state they left.
  /// - Returns: The version that holds the write (the group's), and what `body` returned.
  /// - Throws: What `body` threw (its edits are dropped, the group goes on); what `commit` threw for its
  ///   group (nothing of the group is made); ``DataSourceErrorCode/cancelled`` when the task was cancelled
  ///   while the write waited for its group.
  /// - Complexity: O(*k* log *n*) for *k* edits, as a transaction; the group's turn, diff and commit are
  ///   shared.
  @inlinable
  public func write(_ body: @escaping @Sendable (inout Transaction<Section>) throws -> Value) async throws
    -> (version: Version, value: Value)
  {
    let id = state.withLock { state in
      state.nextID += 1
      return state.nextID
    }
    let resumption = await withTaskCancellationHandler {
      await withUnsafeContinuation { (continuation: UnsafeContinuation<Resumption, Never>) in
        if Task.isCancelled {
          continuation.resume(returning: .answer(.failure(BasicDataSource<Section>.Error(code: .cancelled))))
          return
        }
        let submitted = Submitted(id: id, body: body, resume: continuation)
        let (role, observer) = state.withLock { ($0.machine.submit(submitted), $0.submitted) }
        if role == .lead { continuation.resume(returning: .lead) }
        observer?()
      }
    } onCancel: {
      let cancelled = state.withLock { $0.machine.cancel { $0.id == id } }
      cancelled?.resume.resume(returning: .answer(.failure(BasicDataSource<Section>.Error(code: .cancelled))))
    }
    switch resumption {
    case .answer(let answer): return try answer.get()
    case .lead: return try await lead().get()
    }
  }

  /// Takes the group this write leads in its turn of the source, makes it, answers the others, and
  /// returns this write's own answer.
  @inlinable
  func lead() async -> Result<(version: Version, value: Value), any Error> {
    let group: [Submitted]
    let version: Version?
    let results: [Result<Value, any Error>]
    if let commit {
      (group, version, results) = await commitWithStorage(commit)
    } else {
      guard let made = await source.makeGroup({ self.state.withLock { $0.machine.take() } }) else {
        return leaderLeft()
      }
      (group, version, results) = (made.group, made.version, made.results)
    }
    guard !group.isEmpty else { return leaderLeft() }
    // By index: no pairs of writes and answers are built.
    func answer(_ index: Int) -> Result<(version: Version, value: Value), any Error> {
      switch (results[index], version) {
      case (.success(let value), let version?): .success((version, value))
      case (.failure(let error), _): .failure(error)
      case (.success, nil):
        preconditionFailure("SimpleSource: a write of an abandoned group succeeded (internal inconsistency)")
      }
    }
    for index in group.indices.dropFirst() { group[index].resume.resume(returning: .answer(answer(index))) }
    return answer(0)
  }

  /// The leader's task was cancelled while it waited for its turn behind a prepared write: it makes
  /// nothing, and the next write waiting leads instead.
  @inlinable
  func leaderLeft() -> Result<(version: Version, value: Value), any Error> {
    state.withLock { $0.machine.leaderLeft() }?.resume.resume(returning: .lead)
    return .failure(BasicDataSource<Section>.Error(code: .cancelled))
  }

  /// Runs each body of `bodies` in order against a copy of `transaction`, keeping the edits of those that
  /// return: one that throws leaves no trace.
  @inlinable
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

  /// Takes the group in a prepared write's turn, has `commit` store it (in a task of its own, which the
  /// leader's cancellation does not reach), then applies it, or abandons it when `commit` throws.
  /// - Returns: The group, the version that holds it (`nil` when abandoned: every write then failed), and
  ///   each write's result; no writes when the leader's task was cancelled while it waited for its turn.
  @usableFromInline
  func commitWithStorage(_ commit: @escaping @Sendable (Group) async throws -> Void) async -> (
    group: [Submitted], version: Version?, results: [Result<Value, any Error>]
  ) {
    let prepared: PreparedWrite<Section, (group: [Submitted], results: [Result<Value, any Error>])>
    do {
      prepared = try await source.prepare {
        (transaction: inout Transaction<Section>) throws(BasicDataSource<Section>.Error) in
        let group = self.state.withLock { $0.machine.take() }
        return (group, Self.run(group.map(\.body), on: &transaction))
      }
    } catch {
      // Refused before its body ran: nothing was taken.
      return ([], nil, [])
    }
    let (group, results) = prepared.result
    let stored = Group(
      base: prepared.base, version: prepared.version, batch: prepared.batch, results: results)
    let committing = Task.schedulable("committing a group") { try await commit(stored) }
    do {
      try await committing.value
    } catch {
      await prepared.abandon()
      return (group, nil, results.map { result in result.flatMap { _ in .failure(error) } })
    }
    return (group, await prepared.apply(), results)
  }
}

extension BasicDataSource {
  /// Runs the bodies of the group `take` hands over, in the turn of a direct write, as one transaction.
  /// - Returns: The version that holds the group, its writes, and each body's result; `nil`, without
  ///   calling `take`, when the task was cancelled while it waited for its turn behind a prepared write.
  /// - Complexity: O(*k* log *n*) for *k* edits of the bodies.
  @inlinable
  func makeGroup<Value: Sendable>(
    _ take: @Sendable () -> [GroupCommit<Section, Value>.Submitted]
  ) async -> (
    version: Version, group: [GroupCommit<Section, Value>.Submitted],
    results: [Result<Value, any Swift.Error>]
  )? {
    await inTurn { (refusal: DataSourceErrorCode?) in
      guard refusal == nil else { return nil }
      let group = take()
      var transaction = Transaction(store: store, refusal: nil)
      let results = GroupCommit<Section, Value>.run(group.map(\.body), on: &transaction)
      return (stamped(finish(transaction)), group, results)
    }
  }
}
