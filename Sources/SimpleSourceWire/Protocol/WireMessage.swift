// The messages of the wire protocol and their JSON form: versioned, compact, and checked when read.

public import SimpleSourceCore

/// One message of the SimpleSource wire protocol, format `simplesource` number 2, and 3 for several views
/// on one connection (<doc:WireFormat>).
///
/// A client sends ``subscribe(stream:from:query:)``; the server answers
/// ``reset(stream:version:snapshot:)`` or ``resumed(stream:version:)``, then sends a ``batch(_:)`` for
/// every change, and ``error(_:)`` for a message it refused. A client that writes sends ``edit(_:)``; the
/// server answers each with ``confirmed(edit:version:)`` or ``refused(edit:error:)``. Every message carries
/// the format's name and number. Format 2 added the `query` of a subscribe and the edit messages; a format
/// 1 message is read too, and ``WireCoder/formatVersion`` writes either.
public enum WireMessage<Section: SectionType>: Sendable {
  /// A client asks for the stream, or for the slice of it that `query` names (format 2); `stream` and
  /// `from` name the stream and version it holds, if any.
  case subscribe(stream: String?, from: Int?, query: WireQueryRequest? = nil)
  /// The whole state at `version` of `stream`: the receiver drops what it holds and takes this.
  case reset(stream: String, version: Int, snapshot: Snapshot<Section>)
  /// The receiver keeps the state it holds at `version` of `stream`; batches from there follow.
  case resumed(stream: String, version: Int)
  /// The changes from the version the receiver holds to a later one.
  case batch(WireBatch<Section>)
  /// The sender refused a message; nothing changed on its side.
  case error(WireError)
  /// A client asks the server to make an edit (format 2; a server that takes edits answers it once,
  /// with ``confirmed(edit:version:)`` or ``refused(edit:error:)``).
  case edit(WireEdit<Section>)
  /// The server made the client's edit `edit` as its version `version`, or found it made already (an
  /// edit that changed nothing is confirmed at the version it saw). Sent after every batch of that version
  /// the client's subscription carries: what the client holds then includes the edit.
  case confirmed(edit: String, version: Int)
  /// The server did not make the client's edit `edit`, for `error`; nothing changed on its side.
  case refused(edit: String, error: WireError)
  /// A client asks for several views of the source on one connection, each a query (or the whole of its
  /// scope, `nil`) under a name of its own, presented at one version (format 3). It replaces the
  /// connection's subscription. `stream` and `from` name the stream and version the client holds these
  /// views at, if any: the server then resumes them (``resumed(stream:version:)``) or sends their states.
  case subscribeViews([String: WireQueryRequest?], stream: String? = nil, from: Int? = nil)
  /// Every view's state at `version` of `stream` (format 3): the receiver drops what it holds and takes
  /// these, all at once.
  case views(stream: String, version: Int, snapshots: [String: Snapshot<Section>])
  /// The batches of the views that changed between the version the receiver holds, `from`, and `to`
  /// (format 3), each from `from` to `to`: applied together, so that every view is shown at `to`. Views
  /// with no change are left out.
  case viewBatches(from: Int, to: Int, batches: [String: WireBatch<Section>])
}

extension WireMessage {
  /// The format name every message carries in its `format` field.
  package static var formatName: String { "simplesource" }
  /// The format number messages carry in their `formatVersion` field by default; the views' messages
  /// always carry 3.
  public static var formatVersion: Int { 2 }
  /// The format numbers a receiver reads; it refuses any other.
  public static var readableFormatVersions: ClosedRange<Int> { 1...3 }
  /// The format that added several views on one connection.
  package static var viewsFormat: Int { 3 }
}

/// The format number of a message, passed through a coder's `userInfo`: the number to write (an `Int`),
/// or, when a reference is given to a decoder, the number read. ``WireCoder`` uses it.
package final class WireMessageFormat: Sendable {
  /// The `userInfo` key: an `Int` to encode with, a ``WireMessageFormat`` to learn what was decoded.
  package static let userInfoKey = CodingUserInfoKey(rawValue: "simplesource.formatVersion")!
  private let read = Locked(0)
  /// The format number the decoder read; 0 before it read one.
  package var number: Int {
    get { read.withLock { $0 } }
    set { read.withLock { $0 = newValue } }
  }
  /// Creates an empty record.
  package init() {}
}

