// What a client asks a server to change: edits by ids, which mean the same on any state that holds those
// ids, so a client can show them at once and apply them again on top of the server's newer state.

import Foundation
public import SimpleSourceCore

/// One change a client asks for, by ids: the item edits of a ``Transaction``.
///
/// Operations name items and anchors by id, never by position, so one made against the state a client
/// showed applies to the server's newer state too (another writer's inserts do not shift it), and a
/// client applies it again on top of each state the server sends until the server answers (rebase).
public enum WireOperation<Section: SectionType>: Equatable, Sendable {
  /// The item type.
  public typealias Item = Section.Item

  /// Where inserted or moved items go.
  public enum Place: Hashable, Sendable {
    /// Right before the item with this id.
    case before(Item.ID)
    /// Right after the item with this id.
    case after(Item.ID)
    /// At the end of the section with this id.
    case end(of: Section.ID)
  }

  /// Inserts new items at `place`, in order.
  case insert([Item], Place)
  /// Replaces the item with the same id.
  case replace(Item)
  /// Deletes the items with these ids.
  case delete([Item.ID])
  /// Moves the item with this id to `place`.
  case move(Item.ID, Place)
  /// Changes the fields a ``WirePatch`` names of the item with this id, keeping the rest of its current
  /// content: a change another writer made to another field survives (see ``WirePatch``).
  case patch(Item.ID, WirePatch)
  /// Runs a named edit (``NamedEdit``): its body, on what the client shows and again on the server's
  /// current state, decides what changes.
  indirect case named(WireCall<Section>)

  /// Makes the operation in `transaction`, with a ``Transaction``'s own checks.
  /// - Throws: The ``DataSourceError`` of the edit (an unknown id or anchor, a duplicate id, a patch that
  ///   does not give a valid item); the transaction is left as it was.
  /// - Complexity: O(log *n*) per item inserted, replaced, deleted or moved; a patch adds O(*s*) in the
  ///   size of the item's encoding.
  @inlinable
  public func apply(to transaction: inout Transaction<Section>) throws(DataSourceError<Section.ID, Item.ID>) {
    switch self {
    case .insert(let items, .before(let anchor)): try transaction.insertItems(items, before: anchor)
    case .insert(let items, .after(let anchor)): try transaction.insertItems(items, after: anchor)
    case .insert(let items, .end(let section)): try transaction.appendItems(items, toSection: section)
    case .replace(let item): try transaction.replaceItem(item)
    case .delete(let ids): try transaction.deleteItems(ids)
    case .move(let id, .before(let anchor)): try transaction.moveItem(id, before: anchor)
    case .move(let id, .after(let anchor)): try transaction.moveItem(id, after: anchor)
    case .move(let id, .end(let section)): try transaction.moveItem(id, toSection: section)
    case .patch(let id, let patch):
      guard let current = transaction.snapshot.item(withID: id) else { throw .unknownItem(id) }
      try transaction.replaceItem(try patch.applied(to: current, in: Section.ID.self))
    case .named(let call):
      try call.run(on: &transaction)
    }
  }

  /// The ids of the items it edits, moves or inserts, and of its anchor item: what a server checks
  /// against a client's scope.
  package var itemIDs: [Item.ID] {
    func anchor(_ place: Place) -> [Item.ID] {
      switch place {
      case .before(let id), .after(let id): [id]
      case .end: []
      }
    }
    switch self {
    case .insert(let items, let place): return items.map { $0.id } + anchor(place)
    case .replace(let item): return [item.id]
    case .delete(let ids): return ids
    case .move(let id, let place): return [id] + anchor(place)
    case .patch(let id, _): return [id]
    case .named: return []
    }
  }

  /// The section it inserts or moves items to the end of, if its place is a section: what a server checks
  /// against a client's scope, beside its ``itemIDs``.
  package var placeSection: Section.ID? {
    switch self {
    case .insert(_, .end(let section)), .move(_, .end(let section)): section
    default: nil
    }
  }

  /// The items it writes (inserted or replaced): what a server checks against a client's scope. A
  /// patch's item is known only once it is applied to the current one: a server checks it then.
  public var writtenItems: [Item] {
    switch self {
    case .insert(let items, _): items
    case .replace(let item): [item]
    case .delete, .move, .patch, .named: []
    }
  }
}

