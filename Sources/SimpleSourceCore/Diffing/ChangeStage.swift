// One stage of a changeset: the changes to perform together and the data to hold while performing them.

/// One batch of changes that a list view performs in one `performBatchUpdates` call.
///
/// Positions follow UIKit's coordinate rules (R1–R3 of its batch-update rules): deletes, move sources
/// and updates are positions *before* the stage; inserts and move destinations are positions *after* it.
/// ``state`` is what the view's data source must hold during the stage (S5): set it inside the update
/// block, before making the calls.
///
/// A ``Changeset`` never produces an empty stage.
public struct ChangeStage<Section: SectionType>: Sendable {
  /// What a stage does. Stages appear in the order of the cases.
  public enum Kind: Hashable, Sendable {
    /// Refreshes changed items and sections in place: only ``ChangeList/updates``, at positions that
    /// are the same before and after the stage. The shape does not change (S1 stage 1).
    case refresh
    /// Deletes, inserts and moves of sections and items that can share one batch: all of them when no
    /// moved section has item changes of its own (R28), or two of the three groups below.
    case structure
    /// Deletes of sections and of items in surviving sections (S1 stage 2).
    case deletes
    /// Inserts and moves of sections, no item changes (S1 stage 3).
    case sectionInsertsAndMoves
    /// Inserts and moves of items, within and across sections, no section changes (S1 stage 4).
    case itemInsertsAndMoves
  }

  /// What this stage does.
  public let kind: Kind
  /// The section changes of this stage, in this stage's coordinates.
  public let sectionChanges: ChangeList<Section.ID, Int>
  /// The item changes of this stage, in this stage's coordinates.
  public let itemChanges: ChangeList<Section.Item.ID, ItemPosition>
  /// The state the view's data source must hold during this stage: the state after it. Look items up in it
  /// by id; `state.sections` is the list (O(*n*) the first time for a stage derived from the mutation log).
  public let state: Snapshot<Section>

  @inlinable
  init(
    kind: Kind, sectionChanges: ChangeList<Section.ID, Int>,
    itemChanges: ChangeList<Section.Item.ID, ItemPosition>, data: [Section]
  ) {
    self.init(
      kind: kind, sectionChanges: sectionChanges, itemChanges: itemChanges,
      state: Snapshot(trustedLazily: data))
  }

  @inlinable
  init(
    kind: Kind, sectionChanges: ChangeList<Section.ID, Int>,
    itemChanges: ChangeList<Section.Item.ID, ItemPosition>, state: Snapshot<Section>
  ) {
    self.kind = kind
    self.sectionChanges = sectionChanges
    self.itemChanges = itemChanges
    self.state = state
  }

  /// Whether the stage has no change (a ``Changeset`` never holds such a stage).
  public var isEmpty: Bool { sectionChanges.isEmpty && itemChanges.isEmpty }
}
