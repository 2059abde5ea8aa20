// A JSON Merge Patch (RFC 7396) of one item: the fields a client changed, applied to the item's current
// Codable form wherever it is applied, so a concurrent change to another field survives.

import Foundation
public import SimpleSourceCore

/// The fields of one item a client changes, as a JSON Merge Patch (RFC 7396): what ``WireOperation/patch(_:_:)``
/// carries.
///
/// A patch names only what changed. It is applied to the item's *current* `Codable` form where it is made:
/// on the server, to the item as the source holds it when the edit's turn comes; on the client, to the
/// item as each newer server state shows it (the edit is applied again on top while it is pending). So a
/// patch of `stage` keeps a concurrent change to `valueCents` by another writer, where a
/// ``WireOperation/replace(_:)`` with the client's copy of the whole item would revert it.
///
/// The rules are RFC 7396's: an object patches an object member by member; a member whose value is `null`
/// is removed; any other value (a string, a number, an array, `true`) replaces the member whole. The item
/// is encoded with `JSONEncoder` and the result decoded with `JSONDecoder`, with their default strategies,
/// so the names are the item's coding keys.
///
/// ```swift
/// let drag = WireOperation<Pipeline>.patch("deal-42", ["stage": "won"])
/// let both = WirePatch(from: before, to: after)   // the fields that differ, for a form
/// ```
///
/// A patch is refused, and the source left as it was, when the item is gone
/// (``DataSourceErrorCode/unknownItemID``), when the patched value is not a valid item
/// (``DataSourceErrorCode/invalidPatch``: a field of the wrong type, a required field removed, an item
/// type that is not `Codable`), or when it changes the item's id (``DataSourceErrorCode/changedItemID``).
public struct WirePatch: Hashable, Sendable, CustomStringConvertible {
  /// The patch document: an object patches the item's fields; anything else replaces the item whole.
  public var value: WireJSON

  /// Creates a patch from its document.
  public init(_ value: WireJSON) { self.value = value }

  /// Creates a patch of the fields named, each set to its value (`nil` removes an optional field).
  public init(_ fields: [String: WireJSON]) { self.value = .object(fields) }

  /// The patch that turns `old` into `new`: the members that differ, recursively in objects, `null` for a
  /// member `new` no longer has; an array or any other value that differs is given whole. Empty when they
  /// encode alike.
  /// - Throws: The encoder's error when either does not encode.
  /// - Complexity: O(*s*) in the size of their encodings.
  public init(from old: some Encodable, to new: some Encodable) throws {
    let (before, after) = (try Self.encoded(old), try Self.encoded(new))
    self.value = Self.difference(from: before, to: after) ?? .object([:])
  }

  /// Whether the patch changes nothing on any object (`{}`).
  public var isEmpty: Bool { value == .object([:]) }

  /// The patch in JSON, with sorted keys: `{"stage":"won"}`.
  public var description: String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return (try? encoder.encode(value)).flatMap { String(bytes: $0, encoding: .utf8) } ?? "\(value)"
  }

  /// `item` with the patch applied to its `Codable` form.
  /// - Throws: ``DataSourceError`` with ``DataSourceErrorCode/invalidPatch`` when the result does not
  ///   decode as an item (or the item type is not `Codable`), and ``DataSourceErrorCode/changedItemID``
  ///   when it has another id; `item` is a value and is never changed.
  /// - Complexity: O(*s*) in the size of the item's encoding and of the patch.
  public func applied<Item: Identifiable, SectionID: Hashable & Sendable>(
    to item: Item, in _: SectionID.Type = SectionID.self
  ) throws(DataSourceError<SectionID, Item.ID>) -> Item {
    func refused(_ detail: String) -> DataSourceError<SectionID, Item.ID> {
      DataSourceError(code: .invalidPatch, itemID: item.id, detail: detail)
    }
    guard let encodable = item as? any Encodable, let type = Item.self as? any Decodable.Type else {
      throw refused("the item type is not Codable")
    }
    let current: WireJSON
    do { current = try Self.encoded(encodable) } catch { throw refused("the item does not encode: \(error)") }
    let patched: Any
    do {
      patched = try JSONDecoder().decode(
        type, from: try JSONEncoder().encode(Self.merge(value, into: current)))
    } catch {
      throw refused("the patched value is not a valid item: \(Self.reason(error))")
    }
    guard let result = patched as? Item else { throw refused("the patched value is not an item") }
    guard result.id == item.id else {
      throw DataSourceError(
        code: .changedItemID, itemID: item.id, detail: "a patch does not change an item's id")
    }
    return result
  }

  // MARK: - RFC 7396

  /// `target` with `patch` merged into it (RFC 7396, section 2).
  /// - Complexity: O(*p*) in the size of the patch, besides copying `target`'s objects it goes into.
  public static func merge(_ patch: WireJSON, into target: WireJSON) -> WireJSON {
    guard case .object(let members) = patch else { return patch }
    var result: [String: WireJSON]
    if case .object(let existing) = target { result = existing } else { result = [:] }
    for (name, member) in members {
      if member == .null {
        result[name] = nil
      } else {
        result[name] = merge(member, into: result[name] ?? .null)
      }
    }
    return .object(result)
  }

  /// The merge patch from `old` to `new`; `nil` when they are equal.
  static func difference(from old: WireJSON, to new: WireJSON) -> WireJSON? {
    guard old != new else { return nil }
    guard case .object(let before) = old, case .object(let after) = new else {
      return new == .null ? nil : new
    }
    var members: [String: WireJSON] = [:]
    for (name, value) in after {
      if let previous = before[name] {
        // A member that became `null` encodes as removed: the patch says `null` too.
        if let change = difference(from: previous, to: value) {
          members[name] = change
        } else if value == .null, previous != .null {
          members[name] = .null
        }
      } else {
        members[name] = value
      }
    }
    for name in before.keys where after[name] == nil { members[name] = .null }
    return .object(members)
  }

  /// The JSON form of `value`, as `JSONEncoder` writes it.
  static func encoded(_ value: any Encodable) throws -> WireJSON {
    try JSONDecoder().decode(WireJSON.self, from: try JSONEncoder().encode(value))
  }

  /// What a decoding error says, without the coding path's type names.
  static func reason(_ error: any Error) -> String {
    switch error as? DecodingError {
    case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
      return "\(context.codingPath.map(\.stringValue).joined(separator: ".")): \(context.debugDescription)"
    case .keyNotFound(let key, _):
      return "\(key.stringValue) is required"
    default:
      return "\(error)"
    }
  }
}

extension WirePatch: Codable {
  /// Reads a patch document: any JSON value.
  public init(from decoder: any Decoder) throws { value = try WireJSON(from: decoder) }

  /// Writes the patch document.
  public func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}

extension WirePatch: ExpressibleByDictionaryLiteral {
  /// A patch of the fields named: `["stage": "won", "note": nil]`.
  public init(dictionaryLiteral elements: (String, WireJSON)...) {
    self.init(Dictionary(elements, uniquingKeysWith: { _, last in last }))
  }
}
