// Batch messages written straight to bytes: the JSON `WireMessage.encode(to:)` gives through a sorted-key
// `JSONEncoder`, without a container per field, and each item's JSON made once per batch for every view.

package import Foundation
package import SimpleSourceCore

/// The JSON of values by key, each encoded once: the items of one batch, which every view of the batch
/// that shows them writes with the same bytes (a batch's item with a given id has one content).
package final class WireValueCache<Key: Hashable & Sendable>: Sendable {
  private let values = Locked<[Key: [UInt8]]>([:])

  /// An empty cache.
  package init() {}

  /// The bytes of `key`, made with `encode` the first time. Two writers racing may both encode; the
  /// first stored is the one both return.
  /// - Complexity: O(1) when held; `encode` otherwise.
  package func bytes(of key: Key, encode: () -> [UInt8]) -> [UInt8] {
    if let held = values.withLock({ $0[key] }) { return held }
    let made = encode()
    return values.withLock { values in
      if let stored = values[key] { return stored }
      values[key] = made
      return made
    }
  }
}

/// Writes `batch` and `viewBatches` messages. The bytes are those of ``WireCoder``'s `JSONEncoder`
/// (sorted keys, no whitespace, slashes unescaped; the names of views in `String` order, as Foundation
/// sorts them on Linux): the envelope, positions and the common ids (`String`, `Int`) are written
/// directly, and sections, items and other ids through a `JSONEncoder` of their own, each item once per
/// ``WireValueCache`` given.
///
/// An item or section is encoded on its own, so its `encode(to:)` sees an empty `codingPath`.
package struct WireBatchWriter<Section: SectionType>
where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
  /// The bytes written so far.
  private var bytes: [UInt8] = []
  /// The format number written in the message (`viewBatches` always writes 3).
  private let formatVersion: Int
  /// The items' JSON, shared by the writers of one batch; `nil` encodes every item where it is written.
  private let items: WireValueCache<Section.Item.ID>?
  /// The encoder of values, made for the first value that needs it.
  private var encoder: JSONEncoder?

  /// A writer of messages in format `formatVersion`, taking items' JSON from `items` when given.
  private init(formatVersion: Int, items: WireValueCache<Section.Item.ID>?) {
    self.formatVersion = formatVersion
    self.items = items
  }

  /// The stages of a batch as the writer reads them.
  package enum Stages {
    /// The wire's form, as a receiver decodes it or a sender made it.
    case wire([WireStage<Section>])
    /// A changeset's stages, read from each stage's state as they are written: no wire form is made, and
    /// an item the cache holds is not looked up.
    case changeset(Changeset<Section>)
  }

  /// The `batch` message from `from` to `to` of `stages`.
  /// - Complexity: O(size of the message), less the items `items` holds; reading a changeset adds
  ///   O(log *n*) per section or item written.
  package static func batch(
    from: Int, to: Int, _ stages: Stages, formatVersion: Int, items: WireValueCache<Section.Item.ID>? = nil
  ) -> Data {
    var writer = Self(formatVersion: formatVersion, items: items)
    writer.envelope(formatVersion: formatVersion, from: from) { $0.stages(stages) }
    writer.tail(to: to, type: "batch")
    return Data(writer.bytes)
  }

  /// The `viewBatches` message from `from` to `to` of `batches`, by view name.
  /// - Complexity: O(*v* log *v*) for *v* views, plus ``batch(from:to:_:formatVersion:items:)``'s for each.
  package static func viewBatches(
    from: Int, to: Int, _ batches: [String: Stages], items: WireValueCache<Section.Item.ID>? = nil
  ) -> Data {
    let format = WireMessage<Section>.viewsFormat
    var writer = Self(formatVersion: format, items: items)
    writer.envelope(formatVersion: format, from: from) { writer in
      writer.byte("{")
      for (index, name) in batches.keys.sorted().enumerated() {
        if index > 0 { writer.byte(",") }
        writer.string(name)
        writer.byte(":")
        if let stages = batches[name] { writer.stages(stages) }
      }
      writer.byte("}")
    }
    writer.tail(to: to, type: "viewBatches")
    return Data(writer.bytes)
  }

  /// `{"format":…,"formatVersion":…,"from":…,"stages":` then the stages, as the sorted keys put them.
  private mutating func envelope(formatVersion: Int, from: Int, stages: (inout Self) -> Void) {
    bytes.reserveCapacity(256)
    literal(#"{"format":"#)
    string(WireMessage<Section>.formatName)
    literal(#","formatVersion":"#)
    integer(formatVersion)
    literal(#","from":"#)
    integer(from)
    literal(#","stages":"#)
    stages(&self)
  }

  /// `,"to":…,"type":…}`.
  private mutating func tail(to: Int, type: String) {
    literal(#","to":"#)
    integer(to)
    literal(#","type":"#)
    string(type)
    byte("}")
  }

  /// `[{"items":{…},"kind":…,"sections":{…}},…]`, the changes left out when empty.
  private mutating func stages(_ stages: Stages) {
    byte("[")
    switch stages {
    case .wire(let stages):
      for (index, stage) in stages.enumerated() {
        if index > 0 { byte(",") }
        self.stage(stage)
      }
    case .changeset(let changeset):
      for (index, stage) in changeset.stages.enumerated() {
        if index > 0 { byte(",") }
        self.stage(stage)
      }
    }
    byte("]")
  }

  private mutating func stage(_ stage: WireStage<Section>) {
    let (items, sections) = (stage.items, stage.sections)
    self.stage(kind: stage.kind, items: !items.isEmpty, sections: !sections.isEmpty) { writer, isItems in
      guard isItems else {
        return writer.changes(
          sections, id: { $0.id($1) }, value: { $0.value($1) }, position: { $0.integer($1) })
      }
      writer.changes(items, id: { $0.id($1) }, value: { $0.item($1) }, position: { $0.position($1) })
    }
  }

  private mutating func stage(_ stage: ChangeStage<Section>) {
    let (items, sections, state) = (stage.itemChanges, stage.sectionChanges, stage.state)
    self.stage(kind: stage.kind, items: !items.isEmpty, sections: !sections.isEmpty) { writer, isItems in
      guard isItems else {
        return writer.changes(
          sections, id: { $0.id($1) }, position: { $0.integer($1) },
          inserted: { writer, _, at in writer.value(state.section(at: at)) },
          refreshed: { writer, _, at in
            // A refreshed section is written with its own content only.
            var content = state.sectionContent(at: at)
            content.items = []
            writer.value(content)
          })
      }
      let content = { (writer: inout Self, id: Section.Item.ID, at: ItemPosition) in
        writer.item(id: id) { state[at] }
      }
      writer.changes(
        items, id: { $0.id($1) }, position: { $0.position($1) }, inserted: content, refreshed: content)
    }
  }

  /// `{"items":…,"kind":…,"sections":…}`, `changes` writing the items' changes (`true`) or the sections'.
  private mutating func stage(
    kind: ChangeStage<Section>.Kind, items: Bool, sections: Bool, changes: (inout Self, Bool) -> Void
  ) {
    byte("{")
    if items {
      literal(#""items":"#)
      changes(&self, true)
      byte(",")
    }
    literal(#""kind":"#)
    string(kind.wireName)
    if sections {
      literal(#","sections":"#)
      changes(&self, false)
    }
    byte("}")
  }

  /// The wire's changes of one kind of element.
  private mutating func changes<ID, Value, Position>(
    _ changes: WireChanges<ID, Value, Position>, id: (inout Self, ID) -> Void,
    value: (inout Self, Value) -> Void, position: (inout Self, Position) -> Void
  ) {
    let counts = (changes.deletes.count, changes.inserts.count, changes.moves.count, changes.updates.count)
    lists(counts) { writer, list, index in
      switch list {
      case .deletes:
        let removal = changes.deletes[index]
        writer.removal(at: removal.at, id: removal.id, position: position, writeID: id)
      case .inserts:
        let placement = changes.inserts[index]
        writer.placement(at: placement.at, position: position) { value(&$0, placement.value) }
      case .moves:
        let move = changes.moves[index]
        writer.move(from: move.from, id: move.id, to: move.to, position: position, writeID: id)
      case .updates:
        let placement = changes.updates[index]
        writer.placement(at: placement.at, position: position) { value(&$0, placement.value) }
      }
    }
  }

  /// A changeset stage's changes of one kind of element, the content of each placed one written by
  /// `inserted` or `refreshed` from its id and position after the stage.
  private mutating func changes<ID, Position>(
    _ changes: ChangeList<ID, Position>, id: (inout Self, ID) -> Void,
    position: (inout Self, Position) -> Void,
    inserted: (inout Self, ID, Position) -> Void, refreshed: (inout Self, ID, Position) -> Void
  ) {
    let counts = (changes.deletes.count, changes.inserts.count, changes.moves.count, changes.updates.count)
    lists(counts) { writer, list, index in
      switch list {
      case .deletes:
        let removal = changes.deletes[index]
        writer.removal(at: removal.from, id: removal.id, position: position, writeID: id)
      case .inserts:
        let insertion = changes.inserts[index]
        writer.placement(at: insertion.to, position: position) { inserted(&$0, insertion.id, insertion.to) }
      case .moves:
        let move = changes.moves[index]
        writer.move(from: move.from, id: move.id, to: move.to, position: position, writeID: id)
      case .updates:
        // A refresh is written at its position before the stage, which is the same after it.
        let update = changes.updates[index]
        writer.placement(at: update.to, position: position) { refreshed(&$0, update.id, update.to) }
      }
    }
  }

  /// The four lists of a stage's changes of one kind of element.
  private enum List { case deletes, inserts, moves, updates }

  /// `{"deletes":[…],"inserts":[…],"moves":[…],"updates":[…]}` of lists of `counts` elements, each left
  /// out when empty; `element` writes the element at an index of a list.
  private mutating func lists(
    _ counts: (deletes: Int, inserts: Int, moves: Int, updates: Int),
    _ element: (inout Self, List, Int) -> Void
  ) {
    var first = true
    func list(_ list: List, _ key: StaticString, _ count: Int, _ writer: inout Self) {
      guard count > 0 else { return }
      if !first { writer.byte(",") }
      first = false
      writer.literal(key)
      writer.byte("[")
      for index in 0..<count {
        if index > 0 { writer.byte(",") }
        element(&writer, list, index)
      }
      writer.byte("]")
    }
    byte("{")
    list(.deletes, #""deletes":"#, counts.deletes, &self)
    list(.inserts, #""inserts":"#, counts.inserts, &self)
    list(.moves, #""moves":"#, counts.moves, &self)
    list(.updates, #""updates":"#, counts.updates, &self)
    byte("}")
  }

  /// `{"at":…,"id":…}`.
  private mutating func removal<ID, Position>(
    at: Position, id: ID, position: (inout Self, Position) -> Void, writeID: (inout Self, ID) -> Void
  ) {
    literal(#"{"at":"#)
    position(&self, at)
    literal(#","id":"#)
    writeID(&self, id)
    byte("}")
  }

  /// `{"from":…,"id":…,"to":…}`.
  private mutating func move<ID, Position>(
    from: Position, id: ID, to: Position, position: (inout Self, Position) -> Void,
    writeID: (inout Self, ID) -> Void
  ) {
    literal(#"{"from":"#)
    position(&self, from)
    literal(#","id":"#)
    writeID(&self, id)
    literal(#","to":"#)
    position(&self, to)
    byte("}")
  }

  /// `{"at":…,"value":…}`.
  private mutating func placement<Position>(
    at: Position, position: (inout Self, Position) -> Void, value: (inout Self) -> Void
  ) {
    literal(#"{"at":"#)
    position(&self, at)
    literal(#","value":"#)
    value(&self)
    byte("}")
  }

  /// `[section,item]`.
  private mutating func position(_ position: ItemPosition) {
    byte("[")
    integer(position.section)
    byte(",")
    integer(position.item)
    byte("]")
  }

  /// An item, from the cache when there is one.
  private mutating func item(_ item: Section.Item) {
    self.item(id: item.id) { item }
  }

  /// The item of `id`, from the cache when there is one; `content` is read only when it is not held.
  private mutating func item(id: Section.Item.ID, content: () -> Section.Item) {
    guard let items else { return value(content()) }
    var encoder = self.encoder
    bytes.append(
      contentsOf: items.bytes(of: id) { Self.encoded(content(), with: &encoder, format: formatVersion) })
    self.encoder = encoder
  }

  /// An id: a string or a number directly, anything else through the encoder.
  private mutating func id(_ id: some Encodable) {
    switch id {
    case let text as String: string(text)
    case let number as Int: integer(number)
    default: value(id)
    }
  }

  /// A value, through the encoder.
  private mutating func value(_ value: some Encodable) {
    bytes.append(contentsOf: Self.encoded(value, with: &encoder, format: formatVersion))
  }

  /// `value`'s JSON, through `encoder` (made when `nil`), configured as ``WireCoder``'s for `format`.
  private static func encoded(_ value: some Encodable, with encoder: inout JSONEncoder?, format: Int)
    -> [UInt8]
  {
    let made =
      encoder
      ?? {
        let made = JSONEncoder()
        made.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        made.userInfo[WireMessageFormat.userInfoKey] = format
        return made
      }()
    encoder = made
    do {
      return Array(try made.encode(value))
    } catch {
      // Only the user's own `encode(to:)` can throw here.
      preconditionFailure("SimpleSource: a section or item failed to encode: \(error)")
    }
  }

  private mutating func byte(_ character: Unicode.Scalar) { bytes.append(UInt8(ascii: character)) }

  private mutating func literal(_ text: StaticString) {
    text.withUTF8Buffer { bytes.append(contentsOf: $0) }
  }

  /// `number` in decimal.
  private mutating func integer(_ number: Int) {
    if number < 0 { byte("-") }
    // `Int.min`'s magnitude fits a `UInt`, and the divisor never passes the magnitude.
    var magnitude = number.magnitude
    var divisor: UInt = 1
    while magnitude / divisor >= 10 { divisor *= 10 }
    repeat {
      bytes.append(UInt8(ascii: "0") + UInt8(magnitude / divisor))
      magnitude %= divisor
      divisor /= 10
    } while divisor > 0
  }

  /// `text` as a JSON string, escaped as `JSONEncoder` escapes it: `"` and `\`, control characters as
  /// `\b`, `\f`, `\n`, `\r`, `\t` or `\u00xx`; everything else, `/` included, as its UTF-8 bytes.
  private mutating func string(_ text: String) {
    byte("\"")
    func hex(_ digit: UInt8) -> UInt8 {
      digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
    }
    for unit in text.utf8 {
      switch unit {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"):
        bytes.append(UInt8(ascii: "\\"))
        bytes.append(unit)
      case 0x08: literal(#"\b"#)
      case 0x0C: literal(#"\f"#)
      case 0x0A: literal(#"\n"#)
      case 0x0D: literal(#"\r"#)
      case 0x09: literal(#"\t"#)
      case 0..<0x20:
        literal(#"\u00"#)
        bytes.append(hex(unit >> 4))
        bytes.append(hex(unit & 0xF))
      default: bytes.append(unit)
      }
    }
    byte("\"")
  }
}