/// A client's edit: the operations it asks for, made together (one version, or none), under an id the
/// client chose, unique among its edits, which the server's answer names.
public struct WireEdit<Section: SectionType>: Equatable, Sendable {
  /// The client's id of the edit; the server answers it once: the same edit sent again under it (a client
  /// resending after a reconnect) gets the same answer without being made again, and another edit under
  /// it is refused with ``WireError/Code-swift.struct/editIDReused``.
  public var id: String
  /// The operations, made in order as one transaction.
  public var operations: [WireOperation<Section>]
  /// The sender's version the client held when it made the edit (`nil`: it held none, or wrote a format
  /// without it). The server made nothing of it before that version, so a server that keeps answers from
  /// a version on knows, for an edit made at or after it, that an id it has no answer for was never made.
  public var base: Int?

  /// Creates an edit.
  /// - Parameter base: The sender's version the client held; see ``base``.
  public init(id: String, operations: [WireOperation<Section>], base: Int? = nil) {
    self.id = id
    self.operations = operations
    self.base = base
  }

  /// The ids its operations name (``WireOperation/itemIDs``): the items whose place or content it may
  /// change, and its anchors.
  package var itemIDs: Set<Section.Item.ID> { Set(operations.lazy.flatMap(\.itemIDs)) }

  /// Whether an operation runs a named edit: what it touches is known only once it runs.
  /// - Complexity: O(*k*) for *k* operations.
  @inlinable
  public var runsNamedEdits: Bool {
    operations.contains { if case .named = $0 { true } else { false } }
  }

  /// The edit with each named edit's body found in `edits` by name (the server's, or the client's own
  /// for edits restored from its store): a body it carried is replaced.
  /// - Throws: ``WireError/Code-swift.struct/invalidEdit`` for a name `edits` does not hold
  ///   (`unknownEdit`) or arguments that do not decode (`invalidArguments`).
  /// - Complexity: O(1) per operation, and the arguments' decoding when they came as JSON.
  @inlinable
  public func resolved(in edits: NamedEdits<Section>) throws(WireError) -> Self {
    guard runsNamedEdits else { return self }
    var copy = self
    var changed = false
    for index in operations.indices {
      guard case .named(let call) = operations[index] else { continue }
      let resolved = try call.resolved(in: edits)
      if resolved.changed {
        copy.operations[index] = .named(resolved.call)
        changed = true
      }
    }
    return changed ? copy : self
  }

  /// Makes every operation in `transaction`, in order.
  /// - Throws: The first operation's ``DataSourceError``; the caller drops the transaction.
  /// - Complexity: the sum of the operations'.
  @inlinable
  public func apply(to transaction: inout Transaction<Section>) throws(DataSourceError<
    Section.ID, Section.Item.ID
  >) {
    for operation in operations { try operation.apply(to: &transaction) }
  }
}

extension WireOperation: Codable
where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
  private enum Key: String, CodingKey {
    case after, arguments, before, id, ids, item, items, name, op, patch, section
  }

  /// `{"op": "insert", "items": […], "before" | "after": id | "section": id}`, `{"op": "replace", "item":
  /// …}`, `{"op": "delete", "ids": […]}`, `{"op": "move", "id": id, "before" | "after" | "section": …}`,
  /// `{"op": "patch", "id": id, "patch": {…}}`, `{"op": "named", "name": name, "arguments": …}`.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Key.self)
    func encode(_ place: Place) throws {
      switch place {
      case .before(let id): try container.encode(id, forKey: .before)
      case .after(let id): try container.encode(id, forKey: .after)
      case .end(let section): try container.encode(section, forKey: .section)
      }
    }
    switch self {
    case .insert(let items, let place):
      try container.encode("insert", forKey: .op)
      try container.encode(items, forKey: .items)
      try encode(place)
    case .replace(let item):
      try container.encode("replace", forKey: .op)
      try container.encode(item, forKey: .item)
    case .delete(let ids):
      try container.encode("delete", forKey: .op)
      try container.encode(ids, forKey: .ids)
    case .move(let id, let place):
      try container.encode("move", forKey: .op)
      try container.encode(id, forKey: .id)
      try encode(place)
    case .patch(let id, let patch):
      try container.encode("patch", forKey: .op)
      try container.encode(id, forKey: .id)
      try container.encode(patch, forKey: .patch)
    case .named(let call):
      guard let arguments = call.json else {
        throw EncodingError.invalidValue(
          call.name, EncodingError.Context(codingPath: [], debugDescription: "the arguments do not encode"))
      }
      try container.encode("named", forKey: .op)
      try container.encode(call.name, forKey: .name)
      try container.encode(arguments, forKey: .arguments)
    }
  }

  /// Reads an operation; an unknown `op`, or a place that is not exactly one of `before`, `after` and
  /// `section`, is a `DecodingError`.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: Key.self)
    func place() throws -> Place {
      let given = [Key.before, .after, .section].filter { container.contains($0) }
      guard given.count == 1 else {
        throw DecodingError.dataCorruptedError(
          forKey: .op, in: container, debugDescription: "a place is one of before, after and section")
      }
      switch given[0] {
      case .before: return .before(try container.decode(Item.ID.self, forKey: .before))
      case .after: return .after(try container.decode(Item.ID.self, forKey: .after))
      default: return .end(of: try container.decode(Section.ID.self, forKey: .section))
      }
    }
    switch try container.decode(String.self, forKey: .op) {
    case "insert": self = .insert(try container.decode([Item].self, forKey: .items), try place())
    case "replace": self = .replace(try container.decode(Item.self, forKey: .item))
    case "delete": self = .delete(try container.decode([Item.ID].self, forKey: .ids))
    case "move": self = .move(try container.decode(Item.ID.self, forKey: .id), try place())
    case "named":
      self = .named(
        WireCall(
          try container.decode(String.self, forKey: .name),
          arguments: try container.decodeIfPresent(WireJSON.self, forKey: .arguments) ?? .object([:])))
    case "patch":
      self = .patch(
        try container.decode(Item.ID.self, forKey: .id), try container.decode(WirePatch.self, forKey: .patch))
    case let other:
      throw DecodingError.dataCorruptedError(
        forKey: .op, in: container, debugDescription: "unknown operation \(other)")
    }
  }
}

