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
  package init(formatVersion: Int, items: WireValueCache<Section.Item.ID>? = nil) {
    self.formatVersion = formatVersion
    self.items = items
  }

  /// The `batch` message of `batch`.
  /// - Complexity: O(size of the message), less the items `items` holds.
  package static func batch(
    _ batch: WireBatch<Section>, formatVersion: Int, items: WireValueCache<Section.Item.ID>? = nil
  ) -> Data {
    var writer = Self(formatVersion: formatVersion, items: items)
    writer.envelope(formatVersion: formatVersion, from: batch.from) { $0.stages(batch.stages) }
    writer.tail(to: batch.to, type: "batch")
    return Data(writer.bytes)
  }

  /// The `viewBatches` message from `from` to `to` of `batches`, by view name.
  /// - Complexity: O(*v* log *v* + size of the message) for *v* views, less the items `items` holds.
  package static func viewBatches(
    from: Int, to: Int, _ batches: [String: [WireStage<Section>]],
    items: WireValueCache<Section.Item.ID>? = nil
  ) -> Data {
    let format = WireMessage<Section>.viewsFormat
    var writer = Self(formatVersion: format, items: items)
    writer.envelope(formatVersion: format, from: from) { writer in
      writer.byte("{")
      for (index, name) in batches.keys.sorted().enumerated() {
        if index > 0 { writer.byte(",") }
        writer.string(name)
        writer.byte(":")
        writer.stages(batches[name] ?? [])
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

  private mutating func stages(_ stages: [WireStage<Section>]) {
    byte("[")
    for (index, stage) in stages.enumerated() {
      if index > 0 { byte(",") }
      byte("{")
      if !stage.items.isEmpty {
        literal(#""items":"#)
        changes(stage.items, id: { $0.id($1) }, value: { $0.item($1) }, position: { $0.position($1) })
        byte(",")
      }
      literal(#""kind":"#)
      string(stage.kind.wireName)
      if !stage.sections.isEmpty {
        literal(#","sections":"#)
        changes(stage.sections, id: { $0.id($1) }, value: { $0.value($1) }, position: { $0.integer($1) })
      }
      byte("}")
    }
    byte("]")
  }

  /// `{"deletes":[…],"inserts":[…],"moves":[…],"updates":[…]}`, each left out when empty.
  private mutating func changes<ID, Value, Position>(
    _ changes: WireChanges<ID, Value, Position>, id: (inout Self, ID) -> Void,
    value: (inout Self, Value) -> Void, position: (inout Self, Position) -> Void
  ) {
    var first = true
    func key(_ name: StaticString, _ writer: inout Self) {
      if !first { writer.byte(",") }
      first = false
      writer.literal(name)
    }
    byte("{")
    if !changes.deletes.isEmpty {
      key(#""deletes":"#, &self)
      list(changes.deletes) { writer, removal in
        writer.literal(#"{"at":"#)
        position(&writer, removal.at)
        writer.literal(#","id":"#)
        id(&writer, removal.id)
        writer.byte("}")
      }
    }
    if !changes.inserts.isEmpty {
      key(#""inserts":"#, &self)
      list(changes.inserts) { $0.placement($1, value: value, position: position) }
    }
    if !changes.moves.isEmpty {
      key(#""moves":"#, &self)
      list(changes.moves) { writer, move in
        writer.literal(#"{"from":"#)
        position(&writer, move.from)
        writer.literal(#","id":"#)
        id(&writer, move.id)
        writer.literal(#","to":"#)
        position(&writer, move.to)
        writer.byte("}")
      }
    }
    if !changes.updates.isEmpty {
      key(#""updates":"#, &self)
      list(changes.updates) { $0.placement($1, value: value, position: position) }
    }
    byte("}")
  }

  /// `{"at":…,"value":…}`.
  private mutating func placement<Value, Position>(
    _ placement: WirePlacement<Value, Position>, value: (inout Self, Value) -> Void,
    position: (inout Self, Position) -> Void
  ) {
    literal(#"{"at":"#)
    position(&self, placement.at)
    literal(#","value":"#)
    value(&self, placement.value)
    byte("}")
  }

  private mutating func list<Element>(_ elements: [Element], _ write: (inout Self, Element) -> Void) {
    byte("[")
    for (index, element) in elements.enumerated() {
      if index > 0 { byte(",") }
      write(&self, element)
    }
    byte("]")
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
    guard let items else { return value(item) }
    var encoder = self.encoder
    bytes.append(
      contentsOf: items.bytes(of: item.id) { Self.encoded(item, with: &encoder, format: formatVersion) })
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
