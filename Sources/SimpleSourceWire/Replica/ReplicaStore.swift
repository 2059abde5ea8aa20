// What a remote source keeps to start again after a restart, and the protocol of the stores that keep it.

public import SimpleSourceCore

/// Everything a ``RemoteDataSource`` needs to start where it stopped: the stream, query and version it
/// holds, the state at that version, and the edits it made that the sender has not answered.
public struct ReplicaState<Section: SectionType>: Sendable
where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
  /// The prefix of the replica's edit ids; kept, so that an edit sent again after a restart has the id the
  /// sender may have answered already.
  public var clientID: String
  /// The number of edits the replica has made: the next edit id follows it.
  public var editsMade: Int
  /// The epoch of the replica's edit ids, `nil` for none: a random name a replica takes whenever it starts
  /// from something that may have forgotten edits it sent (nothing kept, a store that was damaged or may
  /// lose appends), so that a number it counts again never names an edit the sender already answered.
  public var epoch: String?
  /// The query followed, `nil` for the whole stream.
  public var query: WireQueryRequest?
  /// The stream held, `nil` before the first reset.
  public var stream: String?
  /// The sender's version of ``snapshot``, `nil` before the first reset.
  public var version: Int?
  /// The state held at ``version``, without the pending edits.
  public var snapshot: Snapshot<Section>
  /// The edits made and not answered, oldest first.
  public var pendingEdits: [WireEdit<Section>]
  /// The answers of the newest ``keptAnswers`` edits the sender answered, oldest first: what
  /// ``RemoteDataSource/answer(to:)`` tells after a restart.
  public var answers: [ReplicaAnswer] = []

  /// How many answers a replica keeps: its newest 256.
  public static var keptAnswers: Int { 256 }

  /// A replica that holds nothing yet.
  public init(clientID: String, query: WireQueryRequest?) {
    self.clientID = clientID
    self.query = query
    editsMade = 0
    snapshot = Snapshot()
    pendingEdits = []
  }

  /// The id of the edit numbered `number` of `client` in `epoch`: `client-number`, or `client.epoch-number`.
  /// - Complexity: O(1).
  package static func editID(client: String, epoch: String?, number: Int) -> String {
    guard let epoch else { return "\(client)-\(number)" }
    return "\(client).\(epoch)-\(number)"
  }

  /// A new epoch's name: 48 random bits, in hexadecimal.
  package static func newEpoch() -> String {
    String(UInt64.random(in: 0..<(1 << 48)), radix: 16)
  }

  /// Takes one journalled message into the state: a reset replaces it, a batch advances it, an edit
  /// becomes pending, an answer ends a pending edit. Other messages change nothing.
  /// - Throws: ``ReplicaStoreError/Reason/damaged`` when a batch does not follow the version held or
  ///   does not apply: the journal is not what this replica wrote.
  /// - Complexity: O(*k* log *n*) for a batch of *k* changes; O(*n*) for a reset; O(*p*) for an answer
  ///   among *p* pending edits.
  public mutating func replay(_ message: WireMessage<Section>) throws(ReplicaStoreError) {
    switch message {
    case .reset(let stream, let version, let snapshot):
      (self.stream, self.version, self.snapshot) = (stream, version, snapshot)
    case .batch(let batch):
      guard let version, batch.from == version else {
        throw ReplicaStoreError(
          .damaged,
          "a journalled batch \(batch.from)→\(batch.to) at version \(version.map(String.init) ?? "none")")
      }
      do {
        snapshot = try batch.applied(to: snapshot).snapshot
      } catch {
        throw ReplicaStoreError(.damaged, "a journalled batch does not apply: \(error)")
      }
      self.version = batch.to
    case .edit(let edit):
      pendingEdits.append(edit)
      editsMade += 1
    case .confirmed(let id, let version):
      pendingEdits.removeAll { $0.id == id }
      remember(ReplicaAnswer(edit: id, version: version))
    case .refused(let id, let error):
      pendingEdits.removeAll { $0.id == id }
      remember(ReplicaAnswer(edit: id, error: error))
    case .subscribe, .resumed, .error, .subscribeViews, .views, .viewBatches:
      break
    }
  }
}

extension ReplicaState {
  /// Keeps `answer` among the newest ``keptAnswers``.
  /// - Complexity: O(1) amortized; O(``keptAnswers``) when the oldest leaves.
  package mutating func remember(_ answer: ReplicaAnswer) {
    answers.append(answer)
    if answers.count > Self.keptAnswers { answers.removeFirst(answers.count - Self.keptAnswers) }
  }

  /// Whether `id` names an edit this replica made: one of its own ids (of any epoch) whose number it
  /// counted to. Such an id that is neither pending nor among ``answers`` was answered and forgotten.
  /// - Complexity: O(*s*) in the length of the id.
  package func made(_ id: String) -> Bool {
    guard id.hasPrefix(clientID), let dash = id.lastIndex(of: "-"),
      let number = Int(id[id.index(after: dash)...])
    else { return false }
    let middle = id[id.index(id.startIndex, offsetBy: clientID.count)..<dash]
    // `client-n` or `client.epoch-n`: of this epoch only when its number was counted in it.
    guard middle.isEmpty || middle.hasPrefix(".") else { return false }
    let sameEpoch = middle.isEmpty ? epoch == nil : epoch.map { middle.dropFirst() == $0[...] } ?? false
    return !sameEpoch || (number >= 1 && number <= editsMade)
  }
}

