// The UIKit calls of one stage, made inside one performBatchUpdates block, and how a ChangeStage becomes them.

public import SimpleSourceCore

/// The calls a list view makes inside one `performBatchUpdates` block, in UIKit's vocabulary.
///
/// Lists are arrays, not sets, so that a checker can see duplicates (R25). Build one from a stage with
/// ``ChangeStage/calls(refreshing:)``.
public struct StageCalls: Hashable, Sendable, CustomStringConvertible {
  /// A move from a position before the batch to a position after it (R3).
  public struct Move<Position: Hashable & Sendable>: Hashable, Sendable {
    /// The position before the batch.
    public var from: Position
    /// The position after the batch.
    public var to: Position
    /// Creates a move.
    public init(from: Position, to: Position) {
      self.from = from
      self.to = to
    }
  }

  /// `deleteSections`, at before-batch indices.
  public var deleteSections: [Int]
  /// `insertSections`, at after-batch indices.
  public var insertSections: [Int]
  /// `reloadSections`, at before-batch indices.
  public var reloadSections: [Int]
  /// `moveSection(_:toSection:)` calls.
  public var moveSections: [Move<Int>]
  /// Sections whose header and footer views are configured again in place, at before-batch indices.
  ///
  /// This is not a UIKit update item: the view layer re-configures the visible supplementary views of
  /// these sections (the header counterpart of `reconfigureItems`, R5), so their cells are kept.
  public var reconfigureSections: [Int]
  /// `deleteItems`/`deleteRows`, at before-batch positions.
  public var deleteItems: [ItemPosition]
  /// `insertItems`/`insertRows`, at after-batch positions.
  public var insertItems: [ItemPosition]
  /// `reloadItems`/`reloadRows`, at before-batch positions.
  public var reloadItems: [ItemPosition]
  /// `reconfigureItems`/`reconfigureRows` (iOS 15), at before-batch positions (R5).
  public var reconfigureItems: [ItemPosition]
  /// `moveItem(at:to:)`/`moveRow(at:to:)` calls.
  public var moveItems: [Move<ItemPosition>]

  /// Creates a batch; every list defaults to empty.
  package init(
    deleteSections: [Int] = [], insertSections: [Int] = [], reloadSections: [Int] = [],
    moveSections: [Move<Int>] = [], reconfigureSections: [Int] = [], deleteItems: [ItemPosition] = [],
    insertItems: [ItemPosition] = [],
    reloadItems: [ItemPosition] = [], reconfigureItems: [ItemPosition] = [],
    moveItems: [Move<ItemPosition>] = []
  ) {
    self.deleteSections = deleteSections
    self.insertSections = insertSections
    self.reloadSections = reloadSections
    self.moveSections = moveSections
    self.reconfigureSections = reconfigureSections
    self.deleteItems = deleteItems
    self.insertItems = insertItems
    self.reloadItems = reloadItems
    self.reconfigureItems = reconfigureItems
    self.moveItems = moveItems
  }

  /// Whether the batch makes no call.
  public var isEmpty: Bool {
    deleteSections.isEmpty && insertSections.isEmpty && reloadSections.isEmpty && moveSections.isEmpty
      && reconfigureSections.isEmpty && deleteItems.isEmpty && insertItems.isEmpty && reloadItems.isEmpty
      && reconfigureItems.isEmpty
      && moveItems.isEmpty
  }

  /// The calls, one per line part, for logs and test failures.
  public var description: String {
    var parts: [String] = []
    func add<T>(_ name: String, _ values: [T], _ show: (T) -> String) {
      if !values.isEmpty { parts.append("\(name) " + values.map(show).joined(separator: ", ")) }
    }
    add("deleteSections", deleteSections) { "\($0)" }
    add("insertSections", insertSections) { "\($0)" }
    add("reloadSections", reloadSections) { "\($0)" }
    add("moveSections", moveSections) { "\($0.from)→\($0.to)" }
    add("reconfigureSections", reconfigureSections) { "\($0)" }
    add("deleteItems", deleteItems) { "\($0)" }
    add("insertItems", insertItems) { "\($0)" }
    add("reloadItems", reloadItems) { "\($0)" }
    add("reconfigureItems", reconfigureItems) { "\($0)" }
    add("moveItems", moveItems) { "\($0.from)→\($0.to)" }
    return parts.isEmpty ? "(no calls)" : parts.joined(separator: "; ")
  }
}

/// How a list view refreshes an item whose content changed.
public enum RefreshStyle: Hashable, Sendable {
  /// `reloadItems` and `reloadSections`: fresh cells, decomposed by UIKit into a delete and an insert
  /// (R4). A section reload also gives every cell of the section a fresh one.
  case reload
  /// `reconfigureItems` (iOS 15 and later): the existing cell is configured again (R5); a section's
  /// header and footer views are configured again in place (``StageCalls/reconfigureSections``).
  case reconfigure
}

extension ChangeStage {
  /// The UIKit calls that perform this stage.
  ///
  /// With ``RefreshStyle/reload``, a section whose own content changed is reloaded, and item refreshes
  /// inside it are left out because the section reload already gives its items fresh cells (R27). With
  /// ``RefreshStyle/reconfigure`` its header and footer are reconfigured and its cells kept.
  ///
  /// - Parameter style: How changed items are refreshed.
  /// - Returns: The calls, with every position in the coordinates UIKit expects.
  public func calls(refreshing style: RefreshStyle = .reload) -> StageCalls {
    let refreshedSections = sectionChanges.updates.map(\.from)
    let reloaded = style == .reload ? Set(refreshedSections) : []
    let refreshed = itemChanges.updates.map(\.from).filter { !reloaded.contains($0.section) }
    return StageCalls(
      deleteSections: sectionChanges.deletes.map(\.from),
      insertSections: sectionChanges.inserts.map(\.to),
      reloadSections: style == .reload ? refreshedSections : [],
      moveSections: sectionChanges.moves.map { StageCalls.Move(from: $0.from, to: $0.to) },
      reconfigureSections: style == .reconfigure ? refreshedSections : [],
      deleteItems: itemChanges.deletes.map(\.from),
      insertItems: itemChanges.inserts.map(\.to),
      reloadItems: style == .reload ? refreshed : [],
      reconfigureItems: style == .reconfigure ? refreshed : [],
      moveItems: itemChanges.moves.map { StageCalls.Move(from: $0.from, to: $0.to) }
    )
  }
}
