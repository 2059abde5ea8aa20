// The four kinds of change, each addressed by id and by the positions it has, grouped in a list.

/// A change that has a position before and after: a move, or a refresh of changed content.
///
/// `Position` is `Int` for sections and ``ItemPosition`` for items. Deletes and inserts have one
/// position only: ``ChangeList/Removal`` and ``ChangeList/Insertion``.
public struct Change<ID: Hashable & Sendable, Position: Hashable & Sendable>: Hashable, Sendable {
  /// The id of the section or item that changed.
  public var id: ID
  /// Where it was before the change.
  public var from: Position
  /// Where it is after the change.
  public var to: Position

  /// Creates a change.
  @inlinable
  package init(id: ID, from: Position, to: Position) {
    self.id = id
    self.from = from
    self.to = to
  }
}

extension Change: CustomStringConvertible {
  /// `id from → to`.
  public var description: String { "\(id) \(from) → \(to)" }
}

/// Deletes, inserts, moves and updates of one kind of element (sections or items).
///
/// Each list is sorted: deletes by ``Removal/from``, inserts by ``Insertion/to``, moves and updates by
/// ``Change/to`` (updates inside a ``ChangeStage`` by ``Change/from``, which equals `to` there).
public struct ChangeList<ID: Hashable & Sendable, Position: Hashable & Sendable & Comparable>: Hashable,
  Sendable
{
  /// An element removed: its id and its position before the change.
  public struct Removal: Hashable, Sendable, CustomStringConvertible {
    /// The id of the section or item removed.
    public var id: ID
    /// Where it was before the change.
    public var from: Position

    /// Creates a removal.
    @inlinable
    package init(id: ID, from: Position) {
      self.id = id
      self.from = from
    }

    /// `id at from`.
    public var description: String { "\(id) at \(from)" }
  }

  /// An element added: its id and its position after the change.
  public struct Insertion: Hashable, Sendable, CustomStringConvertible {
    /// The id of the section or item added.
    public var id: ID
    /// Where it is after the change.
    public var to: Position

    /// Creates an insertion.
    @inlinable
    package init(id: ID, to: Position) {
      self.id = id
      self.to = to
    }

    /// `id at to`.
    public var description: String { "\(id) at \(to)" }
  }

  /// Elements removed.
  public var deletes: [Removal]
  /// Elements added.
  public var inserts: [Insertion]
  /// Elements moved explicitly (the minimal set; others shift implicitly).
  public var moves: [Change<ID, Position>]
  /// Elements whose content changed and that must be refreshed.
  public var updates: [Change<ID, Position>]

  /// Creates a list.
  @inlinable
  package init(
    deletes: [Removal] = [], inserts: [Insertion] = [],
    moves: [Change<ID, Position>] = [], updates: [Change<ID, Position>] = []
  ) {
    self.deletes = deletes
    self.inserts = inserts
    self.moves = moves
    self.updates = updates
  }

  /// Whether there is no change of any kind.
  @inlinable
  public var isEmpty: Bool { deletes.isEmpty && inserts.isEmpty && moves.isEmpty && updates.isEmpty }

  /// Whether there are deletes, inserts or moves (anything that changes the shape).
  @inlinable
  package var hasStructuralChanges: Bool { !deletes.isEmpty || !inserts.isEmpty || !moves.isEmpty }

  /// The ids of the deletes, inserts and moves: the elements whose place changes.
  /// - Complexity: O(deletes + inserts + moves).
  @inlinable
  package var structuralIDs: Set<ID> {
    var ids = Set<ID>(minimumCapacity: deletes.count + inserts.count + moves.count)
    for change in deletes { ids.insert(change.id) }
    for change in inserts { ids.insert(change.id) }
    for change in moves { ids.insert(change.id) }
    return ids
  }

  /// The total number of changes.
  @inlinable
  public var count: Int { deletes.count + inserts.count + moves.count + updates.count }
}

/// A move or refresh of a section, addressed by id and section index.
@usableFromInline package typealias SectionChange<ID: Hashable & Sendable> = Change<ID, Int>
/// A move or refresh of an item, addressed by id and ``ItemPosition``.
@usableFromInline package typealias ItemChange<ID: Hashable & Sendable> = Change<ID, ItemPosition>

extension ChangeList {
  /// The ids of every element the list changes: deleted, inserted, moved or refreshed.
  /// - Complexity: O(*k*) for *k* changes.
  @inlinable
  public var ids: [ID] {
    var ids: [ID] = []
    ids.reserveCapacity(count)
    for change in deletes { ids.append(change.id) }
    for change in inserts { ids.append(change.id) }
    for change in moves { ids.append(change.id) }
    for change in updates { ids.append(change.id) }
    return ids
  }
}

extension ChangeList {
  /// The same changes, every position transformed by `transform` (which must keep their order).
  /// - Complexity: O(*k*) for *k* changes.
  @inlinable
  func mapPositions(_ transform: (Position) -> Position) -> ChangeList {
    ChangeList(
      deletes: deletes.map { Removal(id: $0.id, from: transform($0.from)) },
      inserts: inserts.map { Insertion(id: $0.id, to: transform($0.to)) },
      moves: moves.map { Change(id: $0.id, from: transform($0.from), to: transform($0.to)) },
      updates: updates.map { Change(id: $0.id, from: transform($0.from), to: transform($0.to)) })
  }
}

extension ChangeList: CustomStringConvertible {
  /// The changes by id, in the order UIKit applies them: `delete grace at [0, 0], insert bob at [1, 2],
  /// move alice [0, 1] → [1, 0], update carol [0, 2] → [0, 2]`; `no change` when empty.
  /// - Complexity: O(*k*) in the number of changes.
  public var description: String {
    let parts =
      deletes.map { "delete \($0)" } + inserts.map { "insert \($0)" } + moves.map { "move \($0)" }
      + updates.map { "update \($0)" }
    return parts.isEmpty ? "no change" : parts.joined(separator: ", ")
  }
}