/// A position as it is written on the wire: a section index as a number, an item position as
/// `[section, item]`.
@usableFromInline
package protocol WireCoordinate: Hashable, Sendable {
  /// Writes the position.
  func encode(wire encoder: any Encoder) throws
  /// Reads a position; a negative index is read as written and refused when applied.
  init(wire decoder: any Decoder) throws
}

extension Int: WireCoordinate {
  /// Writes the index as a number.
  @usableFromInline package func encode(wire encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(self)
  }

  /// Reads a number.
  @usableFromInline package init(wire decoder: any Decoder) throws {
    self = try decoder.singleValueContainer().decode(Int.self)
  }
}

extension ItemPosition: WireCoordinate {
  /// Writes `[section, item]`.
  @usableFromInline package func encode(wire encoder: any Encoder) throws {
    var container = encoder.unkeyedContainer()
    try container.encode(section)
    try container.encode(item)
  }

  /// Reads `[section, item]`: exactly two numbers.
  @usableFromInline package init(wire decoder: any Decoder) throws {
    var container = try decoder.unkeyedContainer()
    let section = try container.decode(Int.self)
    let item = try container.decode(Int.self)
    guard container.isAtEnd else {
      throw DecodingError.dataCorruptedError(
        in: container, debugDescription: "an item position is [section, item]: two numbers")
    }
    self.init(section: section, item: item)
  }
}

private enum PositionKey: String, CodingKey {
  case at, from, id, to, value
}

extension WireRemoval: Codable where ID: Codable, Position: WireCoordinate {
  /// `{"at": position, "id": id}`.
  @usableFromInline package func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: PositionKey.self)
    try at.encode(wire: container.superEncoder(forKey: .at))
    try container.encode(id, forKey: .id)
  }

  /// Reads `{"at": position, "id": id}`.
  @usableFromInline package init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: PositionKey.self)
    self.init(
      id: try container.decode(ID.self, forKey: .id),
      at: try Position(wire: container.superDecoder(forKey: .at)))
  }
}

extension WireMove: Codable where ID: Codable, Position: WireCoordinate {
  /// `{"from": position, "id": id, "to": position}`.
  @usableFromInline package func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: PositionKey.self)
    try from.encode(wire: container.superEncoder(forKey: .from))
    try container.encode(id, forKey: .id)
    try to.encode(wire: container.superEncoder(forKey: .to))
  }

  /// Reads `{"from": position, "id": id, "to": position}`.
  @usableFromInline package init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: PositionKey.self)
    self.init(
      id: try container.decode(ID.self, forKey: .id),
      from: try Position(wire: container.superDecoder(forKey: .from)),
      to: try Position(wire: container.superDecoder(forKey: .to)))
  }
}

extension WirePlacement: Codable where Value: Codable, Position: WireCoordinate {
  /// `{"at": position, "value": content}`.
  @usableFromInline package func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: PositionKey.self)
    try at.encode(wire: container.superEncoder(forKey: .at))
    try container.encode(value, forKey: .value)
  }

  /// Reads `{"at": position, "value": content}`.
  @usableFromInline package init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: PositionKey.self)
    self.init(
      at: try Position(wire: container.superDecoder(forKey: .at)),
      value: try container.decode(Value.self, forKey: .value))
  }
}

extension WireChanges: Codable where ID: Codable, Value: Codable, Position: WireCoordinate {
  private enum Key: String, CodingKey {
    case deletes, inserts, moves, updates
  }

