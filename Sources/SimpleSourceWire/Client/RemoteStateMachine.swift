// The pure state machine of a remote source: which stream and version it holds, whether it follows, who waits.

public import SimpleSourceCore

/// Where a ``RemoteDataSource`` stands with its sender.
@usableFromInline package enum RemotePhase: Hashable, Sendable {
  /// No reset or resume accepted yet since the start or since a refusal: batches are ignored.
  case awaitingStart
  /// Following: each batch must start at the version held.
  case following
}

/// What a ``RemoteDataSource`` decides about the messages it receives: whether it follows its sender,
/// the stream and version it holds, which batch it may apply, and which waiters to wake.
///
/// Plain synchronous code in the style of ``PublishStateMachine``: each event returns what to do, and the
/// actor performs it (diff a reset, apply a batch, resume waiters). It holds no snapshot: applying a
/// batch to the state held is the model's checked apply, which the actor runs between ``batch(from:)``
/// and ``applied(to:)`` or ``refused(_:)``. `Waiter` is a suspended caller of
/// ``RemoteDataSource/reached(remoteVersion:inStream:)`` (anything in tests).
@usableFromInline
struct RemoteStateMachine<Waiter> {
  /// The stream followed, as the sender names it; `nil` before the first reset.
  @usableFromInline var stream: String?
  /// The sender's version of the state held; `nil` before the first reset.
  @usableFromInline var remoteVersion: Int?
  @usableFromInline var phase = RemotePhase.awaitingStart
  /// The last message refused.
  @usableFromInline var lastError: WireError?
  /// Batches ignored while awaiting a reset or resume.
  @usableFromInline var ignoredBatches = 0
  /// Whether a batch is being applied: between ``batch(from:)`` and ``applied(to:)`` or ``refused(_:)``.
  @usableFromInline var applying = false
  /// Callers of `reached(remoteVersion:inStream:)`, until the state held is at their version of their stream.
  @usableFromInline var waiters = ParkedWaiters<(version: Int, stream: String?), Waiter>()
  @usableFromInline var isFinished = false

  @inlinable init() {}

  // MARK: - Messages

  /// A reset of `stream` at `version` arrived: it replaces the state held, and following starts.
  /// - Returns: The waiters it brings to their version, to resume after the actor offered the reset.
  @inlinable
  mutating func reset(stream: String, version: Int) -> [Waiter] {
    self.stream = stream
    remoteVersion = version
    phase = .following
    return takeReadyWaiters()
  }

  /// A resume of `stream` at `version` arrived: following starts when it is the stream and version held.
  /// - Throws: ``WireError/Code-swift.struct/versionMismatch`` otherwise; see ``refused(_:)``.
  @inlinable
  mutating func resumed(stream: String, version: Int) throws(WireError) {
    guard stream == self.stream, version == remoteVersion else {
      throw refused(
        WireError(
          .versionMismatch,
          "resumed \(stream) at \(version), holding \(self.stream ?? "nothing") at \(remoteVersion.map(String.init) ?? "none")"
        ))
    }
    phase = .following
  }

  /// What to do with an arriving batch.
  @usableFromInline
  enum BatchAdmission: Equatable {
    /// Not following (a batch in flight when a refusal happened): ignore it.
    case ignore
    /// Apply it to the state held, at the sender's version `at`; then ``applied(to:)`` or ``refused(_:)``.
    case apply(at: Int)
  }

  /// A batch arrived.
  @inlinable
  mutating func batch() -> BatchAdmission {
    precondition(!applying, "SimpleSource: a remote batch while another is applied")
    guard phase == .following, let remoteVersion else {
      ignoredBatches += 1
      return .ignore
    }
    applying = true
    return .apply(at: remoteVersion)
  }

  /// The batch admitted last applied: the state held is the sender's version `version`.
  /// - Returns: The waiters it brings to their version.
  @inlinable
  mutating func applied(to version: Int) -> [Waiter] {
    precondition(applying, "SimpleSource: applied without a batch")
    applying = false
    remoteVersion = version
    return takeReadyWaiters()
  }

  /// A message was refused (a batch that does not apply, bytes that do not decode, the sender's error, a
  /// subscribe): batches are ignored until a reset or a resume.
  /// - Returns: `error`, to throw.
  @inlinable
  mutating func refused(_ error: WireError) -> WireError {
    applying = false
    phase = .awaitingStart
    lastError = error
    return error
  }

  // MARK: - Waiting

  /// A caller waits until the state held is at the sender's `version` or later, of `stream` when named.
  @inlinable
  mutating func wait(until version: Int, inStream stream: String?, _ waiter: Waiter) -> WaitDecision<Waiter> {
    if isAt(version, stream) { return .resume(waiter, reached: true) }
    if isFinished { return .resume(waiter, reached: false) }
    return .wait(id: waiters.park(waiter, until: (version, stream)))
  }

  /// The task of waiter `id` was cancelled.
  /// - Returns: The waiter, to resume, unless it was resumed already.
  @inlinable
  mutating func cancelWait(_ id: Int) -> Waiter? { waiters.cancel(id) }

  /// The source goes away.
  /// - Returns: Every waiter, to resume.
  @inlinable
  mutating func finish() -> [Waiter] {
    isFinished = true
    return waiters.take { _ in true }
  }

  @inlinable
  func isAt(_ version: Int, _ stream: String?) -> Bool {
    guard let remoteVersion, stream == nil || stream == self.stream else { return false }
    return remoteVersion >= version
  }

  @inlinable
  mutating func takeReadyWaiters() -> [Waiter] {
    let (held, heldStream) = (remoteVersion, stream)
    return waiters.take { condition in
      guard let held, condition.stream == nil || condition.stream == heldStream else { return false }
      return held >= condition.version
    }
  }

  // MARK: - Invariants

  /// The invariants every event keeps; empty when all hold.
  var violations: [String] {
    var found: [String] = []
    if phase == .following && (stream == nil || remoteVersion == nil) { found.append("following nothing") }
    if applying && phase != .following { found.append("applying while not following") }
    if waiters.conditions.contains(where: { isAt($0.version, $0.stream) }) {
      found.append("a ready waiter still parked")
    }
    if isFinished && !waiters.isEmpty { found.append("waiters parked after the end") }
    return found
  }
}

/// Plain values: the remote source's nonisolated `deinit` hands its waiters back through it.
extension RemoteStateMachine: Sendable where Waiter: Sendable {}
