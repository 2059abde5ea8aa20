// A ListView for tests: a ReferenceListView with cell objects that reads its data source as UIKit would.

public import SimpleSource

/// A `ListView` backed by a `ReferenceListView`: every batch a view data source performs is checked
/// against UIKit's rules, and cells, headers and footers are dequeued and configured through the view
/// data source as UIKit does it.
///
/// ```swift
/// let host = ReferenceListViewHost<MySection>()
/// let factory = ViewFactory<MySection, ReferenceListViewHost<MySection>> { _, _ in "Cell" }
/// factory.registerCell(method: .class, reuseIdentifier: "Cell", in: host) { (cell: NameCell, item, _) in
///   cell.name = item.name
/// }
/// let dataSource = ListViewDataSource(view: host, factory: factory)
/// host.dataSource = dataSource
/// ```
///
/// What it asks, and when, follows UIKit:
/// - `reloadData()`: every cell, header and footer again.
/// - A batch: new cells for inserted and reloaded items, and new headers and footers for inserted and
///   reloaded sections, read after the update block has swapped the data. Reconfigured items get their
///   own cell again from the cell provider, at the before-batch path (R5); a different reuse identifier
///   there is an error, as in UIKit. Sections in `StageCalls.reconfigureSections` get their header
///   and footer configured again. Moved cells and sections keep what they show.
@MainActor
public final class ReferenceListViewHost<Section: SectionType>: ListView {
  /// The view's data source, as UIKit names it.
  public typealias DataSource = ListViewDataSource<Section, ReferenceListViewHost<Section>>
  /// The cells are reference views.
  public typealias Cell = ReferenceReusableView
  /// Headers and footers are reference views.
  public typealias SupplementaryView = ReferenceReusableView

  /// What a section's header or footer shows: a title, a view, both or neither.
  public struct Supplementary {
    /// The text title the data source gave.
    public var title: String?
    /// The view the data source gave.
    public var view: ReferenceReusableView?
  }

  /// The simulated view.
  public private(set) var reference = ReferenceListView<Section>()
  /// The data source the view asks, held weakly as UIKit holds it.
  public weak var dataSource: DataSource? {
    didSet { reloadData() }
  }
  /// Whether the view is in a window; set `false` to test the off-screen fallback.
  public var isOnScreen = true
  /// Every batch UIKit would have rejected, and every cell a reconfigure would have changed class. The
  /// view is reloaded after each, as a real app would have crashed.
  public private(set) var errors: [ListViewError] = []
  /// Drags begun and not dropped.
  private var drags = 0
  /// How many times `reloadData()` was called.
  public private(set) var reloadCount = 0
  /// How many batches were performed.
  public private(set) var batchCount = 0
  /// How many of the batches were animated.
  public private(set) var animatedBatchCount = 0
  /// Every batch performed, in order.
  public private(set) var batches: [StageCalls] = []
  /// The animation each animated operation got, in the order of ``batches`` and, inside a batch, in the
  /// order UIKit's calls are made (section deletes, inserts, reloads; item deletes, inserts, reloads).
  /// Moves and reconfigures take no animation and are not listed.
  public private(set) var animations: [AnimatedOperation] = []

  /// The selected cells, by the reference cell's serial: a selection moves with its cell, as in UIKit.
  private var selectedSerials: Set<Int> = []
  private var cellClasses: [String: ReferenceReusableView.Type] = [:]
  private var supplementaryClasses: [SupplementaryKind: [String: ReferenceReusableView.Type]] = [:]
  private var reusePool: [String: [ReferenceReusableView]] = [:]
  /// The cell object of each on-screen cell, by the reference cell's serial.
  private var cellObjects: [Int: ReferenceReusableView] = [:]
  /// Headers and footers of each on-screen section, by the reference section's serial.
  private var headers: [Int: Supplementary] = [:]
  private var footers: [Int: Supplementary] = [:]
  /// The cell a reconfigure is asking for, which the dequeue must return.
  private var reconfiguring: (cell: ReferenceReusableView, position: ItemPosition)?

  /// Creates an empty host.
  public init() {}

  // MARK: - What the screen shows

  /// The cell object at `position`.
  public func cell(at position: ItemPosition) -> ReferenceReusableView? {
    cellObjects[reference.cell(at: position).serial]
  }

  /// The header of the section at `index`.
  public func header(inSection index: Int) -> Supplementary {
    headers[reference.sections[index].serial] ?? .init()
  }

  /// The footer of the section at `index`.
  public func footer(inSection index: Int) -> Supplementary {
    footers[reference.sections[index].serial] ?? .init()
  }

  /// The number of cell objects alive: on screen plus waiting for reuse.
  package var cellObjectCount: Int { cellObjects.count + reusePool.values.reduce(0) { $0 + $1.count } }

  // MARK: - ListView

