// One change addressed by id and by position, and the four kinds of change grouped in a list.

/// One change, addressed both by id and by position.
///
/// `Position` is `Int` for sections and ``ItemPosition`` for items. Which positions are set depends on the
/// kind of change: a delete has only ``from``, an insert only ``to``, a move and an update both.
public struct Change<ID: Hashable & Sendable, Position: Hashable & Sendable>: Hashable, Sendable {
  /// The id of the section or item that changed.
  public var id: ID
  /// Where it was before the change; `nil` for an insert.
  public var from: Position?
  /// Where it is after the change; `nil` for a delete.
  public var to: Position?

  /// Creates a change.
  @inlinable
  public init(id: ID, from: Position?, to: Position?) {
    self.id = id
    self.from = from
    self.to = to
  }
}

extension Change: CustomStringConvertible {
  /// `id from → to`, with `-` for a missing position.
  public var description: String {
    "\(id) \(from.map { "\($0)" } ?? "-")→\(to.map { "\($0)" } ?? "-")"
  }
}

/// Deletes, inserts, moves and updates of one kind of element (sections or items).
///
/// Each list is sorted: deletes by ``Change/from``, inserts, moves and updates by ``Change/to``
/// (updates inside a ``ChangeStage`` by ``Change/from``, which equals `to` there).
public struct ChangeList<ID: Hashable & Sendable, Position: Hashable & Sendable & Comparable>: Hashable,
  Sendable
{
  /// Elements removed; each has `from` only.
  public var deletes: [Change<ID, Position>]
  /// Elements added; each has `to` only.
  public var inserts: [Change<ID, Position>]
  /// Elements moved explicitly (the minimal set; others shift implicitly); each has `from` and `to`.
  public var moves: [Change<ID, Position>]
  /// Elements whose content changed and that must be refreshed; each has `from` and `to`.
  public var updates: [Change<ID, Position>]

  /// Creates a list.
  @inlinable
  public init(
    deletes: [Change<ID, Position>] = [], inserts: [Change<ID, Position>] = [],
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
  public var hasStructuralChanges: Bool { !deletes.isEmpty || !inserts.isEmpty || !moves.isEmpty }

  /// The ids of the deletes, inserts and moves: the elements whose place changes.
  /// - Complexity: O(deletes + inserts + moves).
  @inlinable
  package var structuralIDs: Set<ID> {
    var ids = Set<ID>(minimumCapacity: deletes.count + inserts.count + moves.count)
    for list in [deletes, inserts, moves] {
      for change in list { ids.insert(change.id) }
    }
    return ids
  }

  /// The total number of changes.
  @inlinable
  public var count: Int { deletes.count + inserts.count + moves.count + updates.count }
}

/// A change of a section, addressed by id and section index.
public typealias SectionChange<ID: Hashable & Sendable> = Change<ID, Int>
/// A change of an item, addressed by id and ``ItemPosition``.
public typealias ItemChange<ID: Hashable & Sendable> = Change<ID, ItemPosition>
