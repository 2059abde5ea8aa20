// A data source that follows another one across the wire, checks every batch, and re-serves it locally.

public import SimpleSourceCore
public import Foundation

/// A data source that follows a remote one through ``WireMessage``s from any transport (a WebSocket, a
/// file, a broker), checks every batch against what it holds, and serves the result to its own
/// subscribers and views with the contract G1–G11 of every source of this package.
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
public actor RemoteDataSource<Section: SectionType>: DataSourceType
where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
  /// Where the source stands with its sender.
  public typealias Phase = RemotePhase

  @usableFromInline let broadcaster: Broadcaster<Section>
  /// ``WireBatch/update(from:at:)``, made in the inlinable initialiser so that the client's build
  /// specialises it (see ``Differ``).
  @usableFromInline let apply:
    @Sendable (WireBatch<Section>, Snapshot<Section>, Int) throws(WireError) -> UpdateBatch<Section>
  /// The state held, at ``remoteVersion``.
  @usableFromInline var held: Snapshot<Section>
  /// The stream and version held, whether it follows, and who waits (see ``RemoteStateMachine``).
  var state = RemoteStateMachine<CheckedContinuation<Bool, Never>>()

  /// The stream followed, as the sender names it; `nil` before the first reset.
  public var stream: String? { state.stream }
  /// The sender's version of the state held; `nil` before the first reset.
  public var remoteVersion: Int? { state.remoteVersion }
  /// Where the source stands with its sender.
  public var phase: Phase { state.phase }
  /// The last message refused, if any.
  public var lastError: WireError? { state.lastError }
  /// Batches ignored while awaiting a reset or resume (they were in flight when a refusal happened).
  public var ignoredBatches: Int { state.ignoredBatches }

  /// The query it follows (format 2), or `nil` for the whole stream.
  public let query: WireQueryRequest?

  /// Creates a source that holds nothing until the sender's first reset.
  /// - Parameters:
  ///   - history: How many versions are retained for its own subscribers that resume.
  ///   - query: The query of the sender to follow, named in every ``subscribeRequest``; `nil` follows
  ///     the whole stream.
  @inlinable
  public init(history: HistoryLimit = .default, query: WireQueryRequest? = nil) {
    self.query = query
    broadcaster = Broadcaster(snapshot: Snapshot(), history: history)
    held = Snapshot()
    apply = { (batch, held, version) throws(WireError) in try batch.update(from: held, at: version) }
  }

  deinit {
    broadcaster.finish()
    for waiter in state.finish() { waiter.resume(returning: false) }
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
      let changeset = broadcaster.differ.diff(held, snapshot, [])
      held = snapshot
      let ready = state.reset(stream: stream, version: version)
      offer(changeset, remote: version)
      for waiter in ready { waiter.resume(returning: true) }
    case .resumed(let stream, let version):
      try state.resumed(stream: stream, version: version)
    case .batch(let batch):
      guard case .apply(let version) = state.batch() else { return }
      let update: UpdateBatch<Section>
      do { update = try apply(batch, held, version) } catch { throw state.refused(error) }
      held = update.snapshot
      let ready = state.applied(to: batch.to)
      offer(update.changeset, remote: batch.to)
      for waiter in ready { waiter.resume(returning: true) }
    }
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
    let from = broadcaster.version
    let batch = UpdateBatch(from: from, to: max(from + 1, version), changeset: changeset)
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

  /// The former name of ``reached(remoteVersion:inStream:)``.
  @available(*, deprecated, renamed: "reached(remoteVersion:inStream:)")
  public func waitUntil(remoteVersion version: Int, inStream stream: String? = nil) async {
    await reached(remoteVersion: version, inStream: stream)
  }

  /// Resumes the waiter `id` names with `false`, if it still waits: its task was cancelled.
  private func cancelWait(_ id: WaiterID) {
    if let parked = id.parked { state.cancelWait(parked)?.resume(returning: false) }
  }

  // MARK: - DataSourceType

  /// The state held.
  public var snapshot: Snapshot<Section> { broadcaster.snapshot }
  /// The local version of the state held: the newest offered to subscribers.
  public var version: Int { broadcaster.version }
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