  /// Reads the data source again, with new cells, headers and footers.
  public func reloadData() {
    reloadCount += 1
    let data = dataSource?.sections ?? []
    reference.reloadData(data)
    selectedSerials = []
    recycleAll()
    refreshViews(newSectionsOnly: false)
  }

  /// Performs the batch like ``performBatchUpdates(_:animated:updateData:)``, recording the animation
  /// of each operation in ``animations``.
  public func performBatchUpdates(
    _ update: StageCalls, animations: ChangeAnimations, updateData: @escaping @MainActor () -> Void
  ) {
    let sectionOperations: [(AnimatedOperation.Kind, [Int], ListAnimation)] = [
      (.deleteSections, update.deleteSections, animations.deleteSections),
      (.insertSections, update.insertSections, animations.insertSections),
      (.reloadSections, update.reloadSections, animations.reloadSections),
    ]
    for (kind, sections, animation) in sectionOperations {
      for section in sections { self.animations.append(AnimatedOperation(kind, section: section, animation)) }
    }
    let itemOperations: [(AnimatedOperation.Kind, [ItemPosition], ListAnimation)] = [
      (.deleteItems, update.deleteItems, animations.deleteItems),
      (.insertItems, update.insertItems, animations.insertItems),
      (.reloadItems, update.reloadItems, animations.reloadItems),
    ]
    for (kind, positions, animation) in itemOperations {
      for position in positions { self.animations.append(AnimatedOperation(kind, item: position, animation)) }
    }
    performBatchUpdates(update, animated: true, updateData: updateData)
  }

  /// Swaps the data inside the batch, checks the batch against UIKit's rules, then dequeues what UIKit
  /// would ask for.
  public func performBatchUpdates(
    _ update: StageCalls, animated: Bool, updateData: @escaping @MainActor () -> Void
  ) {
    batchCount += 1
    batches.append(update)
    if animated { animatedBatchCount += 1 }
    let before = reference
    updateData()
    let data = dataSource?.sections ?? []
    do {
      reconfigureCells(update.reconfigureItems, before: before, data: data)
      try reference.performBatchUpdates(update, data: data)
    } catch {
      errors.append(error)
      reference.reloadData(data)
      recycleAll()
      refreshViews(newSectionsOnly: false)
      return
    }
    let reconfiguredSections = Set(update.reconfigureSections.map { before.sections[$0].serial })
    refreshViews(newSectionsOnly: true, reconfiguring: reconfiguredSections)
  }

  /// Remembers that `reuseIdentifier` makes instances of `cellClass`.
  /// - Precondition: `cellClass` is a ``ReferenceReusableView``.
  public func registerCell(_ method: ReferenceReuseMethod, cellClass: AnyClass, reuseIdentifier: String) {
    cellClasses[reuseIdentifier] = Self.viewType(cellClass)
  }

  /// A reused or new cell; during a reconfigure, the cell being reconfigured.
  public func dequeueCell(_ method: ReferenceReuseMethod, reuseIdentifier: String, at position: ItemPosition)
    -> ReferenceReusableView
  {
    if let (cell, reconfigured) = reconfiguring {
      reconfiguring = nil
      if cell.reuseIdentifier == reuseIdentifier {
        cell.dequeueCount += 1
        return cell
      }
      errors.append(
        ListViewError(
          .r5,
          "reconfigure of \(reconfigured) dequeued another cell: Dequeued reuse identifier: \(reuseIdentifier); "
            + "Original reuse identifier: \(cell.reuseIdentifier)", positions: [reconfigured]))
    }
    return dequeue(reuseIdentifier, pool: "cell", from: cellClasses[reuseIdentifier], what: "a cell")
  }

  /// Remembers that `reuseIdentifier` makes supplementary views of `viewClass` for `kind`.
  public func registerSupplementaryView(
    _ method: ReferenceReuseMethod, viewClass: AnyClass, kind: SupplementaryKind, reuseIdentifier: String
  ) {
    supplementaryClasses[kind, default: [:]][reuseIdentifier] = Self.viewType(viewClass)
  }

  /// A reused or new supplementary view.
  public func dequeueSupplementaryView(
    _ method: ReferenceReuseMethod, kind: SupplementaryKind, reuseIdentifier: String,
    at position: ItemPosition
  ) -> ReferenceReusableView {
    dequeue(
      reuseIdentifier, pool: kind.rawValue, from: supplementaryClasses[kind]?[reuseIdentifier],
      what: "a view of kind \(kind)")
  }

  // MARK: - The user

  /// Begins a drag, as the user's finger does (interactive reordering).
  public func beginInteractiveMove() {
    drags += 1
    dataSource?.beginInteractiveMove()
  }

