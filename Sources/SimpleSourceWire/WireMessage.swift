// The messages of the wire protocol and their JSON form: versioned, compact, and checked when read.

public import SimpleSourceCore

/// One message of the SimpleSource wire protocol, format `simplesource` number 1 (<doc:WireFormat>).
///
/// A client sends ``subscribe(stream:from:)``; the server answers ``reset(stream:version:snapshot:)`` or
/// ``resumed(stream:version:)``, then sends a ``batch(_:)`` for every change, and ``error(_:)`` for a
/// message it refused. Every message carries the format's name and number.
public enum WireMessage<Section: SectionType>: Sendable {
  /// A client asks for the stream; `stream` and `from` name the stream and version it holds, if any.
  case subscribe(stream: String?, from: Int?)
  /// The whole state at `version` of `stream`: the receiver drops what it holds and takes this.
  case reset(stream: String, version: Int, snapshot: Snapshot<Section>)
  /// The receiver keeps the state it holds at `version` of `stream`; batches from there follow.
  case resumed(stream: String, version: Int)
  /// The changes from the version the receiver holds to a later one.
  case batch(WireBatch<Section>)
  /// The sender refused a message; nothing changed on its side.
  case error(WireError)
}

extension WireMessage {
  /// The format name every message carries in its `format` field.
  public static var formatName: String { "simplesource" }
  /// The format number every message carries in its `formatVersion` field; a receiver refuses any other.
  public static var formatVersion: Int { 1 }
}

/// The format name every message carries.
@available(*, deprecated, renamed: "WireMessage.formatName")
public let wireFormatName = "simplesource"
/// The format number every message carries; a receiver refuses any other.
@available(*, deprecated, renamed: "WireMessage.formatVersion")
public let wireFormatVersion = 1

/// A position as it is written on the wire: a section index as a number, an item position as
/// `[section, item]`.
public protocol WireCoordinate: Hashable, Sendable {
  /// Writes the position.
  func encode(wire encoder: any Encoder) throws
  /// Reads a position; a negative index is read as written and refused when applied.
  init(wire decoder: any Decoder) throws
}

extension Int: WireCoordinate {
  /// Writes the index as a number.
  public func encode(wire encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(self)
  }

  /// Reads a number.
  public init(wire decoder: any Decoder) throws { self = try decoder.singleValueContainer().decode(Int.self) }
}

extension ItemPosition: WireCoordinate {
  /// Writes `[section, item]`.
  public func encode(wire encoder: any Encoder) throws {
    var container = encoder.unkeyedContainer()
    try container.encode(section)
    try container.encode(item)
  }

  /// Reads `[section, item]`: exactly two numbers.
  public init(wire decoder: any Decoder) throws {
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
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: PositionKey.self)
    try at.encode(wire: container.superEncoder(forKey: .at))
    try container.encode(id, forKey: .id)
  }

  /// Reads `{"at": position, "id": id}`.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: PositionKey.self)
    self.init(
      id: try container.decode(ID.self, forKey: .id),
      at: try Position(wire: container.superDecoder(forKey: .at)))
  }
}

extension WireMove: Codable where ID: Codable, Position: WireCoordinate {
  /// `{"from": position, "id": id, "to": position}`.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: PositionKey.self)
    try from.encode(wire: container.superEncoder(forKey: .from))
    try container.encode(id, forKey: .id)
    try to.encode(wire: container.superEncoder(forKey: .to))
  }

  /// Reads `{"from": position, "id": id, "to": position}`.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: PositionKey.self)
    self.init(
      id: try container.decode(ID.self, forKey: .id),
      from: try Position(wire: container.superDecoder(forKey: .from)),
      to: try Position(wire: container.superDecoder(forKey: .to)))
  }
}

extension WirePlacement: Codable where Value: Codable, Position: WireCoordinate {
  /// `{"at": position, "value": content}`.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: PositionKey.self)
    try at.encode(wire: container.superEncoder(forKey: .at))
    try container.encode(value, forKey: .value)
  }

  /// Reads `{"at": position, "value": content}`.
  public init(from decoder: any Decoder) throws {
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
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Key.self)
    if !deletes.isEmpty { try container.encode(deletes, forKey: .deletes) }
    if !inserts.isEmpty { try container.encode(inserts, forKey: .inserts) }
    if !moves.isEmpty { try container.encode(moves, forKey: .moves) }
    if !updates.isEmpty { try container.encode(updates, forKey: .updates) }
  }

  /// Reads the four lists, each empty when absent.
  public init(from decoder: any Decoder) throws {
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
  public var wireName: String {
    switch self {
    case .refresh: "refresh"
    case .structure: "structure"
    case .deletes: "deletes"
    case .sectionInsertsAndMoves: "sectionInsertsAndMoves"
    case .itemInsertsAndMoves: "itemInsertsAndMoves"
    }
  }

  /// The kind named `wireName`, or `nil`.
  public init?(wireName: String) {
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
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Key.self)
    if !items.isEmpty { try container.encode(items, forKey: .items) }
    try container.encode(kind.wireName, forKey: .kind)
    if !sections.isEmpty { try container.encode(sections, forKey: .sections) }
  }

  /// Reads a stage; an unknown kind is a `DecodingError`.
  public init(from decoder: any Decoder) throws {
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
    case code, detail, format, formatVersion, from, sections, stages, stream, to, type, version
  }

  /// The message's name in its `type` field.
  public var typeName: String {
    switch self {
    case .subscribe: "subscribe"
    case .reset: "reset"
    case .resumed: "resumed"
    case .batch: "batch"
    case .error: "error"
    }
  }

  /// Writes the message: `format`, `formatVersion` and `type`, then its own fields.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Key.self)
    try container.encode(Self.formatName, forKey: .format)
    try container.encode(Self.formatVersion, forKey: .formatVersion)
    try container.encode(typeName, forKey: .type)
    switch self {
    case .subscribe(let stream, let from):
      try container.encodeIfPresent(stream, forKey: .stream)
      try container.encodeIfPresent(from, forKey: .from)
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
    }
  }

  /// Reads a message. Another format or format number throws ``WireError`` with
  /// ``WireError/Code-swift.struct/unsupportedFormat``; a reset whose sections hold duplicate ids throws
  /// one with ``WireError/Code-swift.struct/duplicateID``; anything else wrong is a `DecodingError`.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: Key.self)
    let format = try container.decode(String.self, forKey: .format)
    let number = try container.decode(Int.self, forKey: .formatVersion)
    guard format == Self.formatName, number == Self.formatVersion else {
      throw WireError(
        .unsupportedFormat,
        "\(format) \(number); this receiver reads \(Self.formatName) \(Self.formatVersion)")
    }
    switch try container.decode(String.self, forKey: .type) {
    case "subscribe":
      self = .subscribe(
        stream: try container.decodeIfPresent(String.self, forKey: .stream),
        from: try container.decodeIfPresent(Int.self, forKey: .from))
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
      self = .error(
        WireError(
          WireError.Code(rawValue: try container.decode(String.self, forKey: .code)),
          try container.decode(String.self, forKey: .detail)))
    case let other:
      throw DecodingError.dataCorruptedError(
        forKey: .type, in: container, debugDescription: "unknown message type \(other)")
    }
  }
}