/// The sender's answer to one of a replica's edits: the version that holds it, or its refusal.
public struct ReplicaAnswer: Hashable, Sendable {
  /// The edit's id.
  public var edit: String
  /// The version that holds the edit, when it was confirmed.
  public var version: Int?
  /// Why it was refused, when it was.
  public var error: WireError?

  /// A confirmation.
  public init(edit: String, version: Int) {
    self.edit = edit
    self.version = version
  }

  /// A refusal.
  public init(edit: String, error: WireError) {
    self.edit = edit
    self.error = error
  }

  /// The answer as ``RemoteDataSource/answer(to:)`` gives it.
  public var result: Result<Int, WireError> {
    if let version { return .success(version) }
    return .failure(error ?? WireError(.editNotMade, "refused"))
  }
}

/// Where a ``RemoteDataSource`` keeps its ``ReplicaState``: a base state and a journal of the messages it
/// received and made since, so that each batch costs what it changed.
///
/// ``FileReplicaStore`` keeps it in two files; an app can keep it in its own database instead (a table
/// for the base state, one for the journal), as long as ``append(_:)`` is durable when it returns (as far
/// as the store promises) and ``compact(_:)`` replaces both at once.
public protocol ReplicaStore<Section>: Sendable {
  /// The section type of the replica.
  associatedtype Section: SectionType
  where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable

  /// What the store keeps: the base state (`nil` when it keeps nothing) and the messages journalled
  /// after it, in order.
  /// - Throws: ``ReplicaStoreError`` when what it keeps cannot be read.
  func load() throws(ReplicaStoreError) -> (state: ReplicaState<Section>?, journal: [WireMessage<Section>])

  /// Journals a message the replica received (a batch, an answer) or made (an edit).
  /// - Returns: `true` when the journal outgrew what a compaction would write, so that loading would
  ///   be cheaper after ``compact(_:)``.
  func append(_ message: WireMessage<Section>) throws(ReplicaStoreError) -> Bool

  /// Replaces everything kept by `state`, all at once: after a crash at any moment, ``load()`` reads
  /// either what was kept before or `state`.
  func compact(_ state: ReplicaState<Section>) throws(ReplicaStoreError)

  /// Whether a power loss may take appends that had returned (a store that does not flush each one). A
  /// replica that starts from such a store begins a new ``ReplicaState/epoch``, so that an edit whose
  /// record was lost is never confused with a new one. `false` by default.
  var forgetsAppends: Bool { get }
}

extension ReplicaStore {
  /// A store keeps every append that returned: `false`.
  public var forgetsAppends: Bool { false }
}

/// Why a replica's store could not be read or written. A ``RemoteDataSource`` that meets one when it
/// starts starts from nothing and clears the store (a reset over the wire follows); one met while it
/// runs is kept in ``RemoteDataSource/storeError`` and the source goes on in memory.
public struct ReplicaStoreError: Error, Hashable, Sendable, CustomStringConvertible {
  /// What was wrong.
  public enum Reason: String, Hashable, Sendable {
    /// A file's records fail their checksums, or a record does not decode or apply.
    case damaged
    /// The store was written by a newer format than this build reads.
    case newerFormat
    /// The store holds another replica: another query, or another section type.
    case foreign
    /// The file system refused a read or a write.
    case io
  }

  /// What was wrong.
  public var reason: Reason
  /// What the store met, readable.
  public var detail: String

  /// Creates an error; a store of one's own throws one for what it cannot read or write.
  public init(_ reason: Reason, _ detail: String) {
    self.reason = reason
    self.detail = detail
  }

  /// The reason and the detail.
  public var description: String { "\(reason.rawValue): \(detail)" }
}

extension ReplicaAnswer: Codable {
  private enum Key: String, CodingKey { case edit, version, code, detail }

  /// `{"edit": id, "version": v}` or `{"edit": id, "code": …, "detail": …}`.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Key.self)
    try container.encode(edit, forKey: .edit)
    try container.encodeIfPresent(version, forKey: .version)
    try container.encodeIfPresent(error?.code.rawValue, forKey: .code)
    try container.encodeIfPresent(error?.detail, forKey: .detail)
  }

  /// Reads an answer; one with neither a version nor a code is a `DecodingError`.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: Key.self)
    edit = try container.decode(String.self, forKey: .edit)
    version = try container.decodeIfPresent(Int.self, forKey: .version)
    if let code = try container.decodeIfPresent(String.self, forKey: .code) {
      error = WireError(
        WireError.Code(rawValue: code), try container.decodeIfPresent(String.self, forKey: .detail) ?? "")
    }
    guard version != nil || error != nil else {
      throw DecodingError.dataCorruptedError(
        forKey: .edit, in: container, debugDescription: "an answer has a version or a code")
    }
  }
}
