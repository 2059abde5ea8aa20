// A batch as it crosses the wire: its versions and stages, with the contents a receiver needs to apply it.

public import SimpleSourceCore

/// An ``UpdateBatch`` in the form it crosses the wire: its versions and its stages, each change named by
/// id and position, with the content of every inserted or refreshed section and item, so a receiver
/// applies it to the snapshot it holds without the sender's.
///
/// The wire format article (<doc:WireFormat>) specifies its JSON form.
///
/// ```swift
/// let message = WireMessage<Section<String, Task>>.batch(WireBatch(batch))
/// let bytes = try WireCoder().encode(message)
/// ```
public struct WireBatch<Section: SectionType>: Sendable {
  /// The version the receiver must hold.
  public var from: Int
  /// The version the batch leads to.
  public var to: Int
  /// The stages, in order.
  @usableFromInline package var stages: [WireStage<Section>]

  /// Creates a batch from its parts.
  @inlinable package init(from: Int, to: Int, stages: [WireStage<Section>]) {
    self.from = from
    self.to = to
    self.stages = stages
  }

  /// The wire form of `batch`.
  /// - Complexity: O(*k* log *n*) for *k* changes, plus the size of inserted sections.
  @inlinable public init(_ batch: UpdateBatch<Section>) {
    self.init(from: batch.fromNumber, to: batch.toNumber, stages: batch.changeset.stages.map(WireStage.init))
  }

  /// Applies the batch to `snapshot`, the receiver's state at ``from``, and returns the state at ``to``
  /// with the ids of the items it changed.
  ///
  /// Every change is checked against what `snapshot` holds before anything is made: a position out of
  /// range, a position that holds another id than the one named, an inserted id already present, two
  /// changes at one position, an empty stage. The first such problem throws; `snapshot` is a value and
  /// is never changed.
  ///
  /// - Returns: The new state; the ids of every item deleted, inserted, moved or refreshed; whether
  ///   sections were deleted, inserted or moved.
  /// - Throws: ``WireError`` naming the stage, the change and the position.
  /// - Complexity: O(*k* log *n*) for *k* changes, plus the size of sections inserted or moved; O(*n*)
  ///   once when `snapshot` was made from arrays.
  @inlinable public func applied(to snapshot: Snapshot<Section>) throws(WireError) -> (
    snapshot: Snapshot<Section>, touched: Set<Section.Item.ID>, reshaped: Bool
  ) {
    guard !stages.isEmpty else { throw WireError(.emptyBatch, "batch \(from)→\(to) has no stage") }
    do {
      return try snapshot.applyingChecked(stages.map(\.patch))
    } catch {
      throw WireError(error)
    }
  }

  /// The batch a receiver holding `snapshot` at `version` re-serves to its own subscribers: the state at
  /// ``to`` and the changeset to it, derived from the changed ids when the sections kept their order. Its
  /// versions are ``from`` and ``to`` of `version`'s counter: the receiver's, which numbers what it holds
  /// with the sender's numbers.
  ///
  /// An item the batch refreshes with content equal to what `snapshot` holds was refreshed by the sender
  /// on purpose (``BasicDataSource/refreshItems(_:)``), and stays a forced refresh; one whose content
  /// changed is an update of its own, not forced: a receiver that already shows that content (its own
  /// edit, echoed) then has nothing to refresh.
  ///
  /// - Throws: ``WireError/Code-swift.struct/versionMismatch`` when ``from`` is not `version`'s number or ``to``
  ///   is not after it, and every error of ``applied(to:)``.
  /// - Complexity: as ``applied(to:)``, then O(*k* log *n*) for the changeset; O(*n*) when sections moved.
  @inlinable public func update(from snapshot: Snapshot<Section>, at version: Version) throws(WireError)
    -> UpdateBatch<Section>
  {
    guard from == version.number else {
      throw WireError(.versionMismatch, "batch from \(from), receiver holds \(version)")
    }
    guard to > from else { throw WireError(.versionMismatch, "batch to \(to) is not after its from \(from)") }
    let (target, touched, reshaped) = try applied(to: snapshot)
    var refreshing = Set<Section.Item.ID>()
    for stage in stages {
      for update in stage.items.updates {
        let id = update.value.id
        if let before = snapshot.item(withID: id), let after = target.item(withID: id), before == after {
          refreshing.insert(id)
        }
      }
    }
    let changeset =
      reshaped
      ? nil : Changeset(from: snapshot, to: target, logged: touched, refreshing: refreshing)
    return UpdateBatch(
      from: from, to: to, of: version.counter,
      changeset: changeset ?? Changeset(from: snapshot, to: target, refreshing: refreshing))
  }
}