  /// Drops the dragged item at `destination`: the view moves the cell itself, then tells its data source
  /// (`moveItemAt`), then ends the drag. A move the data source does not follow is recorded in ``errors``,
  /// and so is a call the view would not make: a drop with no drag begun, or of an item the data source
  /// says cannot move (the view moves nothing; the data source is not told).
  public func endInteractiveMove(movingItemAt source: ItemPosition, to destination: ItemPosition) {
    guard drags > 0 else {
      errors.append(ListViewError(.r31, "a drop with no drag begun (beginInteractiveMove()): nothing moved"))
      return
    }
    drags -= 1
    guard dataSource?.canMoveItem(at: source) ?? false else {
      errors.append(ListViewError(.r31, "a drop of the item at \(source), which the data source cannot move"))
      dataSource?.endInteractiveMove()
      return
    }
    do {
      try reference.moveCellInteractively(from: source, to: destination)
    } catch {
      errors.append(error)
      dataSource?.endInteractiveMove()
      return
    }
    dataSource?.moveItem(at: source, to: destination)
    if let data = dataSource?.sections, !reference.shows(data) {
      errors.append(
        ListViewError(.r31, "after the user's move the data source does not show what the view shows"))
    }
    dataSource?.endInteractiveMove()
  }

  /// The positions of the selected rows, in order.
  /// - Complexity: O(*n*) in the number of cells shown.
  public var selectedPositions: [ItemPosition] {
    reference.sections.enumerated().flatMap { sectionIndex, section in
      section.cells.enumerated().compactMap { itemIndex, cell in
        selectedSerials.contains(cell.serial) ? ItemPosition(section: sectionIndex, item: itemIndex) : nil
      }
    }
  }

  /// Whether the view shows a cell at `position`.
  public func shows(_ position: ItemPosition) -> Bool {
    reference.sections.indices.contains(position.section)
      && reference.sections[position.section].cells.indices.contains(position.item)
  }

  /// Taps the row at `position`, as the user does: the row is selected, the data source's selection
  /// closure runs, and the row is deselected if it says so. A position the view does not show (a batch
  /// just removed it) does nothing, as no finger can tap it.
  /// - Returns: What the closure said; `nil` when none ran.
  @discardableResult
  public func tap(at position: ItemPosition) -> SelectionBehavior? {
    guard shows(position) else { return nil }
    let serial = reference.cell(at: position).serial
    selectedSerials.insert(serial)
    let behavior = dataSource?.didSelectItem(at: position)
    if behavior == .deselect { selectedSerials.remove(serial) }
    return behavior
  }

  /// Taps the accessory button of the row at `position`.
  public func tapAccessory(at position: ItemPosition) {
    guard shows(position) else { return }
    dataSource?.accessoryTapped(at: position)
  }

  /// Swipes the row at `position` from `edge`: the actions it reveals, if any.
  public func swipe(_ edge: SwipeEdge, at position: ItemPosition) -> SwipeActions<Section.Item>? {
    guard shows(position) else { return nil }
    return dataSource?.swipeActions(edge, at: position)
  }

  /// Swipes the row at `position` from `edge` and chooses the action at `index`.
  /// - Returns: Whether the action was done (`false` also when there is no such action).
  public func performSwipeAction(_ index: Int, swiping edge: SwipeEdge, at position: ItemPosition) async
    -> Bool
  {
    guard let dataSource, let actions = swipe(edge, at: position)?.actions, actions.indices.contains(index)
    else { return false }
    return await dataSource.perform(actions[index], on: dataSource.item(at: position), at: position).value
  }

  /// Commits `action` on the row at `position`, as the user does with the editing control or a swipe to
  /// delete, and waits for the data source's closure. Rows that cannot be edited, or that offer another
  /// action, are left alone, as UIKit offers them no control.
  /// - Returns: Whether a closure ran.
  @discardableResult
  public func commitEdit(_ action: EditingAction, at position: ItemPosition) async -> Bool {
    guard shows(position), let dataSource, dataSource.canEditItem(at: position),
      dataSource.editingAction(at: position) == action,
      let task = dataSource.commitEdit(action, at: position)
    else { return false }
    await task.value
    return true
  }

  // MARK: - Dequeuing

  private static func viewType(_ viewClass: AnyClass) -> ReferenceReusableView.Type {
    guard let type = viewClass as? ReferenceReusableView.Type else {
      preconditionFailure("ReferenceListViewHost makes ReferenceReusableView subclasses, not \(viewClass)")
    }
    return type
  }

  private func dequeue(
    _ reuseIdentifier: String, pool: String, from type: ReferenceReusableView.Type?, what: String
  ) -> ReferenceReusableView {
    let key = pool + "/" + reuseIdentifier
    if let view = reusePool[key]?.popLast() {
      view.dequeueCount += 1
      return view
    }
    guard let type else {
      // UIKit's words; UIKit raises here too.
      preconditionFailure(
        "unable to dequeue \(what) with identifier \(reuseIdentifier) - must register a nib or a class for the identifier"
      )
    }
    let view = type.init()
    view.reuseIdentifier = reuseIdentifier
    view.reusePoolKey = key
    view.dequeueCount = 1
    return view
  }

