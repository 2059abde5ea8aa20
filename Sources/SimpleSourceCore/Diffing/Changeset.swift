// The diff between two snapshots: a summary by id and position, and the UIKit-valid stages that apply it.

/// The changes from one ``Snapshot`` to another, as a summary and as UIKit-valid stages.
///
/// `Changeset(from:to:)` is a pure, synchronous function. It gives two views of the same change:
///
/// - ``sectionChanges`` and ``itemChanges`` address every change by id and by its position in ``source``
///   (`from`) and ``target`` (`to`), for code that never draws a table: services, logs, tests.
/// - ``stages`` are the `performBatchUpdates` calls that take a list view from ``source`` to ``target``,
///   each with the data the view must hold during it. Applying them in order to ``source`` gives
///   ``target`` exactly, and each passes every rule of UIKit's batch updates (R1–R33).
///
/// What the stages promise:
///
/// - **Moves stay moves, and are minimal.** A section or item that survives in a surviving section is
///   moved, never deleted and inserted. In each surviving section the moved items are those arriving
///   from another section plus those outside a longest increasing subsequence of their old positions
///   (taken in new order); section moves likewise. Items whose old section is deleted or whose new
///   section is inserted are deleted and inserted instead, because UIKit cannot move them (R21, R22).
/// - **Exactly what changed is refreshed.** An item that survives and whose `==` is `false` is marked
///   once in a ``ChangeStage/Kind/refresh`` stage, at its old position while the list still has its old
///   shape, so that a reload or a reconfigure is legal even when the item also moves (R4, R5, R29). A
///   section whose ``SectionType/isContentEqual(to:)`` is `false` is refreshed there too.
/// - **As few stages as UIKit allows.** One ``ChangeStage/Kind/structure`` stage carries all deletes,
///   inserts and moves, unless a moved section also has item changes (R28). Then the deletes, the
///   section inserts and moves, and the item inserts and moves go in separate stages (S1, S4), except
///   that two of these groups share a ``ChangeStage/Kind/structure`` stage when the moved sections do
///   not make them conflict. Empty stages are left out.
/// - **Empty when nothing changed.** ``isEmpty`` is `true` and there are no stages.
///
/// The summary lists every element: items inside deleted sections appear in `itemChanges.deletes`, items
/// of inserted sections in `itemChanges.inserts`; an item that UIKit must delete and insert (see above)
/// appears in both. The stages leave out item changes inside deleted or inserted sections (R27).
///
/// ```swift
/// let changeset = Changeset(from: old, to: new)
/// for stage in changeset.stages {
///   tableView.performBatchUpdates {
///     dataSource.sections = stage.state.sections
///     tableView.apply(stage.calls())
///   }
/// }
/// ```
///
/// - Complexity: O(*n* + *m* log *m*) for *n* items, where *m* ≤ *n* is the number of surviving items in
///   one section (the longest increasing subsequence; O(*m*) when their order is unchanged). Each old
///   item id is hashed once and each surviving item is compared with `==` once; nothing is hashed for
///   the new snapshot, whose index is already built. When both hold the same sections and item ids in
///   the same order (only contents changed), items pair by position: nothing is hashed or allocated per
///   item, and a section whose items share storage on both sides costs O(1).
public struct Changeset<Section: SectionType>: Sendable {
  /// The item type of the sections.
  public typealias Item = Section.Item

  /// The snapshot the changes start from.
  public let source: Snapshot<Section>
  /// The snapshot the changes end at.
  public let target: Snapshot<Section>
  /// The batches that take a list view from ``source`` to ``target``, in order; never empty ones.
  public let stages: [ChangeStage<Section>]
  /// Every section change, positioned in ``source`` (`from`) and ``target`` (`to`).
  public let sectionChanges: ChangeList<Section.ID, Int>
  /// Every item change, positioned in ``source`` (`from`) and ``target`` (`to`).
  public let itemChanges: ChangeList<Item.ID, ItemPosition>
  /// The ids the caller asked to refresh although `==` saw no change (see ``init(from:to:refreshing:)``).
  public let forcedRefreshes: Set<Item.ID>

  /// Computes the changes from `source` to `target`.
  ///
  /// - Parameters:
  ///   - source: The snapshot before.
  ///   - target: The snapshot after.
  ///   - refreshing: Items to refresh even though `==` says their content is unchanged (the role of
  ///     `reconfigureItems` for content that `==` does not see). Ids that are not carried from `source`
  ///     to `target` are ignored.
  /// - Complexity: O(*n* + *m* log *m*); see ``Changeset``. A non-empty `refreshing` adds one hash per
  ///   surviving item.
  @inlinable
  public init(from source: Snapshot<Section>, to target: Snapshot<Section>, refreshing: Set<Item.ID> = []) {
    var planner = ChangesetPlanner(source: source, target: target, refreshing: refreshing)
    planner.matchSections()
    if !planner.matchItemsInPlace() {
      planner.matchItems()
      planner.findMoves()
    }
    self.init(source: source, target: target, planner: planner, refreshing: refreshing)
  }

  /// Whether nothing changed: no stages, and empty summaries.
  @inlinable
  public var isEmpty: Bool { stages.isEmpty }
}

extension Changeset: CustomStringConvertible {
  /// What changed, by id: `sections: insert S at 1; items: delete grace at [0, 0], …; refreshed: carol`.
  /// - Complexity: O(*k*) in the number of changes.
  public var description: String {
    var parts: [String] = []
    if !sectionChanges.isEmpty { parts.append("sections: \(sectionChanges)") }
    if !itemChanges.isEmpty { parts.append("items: \(itemChanges)") }
    if !forcedRefreshes.isEmpty {
      parts.append("refreshed: \(forcedRefreshes.map { "\($0)" }.sorted().joined(separator: ", "))")
    }
    return parts.isEmpty ? "no change" : parts.joined(separator: "; ")
  }
}