/// One stage of a ``WireBatch``: the changes of one ``ChangeStage``, in the same coordinates, with the
/// content of inserted and refreshed sections and items.
///
/// Deletes, move sources and updates are positions before the stage; inserts and move destinations are
/// positions after it (UIKit's rules R1–R3). An inserted section carries its items; a refreshed section
/// carries its own content with no items.
@usableFromInline
package struct WireStage<Section: SectionType>: Sendable {
  /// What the stage does.
  @usableFromInline package var kind: ChangeStage<Section>.Kind
  /// The section changes.
  @usableFromInline package var sections: WireChanges<Section.ID, Section, Int>
  /// The item changes.
  @usableFromInline package var items: WireChanges<Section.Item.ID, Section.Item, ItemPosition>

  /// Creates a stage from its parts.
  @inlinable package init(
    kind: ChangeStage<Section>.Kind, sections: WireChanges<Section.ID, Section, Int>,
    items: WireChanges<Section.Item.ID, Section.Item, ItemPosition>
  ) {
    self.kind = kind
    self.sections = sections
    self.items = items
  }

  /// The wire form of `stage`, its contents read from the stage's state.
  /// - Complexity: O(*k* log *n*) for *k* changes, plus the size of inserted sections.
  @inlinable package init(_ stage: ChangeStage<Section>) {
    // The model's patch of the stage, in the wire's shape: one reading of a stage's contents.
    let patch = StagePatch(stage)
    sections = WireChanges(
      deletes: patch.sectionDeletes.map { WireRemoval(id: $0.id, at: $0.at) },
      inserts: patch.sectionInserts.map { WirePlacement(at: $0.at, value: $0.section) },
      moves: patch.sectionMoves.map { WireMove(id: $0.id, from: $0.from, to: $0.to) },
      updates: patch.sectionUpdates.map { WirePlacement(at: $0.at, value: $0.section) })
    items = WireChanges(
      deletes: patch.itemDeletes.map { WireRemoval(id: $0.id, at: $0.at) },
      inserts: patch.itemInserts.map { WirePlacement(at: $0.at, value: $0.item) },
      moves: patch.itemMoves.map { WireMove(id: $0.id, from: $0.from, to: $0.to) },
      updates: patch.itemUpdates.map { WirePlacement(at: $0.at, value: $0.item) })
    kind = stage.kind
  }

  /// The stage as the model applies it, checked change by change.
  @inlinable var patch: StagePatch<Section> {
    StagePatch(
      sectionDeletes: sections.deletes.map { ($0.id, $0.at) },
      sectionInserts: sections.inserts.map { ($0.at, $0.value) },
      sectionMoves: sections.moves.map { ($0.id, $0.from, $0.to) },
      sectionUpdates: sections.updates.map { ($0.at, $0.value) },
      itemDeletes: items.deletes.map { ($0.id, $0.at) },
      itemInserts: items.inserts.map { ($0.at, $0.value) },
      itemMoves: items.moves.map { ($0.id, $0.from, $0.to) },
      itemUpdates: items.updates.map { ($0.at, $0.value) })
  }
}

/// The changes of one kind of element (sections or items) in a ``WireStage``.
@usableFromInline
package struct WireChanges<ID: Hashable & Sendable, Value: Sendable, Position: Hashable & Sendable>: Sendable
{
  /// Elements removed, by id and position before the stage.
  @usableFromInline package var deletes: [WireRemoval<ID, Position>]
  /// Elements added, with their content, at their position after the stage.
  @usableFromInline package var inserts: [WirePlacement<Value, Position>]
  /// Elements moved, by id, from their position before the stage to their position after it.
  @usableFromInline package var moves: [WireMove<ID, Position>]
  /// Elements refreshed, with their new content, at their position (the same before and after).
  @usableFromInline package var updates: [WirePlacement<Value, Position>]

  /// Creates a list of changes.
  @inlinable package init(
    deletes: [WireRemoval<ID, Position>] = [], inserts: [WirePlacement<Value, Position>] = [],
    moves: [WireMove<ID, Position>] = [], updates: [WirePlacement<Value, Position>] = []
  ) {
    self.deletes = deletes
    self.inserts = inserts
    self.moves = moves
    self.updates = updates
  }

  /// Whether there is no change.
  @inlinable package var isEmpty: Bool {
    deletes.isEmpty && inserts.isEmpty && moves.isEmpty && updates.isEmpty
  }
}

/// An element removed: its id and its position before the stage.
@usableFromInline
package struct WireRemoval<ID: Hashable & Sendable, Position: Hashable & Sendable>: Hashable, Sendable {
  /// The id, checked against what the receiver holds at ``at``.
  @usableFromInline package var id: ID
  /// The position before the stage.
  @usableFromInline package var at: Position

  /// Creates a removal.
  @inlinable package init(id: ID, at: Position) {
    self.id = id
    self.at = at
  }
}

/// An element moved: its id, its position before the stage and its position after it.
@usableFromInline
package struct WireMove<ID: Hashable & Sendable, Position: Hashable & Sendable>: Hashable, Sendable {
  /// The id, checked against what the receiver holds at ``from``.
  @usableFromInline package var id: ID
  /// The position before the stage.
  @usableFromInline package var from: Position
  /// The position after the stage.
  @usableFromInline package var to: Position

  /// Creates a move.
  @inlinable package init(id: ID, from: Position, to: Position) {
    self.id = id
    self.from = from
    self.to = to
  }
}

/// An element inserted or refreshed: its content and its position after the stage.
@usableFromInline
package struct WirePlacement<Value: Sendable, Position: Hashable & Sendable>: Sendable {
  /// The position after the stage (for a refresh, the same as before it).
  @usableFromInline package var at: Position
  /// The content: an item, or a section (with its items when inserted, without when refreshed).
  @usableFromInline package var value: Value

  /// Creates a placement.
  @inlinable package init(at: Position, value: Value) {
    self.at = at
    self.value = value
  }
}