  /// `{"deletes": […], "inserts": […], "moves": […], "updates": […]}`, each left out when empty.
  @usableFromInline package func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Key.self)
    if !deletes.isEmpty { try container.encode(deletes, forKey: .deletes) }
    if !inserts.isEmpty { try container.encode(inserts, forKey: .inserts) }
    if !moves.isEmpty { try container.encode(moves, forKey: .moves) }
    if !updates.isEmpty { try container.encode(updates, forKey: .updates) }
  }

  /// Reads the four lists, each empty when absent.
  @usableFromInline package init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: Key.self)
    self.init(
      deletes: try container.decodeIfPresent([WireRemoval<ID, Position>].self, forKey: .deletes) ?? [],
      inserts: try container.decodeIfPresent([WirePlacement<Value, Position>].self, forKey: .inserts) ?? [],
      moves: try container.decodeIfPresent([WireMove<ID, Position>].self, forKey: .moves) ?? [],
      updates: try container.decodeIfPresent([WirePlacement<Value, Position>].self, forKey: .updates) ?? [])
  }
}

extension ChangeStage.Kind {
  /// The kind's name on the wire, such as `"structure"`.
  package var wireName: String {
    switch self {
    case .refresh: "refresh"
    case .structure: "structure"
    case .deletes: "deletes"
    case .sectionInsertsAndMoves: "sectionInsertsAndMoves"
    case .itemInsertsAndMoves: "itemInsertsAndMoves"
    }
  }

  /// The kind named `wireName`, or `nil`.
  @usableFromInline package init?(wireName: String) {
    let all: [Self] = [.refresh, .structure, .deletes, .sectionInsertsAndMoves, .itemInsertsAndMoves]
    guard let kind = all.first(where: { $0.wireName == wireName }) else { return nil }
    self = kind
  }
}

extension WireStage: Codable
where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
  private enum Key: String, CodingKey {
    case items, kind, sections
  }

  /// `{"items": {…}, "kind": name, "sections": {…}}`, the change lists left out when empty.
  @usableFromInline package func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Key.self)
    if !items.isEmpty { try container.encode(items, forKey: .items) }
    try container.encode(kind.wireName, forKey: .kind)
    if !sections.isEmpty { try container.encode(sections, forKey: .sections) }
  }

  /// Reads a stage; an unknown kind is a `DecodingError`.
  @usableFromInline package init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: Key.self)
    let name = try container.decode(String.self, forKey: .kind)
    guard let kind = ChangeStage<Section>.Kind(wireName: name) else {
      throw DecodingError.dataCorruptedError(
        forKey: .kind, in: container, debugDescription: "unknown stage kind \(name)")
    }
    self.init(
      kind: kind,
      sections: try container.decodeIfPresent(WireChanges.self, forKey: .sections) ?? WireChanges(),
      items: try container.decodeIfPresent(WireChanges.self, forKey: .items) ?? WireChanges())
  }
}