  /// R5: the cell provider runs at once for each reconfigured item, at its before-batch path, against the
  /// data that was just swapped in; the dequeue must return the item's existing cell.
  private func reconfigureCells(
    _ positions: [ItemPosition], before: ReferenceListView<Section>, data: [Section]
  ) {
    guard let dataSource else { return }
    for position in positions {
      guard before.sections.indices.contains(position.section),
        before.sections[position.section].cells.indices.contains(position.item),
        data.indices.contains(position.section), data[position.section].items.indices.contains(position.item),
        let cell = cellObjects[before.cell(at: position).serial]
      else { continue }  // The reference view reports the bad path (R17, R5).
      reconfiguring = (cell, position)
      let configured = dataSource.cell(at: position, in: self)
      reconfiguring = nil
      if configured !== cell {
        // The class changed (an error is recorded); UIKit would have crashed, the host swaps the cell.
        cellObjects[before.cell(at: position).serial] = configured
      }
    }
  }

  private func recycleAll() {
    for view in cellObjects.values { recycle(view) }
    for supplementary in headers.values { recycle(supplementary.view) }
    for supplementary in footers.values { recycle(supplementary.view) }
    cellObjects = [:]
    headers = [:]
    footers = [:]
  }

  /// Gives every new cell a configured cell object, recycles the objects of cells that left, and asks
  /// for the headers and footers of new sections and of `reconfiguring` ones.
  private func refreshViews(newSectionsOnly: Bool, reconfiguring: Set<Int> = []) {
    var alive = Set<Int>()
    for (sectionIndex, section) in reference.sections.enumerated() {
      for (itemIndex, cell) in section.cells.enumerated() {
        alive.insert(cell.serial)
        if cellObjects[cell.serial] == nil, let dataSource {
          let position = ItemPosition(section: sectionIndex, item: itemIndex)
          cellObjects[cell.serial] = dataSource.cell(at: position, in: self)
          dataSource.willDisplayItem(at: position)
        }
      }
      if !newSectionsOnly || headers[section.serial] == nil || reconfiguring.contains(section.serial) {
        recycle(headers[section.serial]?.view)
        recycle(footers[section.serial]?.view)
        headers[section.serial] = supplementary(.header, at: sectionIndex)
        footers[section.serial] = supplementary(.footer, at: sectionIndex)
      }
    }
    for (serial, view) in cellObjects where !alive.contains(serial) {
      cellObjects[serial] = nil
      recycle(view)
    }
    let sectionSerials = Set(reference.sections.map(\.serial))
    for (serial, header) in headers where !sectionSerials.contains(serial) { recycle(header.view) }
    for (serial, footer) in footers where !sectionSerials.contains(serial) { recycle(footer.view) }
    headers = headers.filter { sectionSerials.contains($0.key) }
    footers = footers.filter { sectionSerials.contains($0.key) }
  }

  private func recycle(_ view: ReferenceReusableView?) {
    if let view { reusePool[view.reusePoolKey, default: []].append(view) }
  }

  private func supplementary(_ kind: SupplementaryKind, at index: Int) -> Supplementary {
    guard let dataSource else { return Supplementary() }
    let position = ItemPosition(section: index, item: 0)
    return Supplementary(
      title: kind == .header
        ? dataSource.headerTitle(inSection: index) : dataSource.footerTitle(inSection: index),
      view: dataSource.supplementaryView(ofKind: kind, at: position, in: self))
  }
}

/// One operation of a batch and the animation it was performed with.
public struct AnimatedOperation: Hashable, Sendable, CustomStringConvertible {
  /// The kinds of operation that take an animation.
  public enum Kind: String, Hashable, Sendable {
    case deleteSections, insertSections, reloadSections, deleteItems, insertItems, reloadItems
  }

  /// What was done.
  public let kind: Kind
  /// The section, for section operations.
  public let section: Int?
  /// The position, for item operations.
  public let item: ItemPosition?
  /// The animation.
  public let animation: ListAnimation

  /// A section operation.
  public init(_ kind: Kind, section: Int, _ animation: ListAnimation) {
    self.kind = kind
    self.section = section
    self.item = nil
    self.animation = animation
  }

  /// An item operation.
  public init(_ kind: Kind, item: ItemPosition, _ animation: ListAnimation) {
    self.kind = kind
    self.section = nil
    self.item = item
    self.animation = animation
  }

  /// `insertItems [0, 1] fade`.
  public var description: String {
    "\(kind.rawValue) \(item.map { "\($0)" } ?? section.map { "\($0)" } ?? "") \(animation)"
  }
}
