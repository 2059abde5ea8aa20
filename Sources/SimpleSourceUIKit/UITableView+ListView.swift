// UITableView as a ListView: registration, dequeue and batch updates, forwarded to UIKit. Apple platforms only.

#if canImport(UIKit) && !os(watchOS) && !os(tvOS)
  public import SimpleSourceCore
  public import SimpleSourceViews
  public import UIKit

  /// How a table view makes a cell, header or footer for a reuse identifier.
  public enum TableViewReuseMethod {
    /// Registers the class the configuration closure takes.
    case `class`
    /// Registers a nib whose top-level object is the view.
    case nib(UINib)
    /// A prototype cell in the storyboard; there is nothing to register.
    case storyboard
    /// A built-in `UITableViewCell.CellStyle` (cells only): a `UITableViewCell` subclass of that style is
    /// registered, so the table makes and reuses the cells and they are dequeued with their index path,
    /// as `reconfigureRows(at:)` (the default refresh) requires.
    case style(UITableViewCell.CellStyle)
  }

  /// The cells the `.style` reuse method registers: a plain `UITableViewCell` made with one built-in style.
  enum StyledTableViewCells {
    /// The class that makes cells of `style` (an `if` chain, not a `switch`, so a style a newer SDK adds
    /// needs no `@unknown default`, which the exhaustive stand-in would warn about).
    @MainActor
    static func cellClass(for style: UITableViewCell.CellStyle) -> UITableViewCell.Type {
      if style == .value1 { return Value1.self }
      if style == .value2 { return Value2.self }
      if style == .subtitle { return Subtitle.self }
      return Default.self
    }

    /// A cell made with its class's ``cellStyle``, whatever style the table asks for.
    class Styled: UITableViewCell {
      class var cellStyle: UITableViewCell.CellStyle { .default }
      override init(style: UITableViewCell.CellStyle, reuseIdentifier: String?) {
        super.init(style: Self.cellStyle, reuseIdentifier: reuseIdentifier)
      }
      required init?(coder: NSCoder) { super.init(coder: coder) }
    }
    final class Default: Styled {}
    final class Value1: Styled { override class var cellStyle: UITableViewCell.CellStyle { .value1 } }
    final class Value2: Styled { override class var cellStyle: UITableViewCell.CellStyle { .value2 } }
    final class Subtitle: Styled { override class var cellStyle: UITableViewCell.CellStyle { .subtitle } }
  }

  extension UITableView: ListView {
    /// Table cells.
    public typealias Cell = UITableViewCell
    /// Table headers and footers.
    public typealias SupplementaryView = UITableViewHeaderFooterView
    /// Class, nib, storyboard prototype or built-in style.
    public typealias ReuseMethod = TableViewReuseMethod

    /// Whether the table is in a window.
    /// - Complexity: O(1).
    public var isOnScreen: Bool { window != nil }

    /// Performs one stage with `.automatic` row animations, or none.
    /// - Complexity: O(*k*) for the stage's *k* calls, plus UIKit's own work.
    public func performBatchUpdates(
      _ update: StageCalls, animated: Bool, updateData: @escaping @MainActor () -> Void
    ) {
      if animated {
        performBatchUpdates(update, rowAnimation: .automatic, updateData: updateData)
      } else {
        UIView.performWithoutAnimation {
          performBatchUpdates(update, rowAnimation: .none, updateData: updateData)
        }
      }
    }

    /// Performs one stage with `rowAnimation`: swaps the data first thing inside the update block (S5),
    /// makes UIKit's calls, then configures the visible headers and footers of
    /// ``StageCalls/reconfigureSections`` again in place.
    /// - Complexity: O(*k*) for the stage's *k* calls, plus UIKit's own work.
    public func performBatchUpdates(
      _ update: StageCalls, rowAnimation: UITableView.RowAnimation,
      updateData: @escaping @MainActor () -> Void
    ) {
      performBatchUpdates(update, rowAnimations: RowAnimations(all: rowAnimation), updateData: updateData)
    }

    /// Performs one stage with the row animation `animations` gives each kind of change.
    /// - Complexity: O(*k*) for the stage's *k* calls, plus UIKit's own work.
    public func performBatchUpdates(
      _ update: StageCalls, animations: ChangeAnimations, updateData: @escaping @MainActor () -> Void
    ) {
      performBatchUpdates(update, rowAnimations: RowAnimations(animations), updateData: updateData)
    }

    private func performBatchUpdates(
      _ update: StageCalls, rowAnimations animation: RowAnimations,
      updateData: @escaping @MainActor () -> Void
    ) {
      performBatchUpdates(
        { [self] in
          updateData()
          deleteSections(IndexSet(update.deleteSections), with: animation.deleteSections)
          insertSections(IndexSet(update.insertSections), with: animation.insertSections)
          reloadSections(IndexSet(update.reloadSections), with: animation.reloadSections)
          for move in update.moveSections { moveSection(move.from, toSection: move.to) }
          deleteRows(at: update.deleteItems.map(\.indexPath), with: animation.deleteItems)
          insertRows(at: update.insertItems.map(\.indexPath), with: animation.insertItems)
          reloadRows(at: update.reloadItems.map(\.indexPath), with: animation.reloadItems)
          for move in update.moveItems { moveRow(at: move.from.indexPath, to: move.to.indexPath) }
          if !update.reconfigureItems.isEmpty {
            reconfigureRows(at: update.reconfigureItems.map(\.indexPath))
          }
        }, completion: nil)
      if !update.reconfigureSections.isEmpty, let owner = dataSource as? any HeaderFooterReconfiguring {
        owner.reconfigureHeadersAndFooters(ofSections: update.reconfigureSections, in: self)
      }
    }

    /// Registers a cell class, a nib, or a class of a built-in style; storyboard prototypes need nothing.
    /// - Complexity: O(1).
    public func registerCell(_ method: TableViewReuseMethod, cellClass: AnyClass, reuseIdentifier: String) {
      switch method {
      case .class: register(cellClass, forCellReuseIdentifier: reuseIdentifier)
      case .nib(let nib): register(nib, forCellReuseIdentifier: reuseIdentifier)
      case .style(let style):
        register(StyledTableViewCells.cellClass(for: style), forCellReuseIdentifier: reuseIdentifier)
      case .storyboard: break
      }
    }

    /// Dequeues a cell for `reuseIdentifier` at `position`: always with its index path, so that
    /// `reconfigureRows(at:)` gets back the cell it shows there.
    /// - Complexity: O(1), plus UIKit's dequeue.
    public func dequeueCell(
      _ method: TableViewReuseMethod, reuseIdentifier: String, at position: ItemPosition
    )
      -> UITableViewCell
    {
      dequeueReusableCell(withIdentifier: reuseIdentifier, for: position.indexPath)
    }

    /// Registers a header or footer class or nib. A table has no other kinds of supplementary view.
    /// - Complexity: O(1).
    public func registerSupplementaryView(
      _ method: TableViewReuseMethod, viewClass: AnyClass, kind: SupplementaryKind, reuseIdentifier: String
    ) {
      switch method {
      case .class: register(viewClass, forHeaderFooterViewReuseIdentifier: reuseIdentifier)
      case .nib(let nib): register(nib, forHeaderFooterViewReuseIdentifier: reuseIdentifier)
      case .storyboard, .style:
        preconditionFailure("SimpleSource: table headers and footers are registered by class or nib")
      }
    }

    /// Dequeues a header or footer view.
    /// - Complexity: O(1), plus UIKit's dequeue.
    public func dequeueSupplementaryView(
      _ method: TableViewReuseMethod, kind: SupplementaryKind, reuseIdentifier: String,
      at position: ItemPosition
    ) -> UITableViewHeaderFooterView {
      guard let view = dequeueReusableHeaderFooterView(withIdentifier: reuseIdentifier) else {
        preconditionFailure("SimpleSource: no header or footer view is registered for '\(reuseIdentifier)'")
      }
      return view
    }

    /// Each stage animated with `animation`; changed rows reconfigured in place (reloaded when their cell
    /// class changes). Falls back to `reloadData()` off screen and above `largeBatchThreshold` changes.
    /// - Complexity: O(1).
    public func defaultViewUpdate<Section: SectionType>(
      _ animation: UITableView.RowAnimation = .automatic, largeBatchThreshold: Int? = 500
    ) -> ViewUpdate<Section> {
      .custom(largeBatchThreshold: largeBatchThreshold) { context in
        guard let table = context.view as? UITableView else { return context.performStages() }
        context.performStages { update, updateData in
          table.performBatchUpdates(update, rowAnimation: animation, updateData: updateData)
        }
      }
    }

    /// Every batch with `reloadData()`.
    /// - Complexity: O(1).
    public func unanimatedViewUpdate<Section: SectionType>() -> ViewUpdate<Section> { .unanimated }
  }

  /// A table's data source that can configure visible headers and footers again in place.
  @MainActor
  protocol HeaderFooterReconfiguring: AnyObject {
    func reconfigureHeadersAndFooters(ofSections sections: [Int], in tableView: UITableView)
  }
  /// The row animation of each kind of change.
  struct RowAnimations {
    var insertItems, deleteItems, reloadItems, insertSections, deleteSections,
      reloadSections: UITableView.RowAnimation

    init(all: UITableView.RowAnimation) {
      (insertItems, deleteItems, reloadItems) = (all, all, all)
      (insertSections, deleteSections, reloadSections) = (all, all, all)
    }

    init(_ animations: ChangeAnimations) {
      insertItems = animations.insertItems.rowAnimation
      deleteItems = animations.deleteItems.rowAnimation
      reloadItems = animations.reloadItems.rowAnimation
      insertSections = animations.insertSections.rowAnimation
      deleteSections = animations.deleteSections.rowAnimation
      reloadSections = animations.reloadSections.rowAnimation
    }
  }

  extension ListAnimation {
    /// The table view's row animation.
    package var rowAnimation: UITableView.RowAnimation {
      switch self {
      case .automatic: .automatic
      case .fade: .fade
      case .right: .right
      case .left: .left
      case .top: .top
      case .bottom: .bottom
      case .middle: .middle
      case .none: .none
      }
    }
  }
#endif