extension WireMessage: Codable
where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
  private enum Key: String, CodingKey {
    case base, code, detail, edit, format, formatVersion, from, id, operations, query, sections
    case retryAfter, snapshots, stages, stream, to, type, version, views
  }

  /// The message's name in its `type` field.
  public var typeName: String {
    switch self {
    case .subscribe: "subscribe"
    case .reset: "reset"
    case .resumed: "resumed"
    case .batch: "batch"
    case .error: "error"
    case .edit: "edit"
    case .confirmed: "confirmed"
    case .refused: "refused"
    case .subscribeViews: "subscribeViews"
    case .views: "views"
    case .viewBatches: "viewBatches"
    }
  }

  /// Writes the message: `format`, `formatVersion` (``formatVersion``, or the number a ``WireCoder`` was
  /// made with) and `type`, then its own fields.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Key.self)
    var number = encoder.userInfo[WireMessageFormat.userInfoKey] as? Int ?? Self.formatVersion
    switch self {
    case .subscribeViews, .views, .viewBatches: number = Self.viewsFormat
    default: break
    }
    try container.encode(Self.formatName, forKey: .format)
    try container.encode(number, forKey: .formatVersion)
    try container.encode(typeName, forKey: .type)
    if number < 2 && ["edit", "confirmed", "refused"].contains(typeName) {
      throw EncodingError.invalidValue(
        typeName, .init(codingPath: encoder.codingPath, debugDescription: "\(typeName) needs format 2"))
    }
    switch self {
    case .subscribe(let stream, let from, let query):
      try container.encodeIfPresent(stream, forKey: .stream)
      try container.encodeIfPresent(from, forKey: .from)
      if let query {
        guard number >= 2 else {
          throw EncodingError.invalidValue(
            query, .init(codingPath: encoder.codingPath, debugDescription: "a query needs format 2"))
        }
        try container.encode(query, forKey: .query)
      }
    case .reset(let stream, let version, let snapshot):
      try container.encode(stream, forKey: .stream)
      try container.encode(version, forKey: .version)
      try container.encode(snapshot, forKey: .sections)
    case .resumed(let stream, let version):
      try container.encode(stream, forKey: .stream)
      try container.encode(version, forKey: .version)
    case .batch(let batch):
      try container.encode(batch.from, forKey: .from)
      try container.encode(batch.to, forKey: .to)
      try container.encode(batch.stages, forKey: .stages)
    case .error(let error):
      try container.encode(error.code.rawValue, forKey: .code)
      try container.encode(error.detail, forKey: .detail)
      try container.encodeIfPresent(error.retryAfter.map(Self.milliseconds), forKey: .retryAfter)
    case .edit(let edit):
      try container.encode(edit.id, forKey: .id)
      try container.encode(edit.operations, forKey: .operations)
      try container.encodeIfPresent(edit.base, forKey: .base)
    case .confirmed(let edit, let version):
      try container.encode(edit, forKey: .edit)
      try container.encode(version, forKey: .version)
    case .subscribeViews(let views, let stream, let from):
      // A view of the whole scope is written as `{}`: a dictionary of optionals would drop it.
      try container.encode(views.mapValues { ViewRequest(query: $0) }, forKey: .views)
      try container.encodeIfPresent(stream, forKey: .stream)
      try container.encodeIfPresent(from, forKey: .from)
    case .views(let stream, let version, let snapshots):
      try container.encode(stream, forKey: .stream)
      try container.encode(version, forKey: .version)
      try container.encode(snapshots.mapValues(\.sections), forKey: .snapshots)
    case .viewBatches(let from, let to, let batches):
      try container.encode(from, forKey: .from)
      try container.encode(to, forKey: .to)
      try container.encode(batches.mapValues(\.stages), forKey: .stages)
    case .refused(let edit, let error):
      try container.encode(edit, forKey: .edit)
      try container.encode(error.code.rawValue, forKey: .code)
      try container.encode(error.detail, forKey: .detail)
    }
  }

  /// Reads a message of format 1, 2 or 3 (the views' messages need 3). Another format or format number throws ``WireError`` with
  /// ``WireError/Code-swift.struct/unsupportedFormat``; a reset whose sections hold duplicate ids throws
  /// one with ``WireError/Code-swift.struct/duplicateID``; anything else wrong (a format 1 subscribe with
  /// a `query` too) is a `DecodingError`.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: Key.self)
    let format = try container.decode(String.self, forKey: .format)
    let number = try container.decode(Int.self, forKey: .formatVersion)
    let readable = Self.readableFormatVersions
    guard format == Self.formatName, readable.contains(number) else {
      throw WireError(
        .unsupportedFormat,
        "\(format) \(number); this receiver reads \(Self.formatName) \(readable.lowerBound) to \(readable.upperBound)"
      )
    }
    (decoder.userInfo[WireMessageFormat.userInfoKey] as? WireMessageFormat)?.number = number
    switch try container.decode(String.self, forKey: .type) {
    case "subscribe":
      if number < 2 && container.contains(.query) {
        throw DecodingError.dataCorruptedError(
          forKey: .query, in: container, debugDescription: "a query needs formatVersion 2")
      }
      let from = try container.decodeIfPresent(Int.self, forKey: .from)
      if let from, from < 0 {
        throw DecodingError.dataCorruptedError(
          forKey: .from, in: container, debugDescription: "from is a version, 0 or more; \(from) is not")
      }
      self = .subscribe(
        stream: try container.decodeIfPresent(String.self, forKey: .stream),
        from: from,
        query: try container.decodeIfPresent(WireQueryRequest.self, forKey: .query))
    case "reset":
      let sections = try container.decode([Section].self, forKey: .sections)
      let snapshot: Snapshot<Section>
      do { snapshot = try Snapshot(sections) } catch { throw WireError(.duplicateID, "reset: \(error)") }
      self = .reset(
        stream: try container.decode(String.self, forKey: .stream),
        version: try container.decode(Int.self, forKey: .version), snapshot: snapshot)
    case "resumed":
      self = .resumed(
        stream: try container.decode(String.self, forKey: .stream),
        version: try container.decode(Int.self, forKey: .version))
    case "batch":
      self = .batch(
        WireBatch(
          from: try container.decode(Int.self, forKey: .from),
          to: try container.decode(Int.self, forKey: .to),
          stages: try container.decode([WireStage<Section>].self, forKey: .stages)))
    case "error":
      self = .error(try Self.error(in: container))
    case "edit" where number >= 2:
      self = .edit(
        WireEdit(
          id: try container.decode(String.self, forKey: .id),
          operations: try container.decode([WireOperation<Section>].self, forKey: .operations),
          base: try container.decodeIfPresent(Int.self, forKey: .base)))
    case "confirmed" where number >= 2:
      self = .confirmed(
        edit: try container.decode(String.self, forKey: .edit),
        version: try container.decode(Int.self, forKey: .version))
    case "refused" where number >= 2:
      self = .refused(
        edit: try container.decode(String.self, forKey: .edit), error: try Self.error(in: container))
    case "subscribeViews" where number >= 3:
      let from = try container.decodeIfPresent(Int.self, forKey: .from)
      if let from, from < 0 {
        throw DecodingError.dataCorruptedError(
          forKey: .from, in: container, debugDescription: "from is a version, 0 or more; \(from) is not")
      }
      self = .subscribeViews(
        try container.decode([String: ViewRequest].self, forKey: .views).mapValues(\.query),
        stream: try container.decodeIfPresent(String.self, forKey: .stream), from: from)
    case "views" where number >= 3:
      var snapshots: [String: Snapshot<Section>] = [:]
      for (name, sections) in try container.decode([String: [Section]].self, forKey: .snapshots) {
        do { snapshots[name] = try Snapshot(sections) } catch {
          throw WireError(.duplicateID, "views: \(name): \(error)")
        }
      }
      self = .views(
        stream: try container.decode(String.self, forKey: .stream),
        version: try container.decode(Int.self, forKey: .version), snapshots: snapshots)
    case "viewBatches" where number >= 3:
      let (from, to) = (
        try container.decode(Int.self, forKey: .from), try container.decode(Int.self, forKey: .to)
      )
      let stages = try container.decode([String: [WireStage<Section>]].self, forKey: .stages)
      self = .viewBatches(
        from: from, to: to, batches: stages.mapValues { WireBatch(from: from, to: to, stages: $0) })
    case let other:
      throw DecodingError.dataCorruptedError(
        forKey: .type, in: container, debugDescription: "unknown message type \(other) in format \(number)")
    }
  }

  /// The `code`, `detail` and `retryAfter` of an error or a refusal.
  private static func error(in container: KeyedDecodingContainer<Key>) throws -> WireError {
    let retryAfter = try container.decodeIfPresent(Double.self, forKey: .retryAfter)
    if let retryAfter, !(retryAfter >= 0 && retryAfter < 1e9) {
      throw WireError(.malformed, "retryAfter \(retryAfter) is not a number of seconds")
    }
    return WireError(
      WireError.Code(rawValue: try container.decode(String.self, forKey: .code)),
      try container.decode(String.self, forKey: .detail),
      retryAfter: retryAfter.map(Self.milliseconds))
  }

  /// Seconds rounded to the millisecond: `1.25`.
  private static func milliseconds(_ seconds: Double) -> Double { (seconds * 1_000).rounded() / 1_000 }
}

/// One view of a ``WireMessage/subscribeViews(_:)``: `{"query": …}`, or `{}` for the whole scope.
struct ViewRequest: Codable {
  var query: WireQueryRequest?
}