extension WireEdit
where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
  /// What the edit asks for, as 16 hexadecimal digits: a 64-bit FNV-1a hash of its operations in the wire
  /// format's JSON with sorted keys (neither its id nor its ``base``, which a client may send anew). A
  /// resend of an edit has its fingerprint; another edit under the same id almost surely has another. A server records it
  /// beside an edit's answer, to tell a resend from an id used again (``recall(recorded:fingerprint:answersKeptFrom:)``).
  ///
  /// It is the same in every process that encodes the edit alike (the same item types and `Encodable`
  /// conformances, the same Foundation): instances that answer each other's resends should run such
  /// builds. Across a change of encoding, a resend of an edit answered before it is refused as reused, not
  /// made again; the client's state shows it was made.
  /// - Complexity: O(*s*) in the size of the edit's encoding.
  public var fingerprint: String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    // Encoding the wire format's own types cannot fail; an item whose encoding throws is hashed as none.
    return FNV1a64.hexadecimal(FNV1a64.hash((try? encoder.encode(operations)) ?? Data()))
  }

  /// What a server that records its answers with its writes (in the same storage transaction) does with
  /// this edit: answer it with the version recorded under its id, make it, or refuse it as too old or as
  /// an id used again.
  ///
  /// A server that keeps the answers of every edit it made at version `horizon` or later, and none older,
  /// can tell an edit it never made from one whose answer it forgot by its ``base``: an edit is made at a
  /// version no older than its base, so one made at `horizon` or later with no recorded answer was never
  /// made. One made before `horizon` may have been, and is refused with
  /// ``WireError/Code-swift.struct/editExpired`` rather than made twice. An edit without a base is made
  /// when nothing is recorded (a client of an older format).
  ///
  /// An answer is this edit's only when the ``fingerprint`` recorded with it is this edit's: an edit that
  /// reuses the id of another (a client that counted its ids again after forgetting what it sent) is
  /// refused with ``WireError/Code-swift.struct/editIDReused``, never confirmed with the other's answer.
  /// - Parameters:
  ///   - recorded: The version recorded under this edit's id (and the client's scope), if any.
  ///   - fingerprint: The ``fingerprint`` recorded with it; `nil` when none was (an answer recorded by a
  ///     server that kept no fingerprints): then the recorded answer is trusted.
  ///   - horizon: The oldest version whose edits' answers the server keeps.
  /// - Returns: The version to answer with, or `nil`: make the edit, and record its answer and its
  ///   ``fingerprint`` with it.
  /// - Throws: ``WireError`` with ``WireError/Code-swift.struct/editExpired`` or
  ///   ``WireError/Code-swift.struct/editIDReused``.
  /// - Complexity: O(*s*) in the size of the edit when a fingerprint is recorded; O(1) otherwise.
  public func recall(recorded: Int?, fingerprint recordedFingerprint: String?, answersKeptFrom horizon: Int)
    throws(WireError) -> Int?
  {
    if let recorded {
      if let recordedFingerprint, recordedFingerprint != fingerprint { throw reused }
      return recorded
    }
    if let base, base < horizon {
      throw WireError(
        .editExpired,
        "edit \(id) was made at version \(base); answers are kept from version \(horizon), so whether it was made cannot be told"
      )
    }
    return nil
  }

  /// The refusal of an edit whose id names another edit already answered.
  package var reused: WireError {
    WireError(.editIDReused, "edit \(id) names another edit already answered: an id names one edit")
  }
}
