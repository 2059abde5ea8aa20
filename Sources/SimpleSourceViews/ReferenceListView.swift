// A headless list view that applies batch updates with UIKit's exact semantics and reports violations.

public import SimpleSourceCore

/// A headless list view that applies batch updates the way `UITableView` and `UICollectionView` do, and
/// throws a ``ListViewError`` naming the rule (``BatchRule``) where UIKit would raise an
/// exception or show wrong or stale cells.
///
/// It holds sections of cells. Each cell has an identity (``Cell/serial``) that survives moves, the id of
/// the item it shows and the item content it was configured with, so a test can see that a moved item
/// kept its cell and that a changed item got a fresh or reconfigured one.
///
/// ```swift
/// var view = ReferenceListView(old.sections)
/// try view.apply(Changeset(from: old, to: new))   // throws on any UIKit rule violation
/// #expect(view.warnings.isEmpty)
/// ```
///
/// The simulation follows UIKit's validation order (§8): reloads are decomposed into a delete and an
/// adjusted insert (R4), then deletes, inserts and moves are checked for range and conflicts (R11–R28),
/// then counts (R8, R9), then the implicit mapping (R7) carries cells to their new positions and the
/// result is compared with the data source (R31, R32). Warnings (R25 for sections, R27, R30, R33, and
/// R5 for a reconfigure mixed with structural changes) are collected in ``warnings``.
///
/// A value type: a batch that throws leaves the view exactly as it was.
public struct ReferenceListView<Section: SectionType>: Sendable {
  /// The item type.
  public typealias Item = Section.Item

  /// One cell on screen.
  public struct Cell: Sendable {
    /// The cell's identity: the same number while UIKit keeps the same cell (moves, reconfigures).
    public let serial: Int
    /// The id of the item the cell shows.
    package let itemID: Item.ID
    /// The item content the cell was last configured with.
    public internal(set) var item: Item
  }

  /// One section on screen, with its header content and cells.
  public struct SectionView: Sendable {
    /// The section's identity on screen: the same number while UIKit keeps the section (moves).
    public let serial: Int
    /// The id of the section shown.
    public let id: Section.ID
    /// The section content (header and footer) it was last configured with. Its `items` are stale.
    public internal(set) var section: Section
    /// The cells, in order.
    public internal(set) var cells: [Cell]
  }

  /// The sections on screen.
  public private(set) var sections: [SectionView] = []
  /// Warnings collected from every batch so far.
  public private(set) var warnings: [ListViewWarning] = []
  /// The number of batches performed.
  public private(set) var batchCount = 0
  private var nextSerial = 0

  /// Creates a view showing `data`, as after `reloadData()`.
  public init(_ data: [Section] = []) { reloadData(data) }

  /// Creates a view showing `snapshot`.
  public init(_ snapshot: Snapshot<Section>) { self.init(snapshot.sections) }

  /// Discards every cell and shows `data` with new cells, as `reloadData()` does.
  public mutating func reloadData(_ data: [Section]) {
    sections = data.map { makeSectionView($0) }
  }

  /// The section ids on screen.
  package var sectionIDs: [Section.ID] { sections.map(\.id) }
  /// The item ids on screen, per section.
  public var itemIDs: [[Item.ID]] { sections.map { $0.cells.map(\.itemID) } }

  /// The cell at `position`.
  public func cell(at position: ItemPosition) -> Cell { sections[position.section].cells[position.item] }

  /// Whether the screen shows exactly `data`: the same section ids, item ids, order, section content and
  /// item content.
  public func shows(_ data: [Section]) -> Bool {
    guard sections.count == data.count else { return false }
    for (view, section) in zip(sections, data) {
      guard view.id == section.id, view.section.isContentEqual(to: section),
        view.cells.count == section.items.count
      else { return false }
      for (cell, item) in zip(view.cells, section.items) where cell.itemID != item.id || cell.item != item {
        return false
      }
    }
    return true
  }

  /// Performs every stage of `changeset` in order, each as one batch with its data.
  /// - Throws: ``ListViewError`` for the first stage UIKit would reject; earlier stages stay applied.
  public mutating func apply(_ changeset: Changeset<Section>, refreshing style: RefreshStyle = .reload)
    throws(ListViewError)
  {
    for stage in changeset.stages {
      try performBatchUpdates(
        stage.calls(refreshing: style), data: stage.state.sections,
        requestedRefreshes: changeset.forcedRefreshes)
    }
  }

  /// Performs one stage as one batch with its data.
  public mutating func apply(_ stage: ChangeStage<Section>, refreshing style: RefreshStyle = .reload)
    throws(ListViewError)
  {
    try performBatchUpdates(stage.calls(refreshing: style), data: stage.state.sections)
  }

  /// Performs one batch: `data` is what the data source holds once the update block has run (R10).
  ///
  /// - Parameters:
  ///   - batch: The UIKit calls.
  ///   - data: The data source's state after the batch.
  ///   - requestedRefreshes: Items whose refresh was asked for although their content is equal (a
  ///     `Changeset.forcedRefreshes`); refreshing them is not reported as needless (R33).
  /// - Throws: ``ListViewError`` naming the first rule broken, in UIKit's validation order; the view is
  ///   left unchanged.
  public mutating func performBatchUpdates(
    _ batch: StageCalls, data: [Section], requestedRefreshes: Set<Item.ID> = []
  ) throws(ListViewError) {
    var simulation = BatchSimulation(
      before: sections, batch: batch, after: data, nextSerial: nextSerial,
      requestedRefreshes: requestedRefreshes)
    try simulation.run()
    sections = simulation.result
    nextSerial = simulation.nextSerial
    warnings.append(contentsOf: simulation.warnings)
    batchCount += 1
  }

  mutating func makeSectionView(_ section: Section) -> SectionView {
    let cells = section.items.map { item in
      defer { nextSerial += 1 }
      return Cell(serial: nextSerial, itemID: item.id, item: item)
    }
    defer { nextSerial += 1 }
    return SectionView(serial: nextSerial, id: section.id, section: section, cells: cells)
  }

  /// Moves a cell as the user's drag does (interactive reordering): the view moves it itself, before its
  /// data source hears of the move. `destination` is the cell's position after the move.
  /// - Throws: ``ListViewError`` citing R16 when a position is out of range; the view is unchanged.
  package mutating func moveCellInteractively(from source: ItemPosition, to destination: ItemPosition)
    throws(ListViewError)
  {
    guard sections.indices.contains(source.section),
      sections[source.section].cells.indices.contains(source.item)
    else {
      throw ListViewError(.r16, "attempt to move item \(source), which does not exist", positions: [source])
    }
    guard sections.indices.contains(destination.section) else {
      throw ListViewError(
        .r16, "attempt to move item to \(destination), which does not exist", positions: [destination])
    }
    // The room in the destination section once the cell has left its place.
    let room = sections[destination.section].cells.count - (source.section == destination.section ? 1 : 0)
    guard (0...room).contains(destination.item) else {
      throw ListViewError(
        .r16, "attempt to move item to \(destination), which does not exist", positions: [destination])
    }
    let cell = sections[source.section].cells.remove(at: source.item)
    sections[destination.section].cells.insert(cell, at: destination.item)
  }
}
